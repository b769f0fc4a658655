"""Encoders, decoders and the Seq2Seq model: shapes, masking, saving, decoding."""

import os
import re
import tempfile

import keras
import numpy as np
import pytest

from course_lib.decoders import AttentionGRUDecoder, PlainGRUDecoder
from course_lib.decoding import greedy_decode
from course_lib.encoders import GRUEncoder
from course_lib.losses import MaskedTokenAccuracy, MaskedTokenLoss
from course_lib.models import Seq2Seq
from layer_testing import check_output_shapes, check_reload_keeps_training, needs_float64, run_layer_test

RNG = np.random.default_rng(1)


def _tokens(batch, length, vocab=12, pad_from=None):
    tokens = RNG.integers(4, vocab, size=(batch, length)).astype("int32")
    if pad_from is not None:
        for row, start in enumerate(pad_from):
            tokens[row, start:] = 0
    return tokens


@pytest.mark.parametrize("bidirectional", [False, True])
def test_gru_encoder_layer_checks_and_padding(bidirectional):
    source = _tokens(3, 6, pad_from=[4, 6, 2])
    padded = np.concatenate([source, np.zeros((3, 3), "int32")], axis=1)

    def compare(original, with_padding):
        np.testing.assert_allclose(with_padding[0][:, :6], original[0], atol=1e-5)  # h_j
        np.testing.assert_allclose(with_padding[1], original[1], atol=1e-5)  # s_0

    directions = 2 if bidirectional else 1
    run_layer_test(
        GRUEncoder,
        {"vocab_size": 12, "embedding_dim": 5, "units": 8, "bidirectional": bidirectional},
        {"source": source},
        expected_output_shapes=[(3, 6, 8 * directions), (3, 8), (3, 6)],
        padding_check=({"source": padded}, compare),
    )


def test_bidirectional_bridge_is_tanh_of_both_final_states():
    encoder = GRUEncoder(12, 5, 8, bidirectional=True, decoder_units=6)
    outputs, state, _ = encoder(_tokens(2, 4))
    assert tuple(state.shape) == (2, 6)
    assert np.all(np.abs(np.asarray(state)) <= 1.0)
    kernel = encoder.bridge.kernel
    assert tuple(kernel.shape) == (16, 6)  # W_bridge acts on [h_fwd; h_bwd]


def _decoder_inputs(batch=2, tgt_len=4, src_len=5, value_dim=8, units=8):
    return {
        "target_inputs": _tokens(batch, tgt_len, vocab=10),
        "encoder_outputs": RNG.normal(size=(batch, src_len, value_dim)).astype("float32"),
        "initial_state": RNG.normal(size=(batch, units)).astype("float32"),
        "source_mask": np.array([[True] * 3 + [False] * (src_len - 3), [True] * src_len]),
    }


@pytest.mark.parametrize("deep_output,conditional", [(False, False), (True, False), (True, True)])
def test_attention_decoder_layer_checks(deep_output, conditional):
    inputs = _decoder_inputs()
    padded = dict(inputs)
    padded["encoder_outputs"] = np.concatenate([inputs["encoder_outputs"], np.full((2, 2, 8), 9.0, "float32")], axis=1)
    padded["source_mask"] = np.concatenate([inputs["source_mask"], np.zeros((2, 2), bool)], axis=1)

    def compare(original, with_padding):
        np.testing.assert_allclose(with_padding[0], original[0], atol=1e-5)
        np.testing.assert_allclose(with_padding[1][:, :, :5], original[1], atol=1e-6)
        assert np.all(with_padding[1][:, :, 5:] == 0)

    layer = run_layer_test(
        AttentionGRUDecoder,
        {"vocab_size": 10, "embedding_dim": 6, "units": 8, "attention_units": 7, "deep_output": deep_output,
         "conditional": conditional},
        inputs,
        expected_output_shapes=[(2, 4, 10), (2, 4, 5)],
        padding_check=(padded, compare),
    )
    _, alignments = layer(**inputs)
    alignments = np.asarray(alignments)
    np.testing.assert_allclose(alignments.sum(-1), 1.0, atol=1e-5)
    assert np.all(alignments[0, :, 3:] == 0.0)


DECODERS = {  # every decoder the course has, as a function that makes a small one
    "attention": lambda: AttentionGRUDecoder(10, 6, 8, deep_output=True),
    "attention, conditional step": lambda: AttentionGRUDecoder(10, 6, 8, deep_output=True, conditional=True),
    "plain, option 1": lambda: PlainGRUDecoder(10, 6, 8, option=1),
    "plain, option 2": lambda: PlainGRUDecoder(10, 6, 8, option=2),
}


