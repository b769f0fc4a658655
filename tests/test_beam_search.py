"""Beam search: width 1 = greedy, sorted beams, frozen finished scores, batching, and the exact k best
when the beam is wide enough to see every output."""

import keras
import numpy as np
import pytest
from keras import ops

from course_lib.data import reversal
from course_lib.decoding import greedy_decode
from course_lib.decoding.beam import beam_function, beam_search, beam_search_model
from course_lib.models import Seq2Seq

PAD, GO, STOP, A, B = 0, 1, 2, 3, 4


class TableDecoder:
    """A decoder whose next-token distribution depends only on the previous token."""

    has_attention = True

    def __init__(self, table):
        self.log_table = np.log(np.asarray(table, dtype="float32") + 1e-12)

    def step(self, previous_tokens, state, memory, training=None):
        logits = ops.take(ops.convert_to_tensor(self.log_table), previous_tokens, axis=0)
        weights = ops.cast(memory["mask"], "float32") / ops.cast(ops.shape(memory["mask"])[1], "float32")
        return logits, state + 1.0, weights


def _table():
    table = np.zeros((5, 5))
    table[GO] = [0, 0, 0, 0.6, 0.4]  # greedy takes "a" ...
    table[A] = [0, 0, 0.4, 0.3, 0.3]  # ... and then ends at best with 0.6 * 0.4 = 0.24
    table[B] = [0, 0, 0.9, 0.05, 0.05]  # "b <stop>" has 0.4 * 0.9 = 0.36
    table[STOP] = [1, 0, 0, 0, 0]
    table[PAD] = [1, 0, 0, 0, 0]
    return table


def test_beam_finds_what_greedy_misses_and_finished_scores_are_frozen():
    decoder = TableDecoder(_table())
    memory = {"mask": np.ones((2, 3), bool)}
    state = np.zeros((2, 4), "float32")
    greedy_tokens, _, greedy_log_prob = greedy_decode(decoder, memory, state, GO, STOP, 4)
    assert np.asarray(greedy_tokens)[0].tolist() == [A, STOP, PAD, PAD]
    result = beam_search(decoder, memory, state, GO, STOP, max_length=4, beam_width=2, length_penalty=0.0)
    tokens = np.asarray(result["tokens"])
    assert tokens.shape == (2, 2, 4)
    assert tokens[0, 0].tolist() == [B, STOP, PAD, PAD]
    assert tokens[0, 1].tolist() == [A, STOP, PAD, PAD]
    # The finished hypotheses kept exactly their log-probability through the padding steps.
    np.testing.assert_allclose(np.asarray(result["log_probs"])[0], np.log([0.36, 0.24]), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(result["scores"])[0], np.log([0.36, 0.24]), rtol=1e-5)
    assert np.asarray(result["lengths"])[0].tolist() == [2, 2]
    assert float(np.asarray(greedy_log_prob)[0]) == pytest.approx(np.log(0.24), rel=1e-5)
    alignments = np.asarray(result["alignments"])
    assert alignments.shape == (2, 2, 4, 3)
    np.testing.assert_allclose(alignments[0, 0, :2].sum(-1), 1.0, rtol=1e-6)
    assert np.all(alignments[0, :, 2:] == 0)  # nothing attended after <stop>


def test_length_penalty_divides_by_length():
    table = _table()
    table[GO] = [0, 0, 0.5, 0.5, 0]  # "<stop>" at once (0.5) or "a ..." (0.5 * 0.4 = 0.2 with stop)
    decoder = TableDecoder(table)
    memory = {"mask": np.ones((1, 2), bool)}
    state = np.zeros((1, 1), "float32")
    raw = beam_search(decoder, memory, state, GO, STOP, 3, beam_width=2, length_penalty=0.0)
    assert np.asarray(raw["tokens"])[0, 0].tolist() == [STOP, PAD, PAD]
    normalised = beam_search(decoder, memory, state, GO, STOP, 3, beam_width=3, length_penalty=1.0)
    scores = np.asarray(normalised["scores"])[0]
    log_probs = np.asarray(normalised["log_probs"])[0]
    lengths = np.asarray(normalised["lengths"])[0]
    np.testing.assert_allclose(scores, log_probs / lengths, rtol=1e-5)
    assert np.all(np.diff(scores) <= 1e-6)