@pytest.mark.parametrize("kind", list(DECODERS))
def test_teacher_forced_call_equals_stepping_by_hand(kind):
    inputs = _decoder_inputs()
    decoder = DECODERS[kind]()
    logits, alignments = decoder(**inputs)
    memory = decoder.prepare_memory(inputs["encoder_outputs"], inputs["initial_state"], inputs["source_mask"])
    state = decoder.start_state(inputs["initial_state"])
    for t in range(inputs["target_inputs"].shape[1]):
        step_logits, state, weights = decoder.step(inputs["target_inputs"][:, t], state, memory)
        np.testing.assert_allclose(step_logits, np.asarray(logits)[:, t], atol=1e-5)
        np.testing.assert_allclose(weights, np.asarray(alignments)[:, t], atol=1e-6)


def test_teacher_forcing_ratio_below_one_feeds_predictions_in_training_only():
    inputs = _decoder_inputs(tgt_len=6)
    decoder = AttentionGRUDecoder(10, 6, 8, teacher_forcing_ratio=0.0, seed=3)
    forced, _ = decoder(**inputs, training=False)
    sampled, _ = decoder(**inputs, training=True)
    np.testing.assert_allclose(np.asarray(sampled)[:, 0], np.asarray(forced)[:, 0], atol=1e-5)  # <GO> first
    assert not np.allclose(np.asarray(sampled)[:, 1:], np.asarray(forced)[:, 1:])
    with pytest.raises(ValueError, match="teacher_forcing_ratio=1.5"):
        AttentionGRUDecoder(10, 6, 8, teacher_forcing_ratio=1.5)


def test_scheduled_sampling_never_feeds_back_the_ids_decoding_never_writes():
    """Fed the raw arg-max, training read <pad> (or <GO>) where greedy and beam decoding never write it."""
    inputs = _decoder_inputs(tgt_len=6)
    for never_fed in ((), (0, 1)):
        decoder = AttentionGRUDecoder(10, 6, 8, teacher_forcing_ratio=0.0, seed=3, never_fed_ids=never_fed)
        decoder(**inputs, training=False)
        kernel, bias = decoder.output_layer.get_weights()
        bias[0], bias[1] = 50.0, 40.0  # <pad>, then <GO>: the arg-max at every step
        decoder.output_layer.set_weights([kernel, bias])
        sampled, _ = decoder(**inputs, training=True)
        # the same steps by hand, feeding the best id outside `never_fed`
        memory = decoder.prepare_memory(inputs["encoder_outputs"], inputs["initial_state"], inputs["source_mask"])
        state, token, by_hand = inputs["initial_state"], inputs["target_inputs"][:, 0], []
        for _ in range(6):
            logits, state, _ = decoder.step(token, state, memory)
            by_hand.append(np.asarray(logits))
            allowed = np.asarray(logits).copy()
            allowed[:, list(never_fed)] = -np.inf
            token = allowed.argmax(-1).astype("int32")
        np.testing.assert_allclose(np.asarray(sampled), np.stack(by_hand, axis=1), atol=1e-4)
    assert decoder.get_config()["never_fed_ids"] == [0, 1]
    with pytest.raises(ValueError, match=r"Received: never_fed_ids=\(10,\)"):
        AttentionGRUDecoder(10, 6, 8, never_fed_ids=(10,))


@pytest.mark.parametrize("option", [1, 2])
def test_plain_decoder_layer_checks(option):
    inputs = _decoder_inputs()
    inputs.pop("source_mask")
    run_layer_test(
        PlainGRUDecoder,
        {"vocab_size": 10, "embedding_dim": 6, "units": 8, "option": option},
        inputs,
        expected_output_shapes=[(2, 4, 10), (2, 4, 5)],
    )


def test_plain_option_1_depends_on_s0_only_through_the_start_and_option_2_at_every_step():
    """Stepping by hand from the same `s_{t-1}` with another encoding `h_T` in the memory: option 1 gives the
    same step (h_T is `s_0` and nothing more), option 2 another one at every step (h_T is in every input)."""
    inputs = _decoder_inputs()
    target, encoder_outputs, encoding = inputs["target_inputs"], inputs["encoder_outputs"], inputs["initial_state"]
    other_encoding = RNG.normal(size=encoding.shape).astype("float32")
    for option in (1, 2):
        decoder = PlainGRUDecoder(10, 6, 8, option=option)
        logits, _ = decoder(target, encoder_outputs, encoding)
        other, _ = decoder(target, encoder_outputs, other_encoding)
        assert not np.allclose(logits, other)  # both options are conditioned on the encoding
        memory = decoder.prepare_memory(encoder_outputs, encoding)
        other_memory = decoder.prepare_memory(encoder_outputs, other_encoding)
        state = decoder.start_state(encoding)
        if option == 1:
            np.testing.assert_allclose(state, encoding)  # s_0 = h_T
        else:
            assert np.all(np.asarray(state) == 0.0)  # s_0 = 0: h_T is not in the start
        for t in range(target.shape[1]):
            step_logits, next_state, _ = decoder.step(target[:, t], state, memory)
            np.testing.assert_allclose(step_logits, np.asarray(logits)[:, t], atol=1e-5)  # the call, step by step
            other_step, _, _ = decoder.step(target[:, t], state, other_memory)  # same s_{t-1}, another h_T
            if option == 1:
                np.testing.assert_allclose(other_step, step_logits, atol=1e-6, err_msg=f"option 1, step {t}")
            else:
                assert not np.allclose(other_step, step_logits), f"option 2 ignores h_T at step {t}"
            state = next_state
    with pytest.raises(ValueError, match="option=3"):
        PlainGRUDecoder(10, 6, 8, option=3)


def _reversal_batch(batch=16, length=5):
    source = RNG.integers(4, 14, size=(batch, length)).astype("int32")
    target_in = np.concatenate([np.ones((batch, 1), "int32"), source[:, ::-1]], axis=1)
    target_out = np.concatenate([source[:, ::-1], np.full((batch, 1), 2, "int32")], axis=1)
    return source, target_in, target_out


@pytest.mark.parametrize("kwargs", [{"attention": True}, {"attention": True, "bidirectional": True, "deep_output": True},
                                    {"attention": True, "bidirectional": True, "encoder_units": 8, "conditional": True},
                                    {"attention": False, "option": 1}, {"attention": False, "option": 2},
                                    {"attention": False, "option": 2, "bidirectional": True}])
def test_seq2seq_fit_evaluate_predict_save_load(kwargs):
    source, target_in, target_out = _reversal_batch()
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6, **kwargs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    history = model.fit({"source": source, "target_in": target_in}, target_out, epochs=3, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    loss, accuracy = model.evaluate({"source": source, "target_in": target_in}, target_out, verbose=0)
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0
    decoded = model.predict(source, verbose=0)
    assert decoded.shape == (16, 6)
    np.testing.assert_array_equal(decoded, model.generate(source)["tokens"])
    with pytest.raises(ValueError, match="integer tensor"):
        model.predict(source.astype("float32"), verbose=0)
    np.testing.assert_array_equal(model.predict(source, verbose=0), decoded)  # the refusal cost nothing
    with pytest.raises(ValueError, match="integer tensor"):
        model.evaluate({"source": source.astype("float32"), "target_in": target_in}, target_out, verbose=0)
    np.testing.assert_allclose(
        model.evaluate({"source": source, "target_in": target_in}, target_out, verbose=0), [loss, accuracy], rtol=1e-5
    )
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        reloaded = keras.models.load_model(path)
    inputs = {"source": source, "target_in": target_in}
    np.testing.assert_allclose(reloaded(inputs), model(inputs), atol=1e-6)
    np.testing.assert_array_equal(reloaded.generate(source)["tokens"], model.generate(source)["tokens"])


@pytest.mark.parametrize("kwargs", [{"attention": True}, {"attention": False, "option": 2}])
def test_a_reloaded_seq2seq_evaluates_alike_and_trains_on(kwargs, tmp_path):
    # As the other models: a compiled Seq2Seq comes back compiled, with its optimizer state, and trains on alike.
    source, target_in, target_out = _reversal_batch(batch=8)
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6, **kwargs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2))
    check_reload_keeps_training(model, {"source": source, "target_in": target_in}, target_out,
                                tmp_path / "seq2seq.keras")


def test_conditional_step_attends_with_the_previous_word_already_read():
    """In the conditional step the query is s'_t = GRU_1(s_{t-1}, e(y_{t-1})), so
    changing only y_{t-1} changes the weights of step t; in the lecture's step it cannot."""
    inputs = _decoder_inputs()
    for conditional in (False, True):
        decoder = AttentionGRUDecoder(10, 6, 8, conditional=conditional)
        memory = decoder.prepare_memory(inputs["encoder_outputs"], inputs["initial_state"], inputs["source_mask"])
        state = inputs["initial_state"]
        _, _, weights_a = decoder.step(np.array([4, 4]), state, memory)
        _, _, weights_b = decoder.step(np.array([7, 7]), state, memory)
        assert np.allclose(weights_a, weights_b) != conditional
    with pytest.raises(ValueError, match="conditional=True, attention=False"):
        Seq2Seq(14, 14, attention=False, conditional=True)