@pytest.fixture(scope="module")
def trained_model():
    keras.utils.set_random_seed(0)
    model = Seq2Seq(
        reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=16, units=32,
        bidirectional=True, deep_output=True, max_output_length=10,
    )
    model.compile(keras.optimizers.Adam(0.01))
    model.fit(reversal.as_dataset(25, batch_size=32, min_length=3, max_length=6), epochs=1, verbose=0)
    source, _ = reversal.test_set(6, count=40)
    source[:10, 3:] = 0  # some shorter, padded sources in the same batch
    return model, source


def test_width_one_equals_greedy_exactly(trained_model):
    model, source = trained_model
    greedy = model.generate(source, max_length=10)
    beam = beam_search_model(model, source, max_length=10, beam_width=1, length_penalty=1.0)
    np.testing.assert_array_equal(beam["tokens"], greedy["tokens"])
    if keras.backend.backend() == "tensorflow":  # the same kernels in the same order: bit for bit
        np.testing.assert_array_equal(beam["alignments"], greedy["alignments"])
    else:  # JAX: XLA compiles greedy decoding as one program and fuses differently (measured <= 1e-7)
        np.testing.assert_allclose(beam["alignments"], greedy["alignments"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(beam["log_probs"], greedy["scores"], rtol=1e-5, atol=1e-5)


def test_beams_sorted_rescored_and_never_worse_than_greedy(trained_model):
    model, source = trained_model
    greedy = model.generate(source, max_length=10)
    result = model.generate(source, max_length=10, beam_width=4, length_penalty=0.0)
    assert result["beam_tokens"].shape == (40, 4, 10)
    assert result["beam_alignments"].shape == (40, 4, 10, source.shape[1])
    assert np.all(np.diff(result["beam_scores"], axis=1) <= 1e-5)
    np.testing.assert_array_equal(result["tokens"], result["beam_tokens"][:, 0])
    # With raw log-probabilities, beam search can only improve on greedy.
    assert np.all(result["scores"] >= greedy["scores"] - 1e-4)
    # Each beam's log-probability equals the teacher-forced log-probability of its tokens.
    tokens = result["beam_tokens"].reshape(-1, 10)
    lengths = result["beam_lengths"].reshape(-1)
    target_in = np.concatenate([np.full((len(tokens), 1), reversal.GO), tokens[:, :-1]], axis=1)
    logits, _ = model.forward(np.repeat(source, 4, axis=0), target_in.astype("int32"))
    log_softmax = np.asarray(ops.log_softmax(logits, axis=-1))
    picked = np.take_along_axis(log_softmax, tokens[:, :, None], axis=-1)[..., 0]
    steps = np.arange(10)[None, :] < lengths[:, None]
    rescored = (picked * steps).sum(axis=1)
    np.testing.assert_allclose(rescored, result["beam_log_probs"].reshape(-1), rtol=1e-4, atol=1e-4)
    # Padding after <stop>, zero attention there.
    for row, length in zip(tokens, lengths):
        assert np.all(row[length:] == reversal.PAD)
    after = np.arange(10)[None, None, :] >= result["beam_lengths"][:, :, None]
    assert np.all(result["beam_alignments"][after] == 0)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="counts tf.function traces")
def test_compiled_once_for_all_batch_shapes(trained_model):
    model, source = trained_model
    function = beam_function(model, 10, 3, 1.0)
    for batch, length in [(5, 6), (7, 4), (2, 9)]:
        result = beam_search_model(model, np.ones((batch, length), "int32") * 5, 10, 3, 1.0)
        assert result["beam_tokens"].shape == (batch, 3, 10)
    assert function.experimental_get_tracing_count() == 1


def test_bad_arguments(trained_model):
    model, source = trained_model
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(TableDecoder(_table()), {"mask": np.ones((1, 2), bool)}, np.zeros((1, 1), "float32"), GO, STOP, 3, 0)
    with pytest.raises(ValueError, match="integer array"):
        beam_search_model(model, np.ones((2, 3), "float32"), 10, 2)


@pytest.mark.parametrize(
    "options, received",
    [((4.7, 2, 1.0), "max_length=4.7"), ((4, 2.9, 1.0), "beam_width=2.9"), ((4, 2, True), "length_penalty=True")],
)
def test_beam_search_model_refuses_options_it_used_to_convert(trained_model, options, received):
    # int() and float() used to decode 4 steps for 4.7, keep 2 beams for 2.9 and take True for 1.0.
    model, _ = trained_model
    with pytest.raises(ValueError, match=f"Received: {received}"):
        beam_search_model(model, np.array([[5, 6, 7]], "int32"), *options)
    with pytest.raises(ValueError, match=f"Received: {received}"):
        beam_function(model, *options)


@pytest.mark.parametrize(
    "source, received",
    [([[5, -1, 7]], "source with id -1"), (np.zeros((1, 0)), r"source.shape=\(1, 0\)")],
)
def test_beam_search_model_checks_its_sources(trained_model, source, received):
    # Id -1 used to read the last embedding row; an empty source failed inside the encoder.
    model, _ = trained_model
    with pytest.raises(ValueError, match=f"Received: {received}"):
        beam_search_model(model, np.asarray(source, "int32"), 4, 2)


def test_a_length_penalty_past_the_float32_range_is_refused():
    # 40 ** 30 overflows float32: every score used to be -0.0 and the beams arbitrary.
    decoder, memory, state = TableDecoder(_table()), {"mask": np.ones((1, 2), bool)}, np.zeros((1, 1), "float32")
    with pytest.raises(ValueError, match=r"overflows float32. Received: length_penalty=30.0, max_length=40"):
        beam_search(decoder, memory, state, GO, STOP, 40, 2, length_penalty=30.0)
    scores = np.asarray(beam_search(decoder, memory, state, GO, STOP, 40, 2, length_penalty=20.0)["scores"])
    assert np.all(scores < 0)  # 40 ** 20 = 1.1e32 is still in range


class Float16Decoder:
    """Float16 logits and state, as a decoder under the mixed_float16 policy gives."""

    def __init__(self, seed=0, vocab=6):
        table = np.random.default_rng(seed).normal(size=(vocab, vocab)).astype("float32") * 0.3
        table[:, STOP] -= 2.0  # long outputs: many log-probabilities to add up
        self.table = table

    def step(self, previous_tokens, state, memory, training=None):
        logits = ops.take(ops.convert_to_tensor(self.table.astype("float16")), previous_tokens, axis=0)
        return logits, state, ops.zeros((ops.shape(previous_tokens)[0], 3), "float16")


def test_float16_decoders_are_scored_in_float32():
    decoder = Float16Decoder()
    state, memory = np.zeros((1, 2), "float16"), {"mask": np.ones((1, 3), bool)}
    # The same float16 logits, summed in float64.
    log_table = decoder.table.astype("float16").astype("float64")
    log_table = log_table - np.log(np.exp(log_table).sum(axis=1, keepdims=True))
    tokens, _, total = greedy_decode(decoder, memory, state, GO, STOP, 30)
    tokens = np.asarray(tokens)[0]
    expected = sum(log_table[p, t] for p, t in zip([GO, *tokens[:-1]], tokens) if p != STOP and p != PAD)
    assert keras.backend.standardize_dtype(total.dtype) == "float32"
    np.testing.assert_allclose(np.asarray(total)[0], expected, rtol=1e-4)
    beam = beam_search(decoder, memory, state, GO, STOP, 30, beam_width=1, length_penalty=0.0)
    assert {keras.backend.standardize_dtype(beam[k].dtype) for k in ("log_probs", "scores")} == {"float32"}
    np.testing.assert_allclose(np.asarray(beam["log_probs"])[0, 0], expected, rtol=1e-4)


def test_the_beam_search_cache_does_not_keep_a_model_alive():
    import gc
    import weakref

    model = Seq2Seq(12, 10, embedding_dim=4, units=6)
    model.generate(np.array([[5, 6, 7]], "int32"), beam_width=2, max_length=3)
    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None


@pytest.mark.parametrize("option", [1, 2])
def test_width_one_equals_greedy_for_the_plain_decoder(option):
    """Both start from the decoder's own s_0 (`start_state`: h_T for option 1, zeros for option 2)."""
    keras.utils.set_random_seed(0)
    model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16, attention=False,
                    option=option, max_output_length=8)
    source, _ = reversal.test_set(6, count=10)
    greedy = model.generate(source, max_length=8)
    beam = beam_search_model(model, source, max_length=8, beam_width=1, length_penalty=1.0)
    np.testing.assert_array_equal(beam["tokens"], greedy["tokens"])
    np.testing.assert_allclose(beam["log_probs"], greedy["scores"], rtol=1e-5, atol=1e-5)