def test_encoder_units_sets_the_annotation_size():
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, encoder_units=8, bidirectional=True)
    source, target_in, _ = _reversal_batch()
    encoder_outputs, initial_state, _ = model.encode(source)
    assert encoder_outputs.shape == (16, 5, 16)  # 2 directions x 8
    assert initial_state.shape == (16, 16)  # bridged to the decoder's size
    assert Seq2Seq.from_config(model.get_config()).encoder_units == 8


def test_greedy_decoding_feeds_back_its_argmax_and_stops():
    source, target_in, _ = _reversal_batch(batch=4)
    model = Seq2Seq(14, 14, embedding_dim=8, units=16)
    decoded = model.generate(source, max_length=7)
    tokens, alignments = decoded["tokens"], decoded["alignments"]
    assert tokens.shape == (4, 7) and alignments.shape == (4, 7, 5)
    # Teacher-force the model on its own greedy output: the argmax must reproduce it.
    fed = np.concatenate([np.ones((4, 1), "int32"), tokens[:, :-1]], axis=1)
    logits, weights = model.forward(source, fed.astype("int32"))
    writable = np.asarray(logits).copy()
    writable[..., :2] = -np.inf  # <pad> (0) and <GO> (1) are never written
    argmax = writable.argmax(-1)
    for row in range(4):
        stop = np.where(tokens[row] == 2)[0]
        end = stop[0] + 1 if len(stop) else 7
        np.testing.assert_array_equal(argmax[row, :end], tokens[row, :end])
        np.testing.assert_allclose(np.asarray(weights)[row, :end], alignments[row, :end], atol=1e-5)
        assert np.all(tokens[row, end:] == 0) and np.all(alignments[row, end:] == 0)


@pytest.mark.parametrize("beam_width", [1, 3])
def test_decoding_never_writes_pad_or_go(beam_width):
    source = _reversal_batch(batch=3)[0]
    model = Seq2Seq(14, 14, embedding_dim=8, units=16)
    model.build()
    bias = np.zeros(14, "float32")
    bias[[0, 1]] = 50.0  # an (untrained) output layer that prefers <pad> and <GO> above all,
    bias[2] = -50.0  # and never stops, so every one of the 6 steps must pick a real token
    model.decoder.output_layer.bias.assign(bias)
    tokens = model.generate(source, max_length=6, beam_width=beam_width)["tokens"]
    assert tokens.shape == (3, 6) and np.all(tokens >= 3), tokens


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="counts tf.function traces")
def test_one_compiled_decoder_serves_every_length():
    model = Seq2Seq(14, 14, embedding_dim=8, units=16)
    for batch, length in ((2, 3), (5, 5), (3, 8)):
        model.generate(_reversal_batch(batch=batch, length=length)[0], max_length=length + 1)
    assert model.greedy_function().experimental_get_tracing_count() == 1


def test_loss_and_accuracy_ignore_padding_and_normalise_by_real_tokens():
    y_true = np.array([[5, 6, 2, 0, 0], [7, 2, 0, 0, 0]])
    logits = RNG.normal(size=(2, 5, 9)).astype("float32")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    real = y_true != 0
    expected = -np.sum(np.take_along_axis(log_probs, y_true[..., None], -1)[..., 0] * real) / real.sum()
    np.testing.assert_allclose(float(MaskedTokenLoss()(y_true, logits)), expected, rtol=1e-5)
    changed = logits.copy()
    changed[:, 3:] = 100.0  # whatever sits at padded positions cannot matter
    np.testing.assert_allclose(float(MaskedTokenLoss()(y_true, changed)), expected, rtol=1e-5)
    metric = MaskedTokenAccuracy()
    predictions = np.zeros((2, 5, 9), "float32")
    for (row, col), token in np.ndenumerate(y_true):
        predictions[row, col, token if (row, col) != (0, 0) else 8] = 1.0
    metric.update_state(y_true, predictions)
    assert float(metric.result()) == pytest.approx(4 / 5)


def test_bad_inputs_raise_value_errors():
    model = Seq2Seq(14, 14, embedding_dim=8, units=16)
    source, target_in, _ = _reversal_batch(batch=3)
    with pytest.raises(ValueError, match="Received: source.dtype"):
        model({"source": source.astype("float32"), "target_in": target_in})
    with pytest.raises(ValueError, match="Received: source.shape"):
        model({"source": source[0], "target_in": target_in})
    with pytest.raises(ValueError, match="same batch size"):
        model({"source": source, "target_in": target_in[:2]})
    with pytest.raises(ValueError, match="Received: keys"):
        model({"src": source, "target_in": target_in})
    with pytest.raises(ValueError, match="Received: source.shape"):
        model.generate(source.astype("float32"))
    with pytest.raises(ValueError, match="max_length"):
        model.generate(source, max_length=0)


def test_greedy_decode_function_directly():
    model = Seq2Seq(14, 14, embedding_dim=8, units=16)
    source = _reversal_batch(batch=2)[0]
    outputs, state, mask = model.encode(source)
    memory = model.decoder.prepare_memory(outputs, state, mask)
    tokens, alignments, scores = greedy_decode(model.decoder, memory, state, 1, 2, 4)
    assert tuple(tokens.shape) == (2, 4) and tuple(alignments.shape) == (2, 4, 5)
    assert np.all(np.asarray(scores) <= 0)
    with pytest.raises(ValueError, match="max_length=0"):
        greedy_decode(model.decoder, memory, state, 1, 2, 0)


def test_decoders_reject_an_initial_state_of_the_wrong_size():
    target_in = np.ones((2, 3), "int32")
    encoder_outputs = np.zeros((2, 5, 4), "float32")
    with pytest.raises(ValueError, match=r"Received: initial_state.shape=\(2, 7\)"):
        PlainGRUDecoder(9, 4, 6, option=1)(target_in, encoder_outputs, np.zeros((2, 7), "float32"))
    with pytest.raises(ValueError, match=r"Received: initial_state.shape=\(2, 7\)"):
        AttentionGRUDecoder(9, 4, 6)(target_in, encoder_outputs, np.zeros((2, 7), "float32"))
    with pytest.raises(ValueError, match=r"Received: encoder_outputs.shape=\(2, 4\)"):
        PlainGRUDecoder(9, 4, 4, option=1)(target_in, encoder_outputs[:, -1], np.zeros((2, 4), "float32"))


@pytest.mark.parametrize("kind", ["attention", "option 1", "option 2"])
def test_decoders_reject_a_state_of_another_rank_or_built_size_in_call_and_decoding(kind):
    # Each used to fail inside TensorFlow (ConcatV2, AddV2 or MatMul), in the call or at the first step.
    decoder = AttentionGRUDecoder(9, 4, 6) if kind == "attention" else PlainGRUDecoder(9, 4, 6, option=int(kind[-1]))
    target_in = np.ones((2, 3), "int32")
    encoder_outputs = np.zeros((2, 5, 4), "float32")
    decoder(target_in, encoder_outputs, np.zeros((2, 6), "float32"))  # built for states of size 6
    for bad in (np.zeros((2, 1, 6), "float32"), np.zeros((2, 5), "float32")):
        received = re.escape(f"(batch, 6). Received: initial_state.shape={bad.shape}")
        with pytest.raises(ValueError, match=received):
            decoder(target_in, encoder_outputs, bad)
        with pytest.raises(ValueError, match=received):  # decoding starts here, as greedy and beam search do
            decoder.prepare_memory(encoder_outputs, bad, np.ones((2, 5), bool))


@pytest.mark.parametrize("attention", [True, False])
def test_mixed_float16_policy_gives_float32_logits_and_a_finite_loss(attention):
    from course_lib.models.document_classifier import DocumentClassifier
    from course_lib.models.language_model import RNNLanguageModel

    source, target_in, target_out = _reversal_batch(batch=8)
    source[0, 3:] = 0  # a padded row, whose masked scores overflow float16
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6, attention=attention)
        model.compile(optimizer=keras.optimizers.Adam(1e-2))
        logits = model({"source": source, "target_in": target_in})
        assert keras.backend.standardize_dtype(logits.dtype) == "float32" and model.decoder.compute_dtype == "float16"
        history = model.fit({"source": source, "target_in": target_in}, target_out, epochs=2, batch_size=8, verbose=0)
        assert np.all(np.isfinite(history.history["loss"]))
        documents = RNG.integers(1, 14, size=(2, 3, 4)).astype("int32")
        for outputs in (RNNLanguageModel(14, 8, 16)(target_in),
                        DocumentClassifier(14, 3, embedding_dim=8, word_units=4, sentence_units=4)(documents)):
            assert keras.backend.standardize_dtype(outputs.dtype) == "float32"
    finally:
        keras.config.set_dtype_policy(previous)