def test_decoding_never_writes_go_or_pad_even_when_they_score_best():
    """<GO> and <pad> are not words: greedy and beam search skip them, here where the table ranks them first."""
    table = np.zeros((5, 5))
    table[GO] = [0.5, 0.3, 0.0, 0.15, 0.05]  # <pad>, then <GO>, then "a"
    table[A] = [0.1, 0.6, 0.2, 0.05, 0.05]  # <GO> first, then <stop>
    table[B] = table[STOP] = table[PAD] = [1, 0, 0, 0, 0]
    decoder = TableDecoder(table)
    memory = {"mask": np.ones((1, 3), bool)}
    state = np.zeros((1, 4), "float32")
    greedy_tokens, _, _ = greedy_decode(decoder, memory, state, GO, STOP, 4)
    assert np.asarray(greedy_tokens)[0].tolist() == [A, STOP, PAD, PAD]
    beams = np.asarray(beam_search(decoder, memory, state, GO, STOP, max_length=4, beam_width=2)["tokens"])[0]
    for row in beams:
        written = row[: list(row).index(STOP) + 1] if STOP in row else row
        assert PAD not in written and GO not in written, beams


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_a_full_width_beam_over_two_steps_returns_the_exact_k_best(length_penalty):
    """With `max_length=2` and a beam as wide as the writable tokens (<stop> and 7 words), step 1
    keeps every one-token prefix, so step 2 sees every possible output: `[<stop>]`, `[a, <stop>]` and
    the unfinished `[a, b]`, 1 + 7 * 8 = 57 of them. The k beams must be exactly the k best of those,
    found here by scoring each one with a teacher-forced pass."""
    vocab = 10
    keras.utils.set_random_seed(5)
    model = Seq2Seq(12, vocab, embedding_dim=8, units=16, bidirectional=True)
    model.build()
    rng = np.random.default_rng(5)
    model.set_weights([rng.normal(scale=0.8, size=w.shape).astype("float32") for w in model.get_weights()])
    source = np.array([[4, 5, 6, 7], [8, 9, 0, 0]], "int32")
    words = list(range(A, vocab))
    outputs = [[STOP]] + [[a, b] for a in words for b in [STOP] + words]
    width = vocab - 2
    result = model.generate(source, max_length=2, beam_width=width, length_penalty=length_penalty)
    for row in range(len(source)):
        target_in = np.array([[GO, output[0]] for output in outputs], "int32")
        logits, _ = model.forward(np.repeat(source[row:row + 1], len(outputs), axis=0), target_in)
        log_softmax = np.asarray(ops.log_softmax(logits, axis=-1))  # (57, 2, vocab)
        log_probs = np.array([sum(log_softmax[i, t, token] for t, token in enumerate(output))
                              for i, output in enumerate(outputs)])
        scores = log_probs / np.array([len(output) for output in outputs], "float64") ** length_penalty
        best = np.argsort(-scores)[:width + 1]
        assert scores[best[width - 1]] - scores[best[width]] > 1e-4  # no tie at the edge of the beam
        found = [[int(t) for t in tokens if t != PAD] for tokens in result["beam_tokens"][row]]
        assert found == [outputs[i] for i in best[:width]]
        np.testing.assert_allclose(result["beam_log_probs"][row], log_probs[best[:width]], atol=1e-4)
        np.testing.assert_allclose(result["beam_scores"][row], scores[best[:width]], atol=1e-4)