@needs_float64
def test_float64_policy_gives_float64_logits_everywhere():
    """Logits are float32 under a mixed policy, but never less precise than the policy."""
    from course_lib.models.document_classifier import DocumentClassifier
    from course_lib.models.language_model import RNNLanguageModel
    from course_lib.models.recipes import build_recipe

    source, target_in, _ = _reversal_batch(batch=4)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float64")
    try:
        documents = RNG.integers(1, 14, size=(2, 3, 4)).astype("int32")
        outputs = [Seq2Seq(14, 14, embedding_dim=8, units=16, attention=attention)(
            {"source": source, "target_in": target_in}) for attention in (True, False)]
        outputs += [RNNLanguageModel(14, 8, 16)(target_in),
                    DocumentClassifier(14, 3, embedding_dim=8, word_units=4, sentence_units=4)(documents)]
        for name in ("image_question_answering", "video_classification"):  # the recipes' own output layers
            recipe = build_recipe(name)
            outputs.append(recipe.model(recipe.inputs))
        for output in outputs:
            assert keras.backend.standardize_dtype(output.dtype) == "float64"
    finally:
        keras.config.set_dtype_policy(previous)


@needs_float64
def test_float64_policy_decodes_in_float64():
    """Greedy and beam decoding and the language model's sampling sum their log-probabilities in the
    logits' dtype: under float64 they failed (AddV2 float vs double) or dropped to float32."""
    from course_lib.models.language_model import RNNLanguageModel

    source, _, _ = _reversal_batch(batch=2)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float64")
    try:
        for attention in (True, False):
            model = Seq2Seq(14, 14, embedding_dim=8, units=16, attention=attention)
            for beam_width in (1, 2):
                result = model.generate(source, max_length=4, beam_width=beam_width)
                assert result["scores"].dtype == np.float64, (attention, beam_width)
                assert result["alignments"].dtype == np.float64, (attention, beam_width)
                assert np.all(np.isfinite(result["scores"]))
        language_model = RNNLanguageModel(10, 4, 8)
        for temperature in (0.0, 1.0):
            tokens, log_probs = language_model.generate(2, 5, temperature=temperature)
            assert tokens.shape == (2, 5) and log_probs.dtype == np.float64
            assert np.all(np.isfinite(log_probs)) and np.all(log_probs <= 0)
    finally:
        keras.config.set_dtype_policy(previous)


def test_seq2seq_masks_its_own_pad_id_in_the_source():
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, pad_id=3)
    source, padded = np.array([[5, 6, 7]], "int32"), np.array([[5, 6, 7, 3, 3]], "int32")
    target_in = np.array([[1, 4, 5]], "int32")
    np.testing.assert_allclose(model({"source": padded, "target_in": target_in}),
                               model({"source": source, "target_in": target_in}), atol=1e-5)
    assert np.all(np.asarray(model.alignments(padded, target_in))[0, :, 3:] == 0.0)
    assert model.encoder.get_config()["pad_id"] == 3


def test_an_empty_source_in_a_batch_changes_nothing_for_the_others():
    """The GRU reads one padding step of an all-padding row (Keras's cuDNN GRU asserts on a row with
    no step); the other rows' outputs are those they have alone, and the empty row gets no attention."""
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True)
    source = np.array([[5, 6, 7], [0, 0, 0]], "int32")
    target_in = np.array([[1, 4, 5], [1, 6, 7]], "int32")
    logits = np.asarray(model({"source": source, "target_in": target_in}))
    alone = np.asarray(model({"source": source[:1], "target_in": target_in[:1]}))
    np.testing.assert_allclose(logits[:1], alone, atol=1e-5)
    assert np.all(np.isfinite(logits))
    assert np.all(np.asarray(model.alignments(source, target_in))[1] == 0.0)


def test_plain_decoder_can_decode_before_any_teacher_forced_call():
    decoder = PlainGRUDecoder(10, 4, 6, option=2)
    outputs = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")
    state = outputs[:, -1]
    memory = decoder.prepare_memory(outputs, state)  # what greedy and beam decoding call first
    assert decoder.built and "encoding" in memory
    logits, _ = decoder(np.array([[1, 4], [1, 5]], "int32"), outputs, state)  # failed: "already built"
    assert tuple(logits.shape) == (2, 2, 10) and len(decoder.weights) == 6


def test_bidirectional_bridge_reads_the_forward_end_and_the_backward_start():
    """s_0 = tanh(W_bridge [h_fwd_T; h_bwd_1] + b): the forward state at the last real token, the
    backward state at the first (row 0 is padded after 3 tokens)."""
    encoder = GRUEncoder(12, 5, 8, bidirectional=True, decoder_units=6)
    source = _tokens(2, 4, pad_from=[3, 4])
    outputs, state, _ = encoder(source)
    outputs = np.asarray(outputs)  # (batch, src_len, 16) = [h_fwd_j; h_bwd_j]
    forward_end = outputs[np.arange(2), [2, 3], :8]
    backward_start = outputs[:, 0, 8:]
    kernel, bias = (np.asarray(weight) for weight in (encoder.bridge.kernel, encoder.bridge.bias))
    expected = np.tanh(np.concatenate([forward_end, backward_start], axis=-1) @ kernel + bias)
    np.testing.assert_allclose(np.asarray(state), expected, atol=1e-5)


def test_teacher_forced_decoding_projects_the_keys_once():
    """W_att h_j depends only on the source: one projection serves all five target steps."""
    inputs = _decoder_inputs(tgt_len=5)
    decoder = AttentionGRUDecoder(10, 6, 8)
    decoder(**inputs)  # builds the layer
    calls, project_keys = [], decoder.attention.project_keys

    def counted(values):
        calls.append(values)
        return project_keys(values)

    object.__setattr__(decoder.attention, "project_keys", counted)  # past Keras's attribute tracking
    decoder(**inputs)
    assert len(calls) == 1


def test_one_directional_encoder_bridges_to_other_decoder_units():
    encoder = GRUEncoder(12, 5, 8, decoder_units=6)
    outputs, state, _ = encoder(np.array([[3, 4, 5]], "int32"))
    assert encoder.bridge is not None
    assert tuple(outputs.shape) == (1, 3, 8) and tuple(state.shape) == (1, 6)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_encoder_output_shape_matches_its_outputs(bidirectional):
    # `compute_output_shape` raised NotImplementedError; the mask stays boolean in a symbolic call.
    encoder = GRUEncoder(12, 4, 6, bidirectional=bidirectional, decoder_units=5)
    shapes = check_output_shapes(encoder, {"source": _tokens(2, 3)}, {"source": (None, None)})
    assert shapes == [(None, None, 12 if bidirectional else 6), (None, 5), (None, None)]


@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
@pytest.mark.parametrize("attention", [True, False])
def test_decoder_output_shape_matches_its_outputs(attention, policy):
    # `compute_output_shape` raised NotImplementedError.
    decoder = (AttentionGRUDecoder(9, 4, 6, dtype=policy) if attention
               else PlainGRUDecoder(9, 4, 6, option=2, dtype=policy))
    state = 6 if attention else 5
    inputs = {"target_inputs": _tokens(2, 3, vocab=9), "encoder_outputs": np.ones((2, 4, 5), "float32"),
              "initial_state": np.ones((2, state), "float32")}
    open_shapes = {"target_inputs": (None, None), "encoder_outputs": (None, None, 5), "initial_state": (None, state)}
    assert check_output_shapes(decoder, inputs, open_shapes) == [(None, None, 9), (None, None, None)]


def test_seq2seq_takes_numpy_integer_sizes():
    # Keras's Embedding refused `input_dim=np.int64(12)`.
    model = Seq2Seq(np.int64(12), np.int64(10), embedding_dim=np.int64(4), units=np.int64(6),
                    attention_units=np.int32(5), max_output_length=np.int64(3))
    assert model.generate(_tokens(2, 3))["tokens"].shape == (2, 3)
    config = model.get_config()
    names = ("source_vocab_size", "target_vocab_size", "units", "attention_units", "max_output_length")
    assert all(type(config[name]) is int for name in names)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_greedy_and_beam_alignments_are_float32_under_a_mixed_policy(policy):
    # Greedy decoding returned float16 or bfloat16 alignments (a bfloat16 array is no NumPy floating type);
    # beam search returned float32.
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, dtype=policy)
    for beam_width in (1, 2):
        result = model.generate(_tokens(2, 3), max_length=4, beam_width=beam_width)
        assert result["alignments"].dtype == np.float32, (beam_width, result["alignments"].dtype)
        assert result["scores"].dtype == np.float32


@pytest.mark.parametrize("option", [1, 2])
def test_plain_decoder_logits_from_state_equal_a_call_with_any_encoder_outputs(option):
    """An option-1 captioner has s_0 and nothing else: the logits need no encoder outputs."""
    inputs = _decoder_inputs()
    decoder = PlainGRUDecoder(10, 6, 8, option=option)
    expected, _ = decoder(inputs["target_inputs"], inputs["encoder_outputs"], inputs["initial_state"])
    logits = decoder.logits_from_state(inputs["target_inputs"], inputs["initial_state"])
    np.testing.assert_allclose(np.asarray(logits), np.asarray(expected), atol=1e-6)
    other = decoder.logits_from_state(inputs["target_inputs"], inputs["initial_state"] * 0 + 0.5)
    assert not np.allclose(np.asarray(logits), np.asarray(other))  # the state is what conditions it
    with pytest.raises(ValueError, match="initial_state.shape"):
        decoder.logits_from_state(inputs["target_inputs"], inputs["encoder_outputs"])


@pytest.mark.parametrize("kind", ["attention", "option 1", "option 2"])
def test_a_decoding_step_refuses_ids_and_states_it_cannot_read(kind):
    """`step()` is what greedy, beam and ensemble decoding call: ids (batch, 1) used to broadcast into logits
    (batch, batch, vocab), float ids were truncated, and a state of another size failed inside TensorFlow."""
    decoder = AttentionGRUDecoder(9, 4, 6) if kind == "attention" else PlainGRUDecoder(9, 4, 6, option=int(kind[-1]))
    encoder_outputs = np.zeros((2, 5, 4), "float32")
    state = np.zeros((2, 6), "float32")
    decoder(np.ones((2, 3), "int32"), encoder_outputs, state)
    memory = decoder.prepare_memory(encoder_outputs, state, np.ones((2, 5), bool))
    logits, new_state, _ = decoder.step(np.array([1, 2], "int32"), state, memory)
    assert tuple(logits.shape) == (2, 9) and tuple(new_state.shape) == (2, 6)
    for tokens, bad_state, received in [
        (np.array([[1], [2]], "int32"), state, r"previous_tokens.shape=\(2, 1\)"),
        (np.array([1.9, 2.7], "float32"), state, r"previous_tokens.dtype=float32"),
        (np.array([1, 2], "int32"), np.zeros((2, 7), "float32"), r"state.shape=\(2, 7\)"),
        (np.array([1, 2, 3], "int32"), state, r"previous_tokens.shape=\(3,\), state.shape=\(2, 6\)"),
    ]:
        with pytest.raises(ValueError, match=received):
            decoder.step(tokens, bad_state, memory)


@pytest.mark.parametrize("decoder_class", [AttentionGRUDecoder, PlainGRUDecoder])
def test_a_symbolic_decoder_call_checks_its_inputs_as_an_eager_one_does(decoder_class):
    encoder_outputs, state = keras.Input((4, 5)), keras.Input((6,))
    with pytest.raises(ValueError, match=r"Received: target_inputs.dtype=float32"):
        decoder_class(10, 3, 6)(keras.Input((None,), dtype="float32"), encoder_outputs, state)
    if decoder_class is AttentionGRUDecoder:  # option 2's state size is the encoding's, any before it is built
        with pytest.raises(ValueError, match=r"Received: initial_state.shape=\(None, 7\)"):
            decoder_class(10, 3, 6)(keras.Input((None,), dtype="int32"), encoder_outputs, keras.Input((7,)))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_encoder_outputs_carry_the_source_mask_on_either_code_path(bidirectional, monkeypatch):
    """A layer called on the outputs without an explicit mask skips the padding, and an all-padding row gives zeros.
    On a CPU the outputs used to carry the GRU's `runnable_mask` (position 0 of an empty row counted as real); on the
    cuDNN path (TensorFlow with a GPU, the sorted-steps code) they carried no mask at all."""
    from keras.src.backend import get_keras_mask

    from course_lib.layers import AttentionPooling, masking

    source = np.array([[3, 4, 5, 0, 0], [0, 0, 0, 0, 0]], "int32")
    keras.utils.set_random_seed(0)
    encoder = GRUEncoder(10, 4, 6, bidirectional=bidirectional)
    pooling = AttentionPooling(3)
    results = {}
    for path, cudnn in (("cpu", False), ("packed", True)):
        monkeypatch.setattr(masking, "_cudnn_may_run", lambda cudnn=cudnn: cudnn)
        outputs, _, source_mask = encoder(source)
        np.testing.assert_array_equal(get_keras_mask(outputs), source != 0)
        _, weights = pooling(outputs)  # no mask passed: the outputs' own
        np.testing.assert_array_equal(np.asarray(weights)[:, 3:], 0.0)
        np.testing.assert_array_equal(np.asarray(weights)[1], 0.0)  # no real word: no weight anywhere
        np.testing.assert_allclose(np.asarray(weights)[0].sum(), 1.0, rtol=1e-6)
        results[path] = (np.asarray(outputs), np.asarray(weights))
    np.testing.assert_allclose(results["cpu"][0][0, :3], results["packed"][0][0, :3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results["cpu"][1], results["packed"][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("decoder_class", [AttentionGRUDecoder, PlainGRUDecoder])
def test_both_decoders_refuse_targets_that_are_not_rank_2_with_a_value_error(decoder_class):
    floats = lambda *shape: np.zeros(shape, "float32")  # noqa: E731
    with pytest.raises(ValueError, match=r"`target_inputs` must have rank 2 \(batch, length\)\. "
                                         r"Received: target_inputs\.shape=\(3,\)"):
        decoder_class(11, 4, 6)(np.array([1, 2, 3], "int32"), floats(2, 4, 5), floats(2, 6))  # used to be IndexError
