"""Hierarchical encoders: masks survive the step from words to sentences."""

import keras
import numpy as np
import pytest

from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder, HierarchicalEncoder
from layer_testing import run_layer_test

VOCAB = 30


def make_documents(seed=0):
    """(3 documents, 4 sentences, 5 words) with padded words, a padded sentence
    in the middle of document 2 and a short document 0."""
    rng = np.random.default_rng(seed)
    documents = rng.integers(1, VOCAB, size=(3, 4, 5)).astype("int32")
    documents[0, 2:] = 0  # two padding sentences at the end
    documents[1, 0, 2:] = 0  # padding words
    documents[1, 3, 1:] = 0  # a one-word sentence
    documents[2, 1] = 0  # an all-padding sentence between real ones
    return documents


def with_more_padding(documents, extra_sentences=2, extra_words=3):
    batch, sentences, words = documents.shape
    padded = np.zeros((batch, sentences + extra_sentences, words + extra_words), "int32")
    padded[:, :sentences, :words] = documents
    return padded


def compare_han(original, padded):
    document, sentence_weights, word_weights = original
    padded_document, padded_sentence, padded_word = padded
    np.testing.assert_allclose(document, padded_document, atol=1e-5)
    s, w = sentence_weights.shape[1], word_weights.shape[2]
    np.testing.assert_allclose(sentence_weights, padded_sentence[:, :s], atol=1e-5)
    np.testing.assert_allclose(word_weights, padded_word[:, :s, :w], atol=1e-5)
    assert np.all(padded_sentence[:, s:] == 0.0)
    assert np.all(padded_word[:, s:] == 0.0) and np.all(padded_word[:, :, w:] == 0.0)


def test_han_standard_checks_and_padding_changes_nothing():
    documents = make_documents()
    run_layer_test(
        HierarchicalAttentionEncoder,
        {"vocab_size": VOCAB, "embedding_dim": 6, "word_units": 5, "sentence_units": 4},
        {"documents": documents},
        expected_output_shapes=[(3, 8), (3, 4), (3, 4, 5)],
        padding_check=({"documents": with_more_padding(documents)}, compare_han),
        atol=1e-5,
    )


def test_han_padding_gets_exactly_zero_weight_and_no_nan():
    documents = make_documents()
    encoder = HierarchicalAttentionEncoder(VOCAB, 6, 5, 4)
    document, sentence_weights, word_weights = [np.asarray(x) for x in encoder(documents)]
    word_mask = documents != 0
    sentence_mask = word_mask.any(axis=-1)
    assert np.all(np.isfinite(document))
    assert np.all(word_weights[~word_mask] == 0.0)
    assert np.all(sentence_weights[~sentence_mask] == 0.0)
    np.testing.assert_allclose(sentence_weights.sum(axis=1), 1.0, atol=1e-6)
    # Every real sentence's word weights sum to one; all-padding ones to zero.
    np.testing.assert_allclose(word_weights.sum(axis=-1), sentence_mask.astype(float), atol=1e-6)


def test_han_all_padding_document_is_zero_not_nan():
    documents = make_documents()
    documents[1] = 0
    encoded = HierarchicalAttentionEncoder(VOCAB, 6, 5, 4).encode(documents)
    for name in ("document", "sentence_weights", "word_weights", "sentence_states"):
        assert np.all(np.isfinite(np.asarray(encoded[name]))), name
    assert np.all(np.asarray(encoded["document"])[1] == 0.0)


def test_han_documents_do_not_leak_into_each_other():
    """Folding sentences into the batch must keep documents apart."""
    documents = make_documents()
    encoder = HierarchicalAttentionEncoder(VOCAB, 6, 5, 4)
    together = np.asarray(encoder(documents)[0])
    alone = np.concatenate([np.asarray(encoder(documents[i:i + 1])[0]) for i in range(3)])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    changed = documents.copy()
    changed[0, 0, 0] = (changed[0, 0, 0] % (VOCAB - 1)) + 1
    after = np.asarray(encoder(changed)[0])
    np.testing.assert_allclose(after[1:], together[1:], atol=1e-6)
    assert not np.allclose(after[0], together[0])


def test_han_sentence_weights_follow_the_equations():
    """alpha_i = softmax_i(u_i^T u_s) with u_i = tanh(W_s h_i + b_s), on the sentence states."""
    documents = make_documents()
    encoder = HierarchicalAttentionEncoder(VOCAB, 6, 5, 4)
    encoder.encode(documents)
    bias = encoder.sentence_attention.weights[1]  # b_s starts at zero: test it at a real value
    bias.assign(np.random.default_rng(1).normal(size=bias.shape))
    encoded = {k: np.asarray(v) for k, v in encoder.encode(documents).items()}
    kernel, bias, context = [w.numpy() for w in encoder.sentence_attention.weights]
    scores = np.tanh(encoded["sentence_states"] @ kernel + bias) @ context
    scores = np.where(encoded["sentence_mask"], scores, -np.inf)
    expected = np.exp(scores - scores.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(encoded["sentence_weights"], expected, atol=1e-5)
    manual = (expected[:, :, None] * encoded["sentence_states"]).sum(1)
    np.testing.assert_allclose(encoded["document"], manual, atol=1e-5)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_plain_encoder_checks_and_padding(bidirectional):
    documents = make_documents()

    def compare(original, padded):
        np.testing.assert_allclose(original[0], padded[0], atol=1e-5)
        s = original[1].shape[1]
        np.testing.assert_allclose(original[1], padded[1][:, :s], atol=1e-5)
        assert np.all(padded[1][:, s:] == 0.0)

    directions = 2 if bidirectional else 1
    run_layer_test(
        HierarchicalEncoder,
        {"vocab_size": VOCAB, "embedding_dim": 6, "word_units": 5, "sentence_units": 4,
         "bidirectional": bidirectional},
        {"documents": documents},
        expected_output_shapes=[(3, 4 * directions), (3, 4, 4 * directions)],
        padding_check=({"documents": with_more_padding(documents)}, compare),
        atol=1e-5,
    )


def test_plain_encoder_uses_last_real_sentence_state():
    documents = make_documents()
    encoder = HierarchicalEncoder(VOCAB, 6, 5, 4)
    document, states = [np.asarray(x) for x in encoder(documents)]
    np.testing.assert_allclose(document[0], states[0, 1], atol=1e-6)  # document 0: 2 sentences
    np.testing.assert_allclose(document[2], states[2, 3], atol=1e-6)  # last sentence is real
    assert np.all(states[2, 1] == 0.0)  # the padding sentence has a zero state


@pytest.mark.parametrize("encoder_cls", [HierarchicalAttentionEncoder, HierarchicalEncoder])
def test_bad_input_raises(encoder_cls):
    encoder = encoder_cls(VOCAB, 6, 5, 4)
    with pytest.raises(ValueError, match=r"documents.shape=\(3, 4\)"):
        encoder(np.ones((3, 4), "int32"))
    with pytest.raises(ValueError, match="integer"):
        encoder(np.ones((3, 4, 5), "float32"))
    with pytest.raises(ValueError, match="word_units"):
        encoder_cls(VOCAB, 6, 0, 4)


def test_sentence_state_dropout_only_acts_in_training():
    keras.utils.set_random_seed(0)  # dropout makes the training checks random otherwise
    documents = make_documents()
    encoder = HierarchicalAttentionEncoder(VOCAB, 6, 5, 4, sentence_state_dropout=0.5)
    assert HierarchicalAttentionEncoder.from_config(encoder.get_config()).sentence_state_dropout == 0.5
    first = np.asarray(encoder(documents, training=False)[0])
    np.testing.assert_allclose(np.asarray(encoder(documents, training=False)[0]), first, atol=1e-6)
    padded = np.asarray(encoder(with_more_padding(documents), training=False)[0])
    np.testing.assert_allclose(padded, first, atol=1e-5)
    noisy = np.asarray(encoder(documents, training=True)[0])
    assert np.all(np.isfinite(noisy)) and not np.allclose(noisy, first)
    with pytest.raises(ValueError, match="sentence_state_dropout"):
        HierarchicalAttentionEncoder(VOCAB, 6, 5, 4, sentence_state_dropout=1.0)
    # Config round trip, .keras reload, gradients and padding with the state-dropout cell.
    run_layer_test(
        HierarchicalAttentionEncoder,
        {"vocab_size": VOCAB, "embedding_dim": 6, "word_units": 5, "sentence_units": 4,
         "sentence_state_dropout": 0.5},
        {"documents": documents},
        padding_check=({"documents": with_more_padding(documents)}, compare_han),
        atol=1e-5,
    )


def test_state_dropout_cell_forgets_per_step():
    from course_lib.encoders.hierarchical import StateDropoutGRUCell

    cell = StateDropoutGRUCell(8, state_dropout=0.5, seed=3)
    inputs, state = np.zeros((2, 3), "float32"), np.ones((2, 8), "float32")
    cell.build((2, 3))
    plain, _ = cell(inputs, [state], training=False)
    noisy_1, _ = cell(inputs, [state], training=True)
    noisy_2, _ = cell(inputs, [state], training=True)
    assert not np.allclose(np.asarray(noisy_1), np.asarray(plain))
    assert not np.allclose(np.asarray(noisy_1), np.asarray(noisy_2))  # fresh noise each call
    assert StateDropoutGRUCell.from_config(cell.get_config()).state_dropout == 0.5
    with pytest.raises(ValueError, match="state_dropout"):
        StateDropoutGRUCell(4, state_dropout=-0.1)


def test_state_dropout_noise_is_drawn_before_the_loop_and_read_step_by_step(monkeypatch):
    """StateDropoutRNN draws all the steps' keep masks in one go, before the loop; step i reads mask i.

    Drawn inside the loop, the generator's update escaped JAX's `lax.scan`, and `fit` of the HAN failed there
    (UnexpectedTracerError, lecture 8 under KERAS_BACKEND=jax, 4 Dec 2026).
    """
    from course_lib.encoders.hierarchical import StateDropoutGRUCell, StateDropoutRNN, _make_gru

    inputs = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    layer = StateDropoutRNN(StateDropoutGRUCell(4, state_dropout=0.5), return_sequences=True)
    reference = keras.layers.GRU(4, return_sequences=True)  # the same GRU, no noise
    layer.build(inputs.shape)
    reference.build(inputs.shape)
    reference.set_weights(layer.get_weights())
    draws = []

    def forget_at_step(index):
        def keep_masks(self, shape, dtype):
            draws.append(tuple(int(size) for size in shape))
            keep = np.ones(draws[-1], "float32")
            if index is not None:
                keep[:, index] = 0.0  # every unit of h_{index-1} dropped
            return keras.ops.convert_to_tensor(keep, dtype)
        monkeypatch.setattr(StateDropoutGRUCell, "keep_masks", keep_masks)

    forget_at_step(None)
    np.testing.assert_allclose(np.asarray(layer(inputs, training=True)), np.asarray(reference(inputs)), atol=1e-6)
    assert draws == [(2, 5, 4)]  # one draw for the whole sequence, before the loop
    forget_at_step(2)
    noisy = np.asarray(layer(inputs, training=True))
    np.testing.assert_allclose(noisy[:, :2], np.asarray(reference(inputs))[:, :2], atol=1e-6)
    np.testing.assert_allclose(noisy[:, 2:], np.asarray(reference(inputs[:, 2:])), atol=1e-6)  # from h = 0
    assert not np.allclose(noisy[:, 2:], np.asarray(reference(inputs))[:, 2:])
    # Inference draws nothing; the bidirectional sentence GRU draws once per direction.
    draws.clear()
    np.testing.assert_allclose(np.asarray(layer(inputs, training=False)), np.asarray(reference(inputs)), atol=1e-6)
    bidirectional = _make_gru(4, True, "sentence_gru", state_dropout=0.5)
    bidirectional(inputs, training=True)
    assert draws == [(2, 5, 4), (2, 5, 4)]
    assert isinstance(bidirectional.forward_layer, StateDropoutRNN)
    assert isinstance(bidirectional.backward_layer, StateDropoutRNN)
    with pytest.raises(ValueError, match="StateDropoutGRUCell"):
        StateDropoutRNN(keras.layers.GRUCell(4))


def test_state_dropout_rnn_standard_checks():
    """StateDropoutRNN (and its StateDropoutGRUCell) through the checks every course layer gets.

    `StateDropoutRNN(cell, trainable=False)` trained the cell's kernel, recurrent kernel and bias: the cell is
    made before the layer, so the constructor's `trainable` did not reach it.
    """
    from course_lib.encoders.hierarchical import StateDropoutGRUCell, StateDropoutRNN

    sequences = np.random.default_rng(3).normal(size=(2, 5, 3)).astype("float32")
    # One cell for every layer the helper makes: a `keras.layers.RNN` takes a cell object, not its config.
    run_layer_test(
        StateDropoutRNN,
        {"cell": StateDropoutGRUCell(4, state_dropout=0.5, seed=0), "return_sequences": True},
        {"sequences": sequences},
        expected_output_shapes=[(2, 5, 4)],
        atol=1e-5,
    )


def test_state_dropout_rnn_keeps_the_cells_input_dropout_to_the_inputs():
    """The cell's own `dropout` masks the inputs, not the keep masks joined to them (it failed: [2,3] vs [2,7])."""
    from course_lib.encoders.hierarchical import StateDropoutGRUCell, StateDropoutRNN

    inputs = np.random.default_rng(2).normal(size=(2, 5, 3)).astype("float32")
    layer = StateDropoutRNN(StateDropoutGRUCell(4, state_dropout=0.5, dropout=0.3, seed=0), return_sequences=True)
    noisy = np.asarray(layer(inputs, training=True))
    assert noisy.shape == (2, 5, 4) and np.all(np.isfinite(noisy))
    assert layer.cell._dropout_mask is None  # reset after the call, as keras.layers.RNN does
    assert not np.allclose(noisy, np.asarray(layer(inputs, training=False)))


def test_state_dropout_cell_in_a_plain_rnn_still_drops_in_training():
    """The cell used on its own in a plain keras.layers.RNN draws its own noise there (TensorFlow only)."""
    from course_lib.encoders.hierarchical import StateDropoutGRUCell, StateDropoutRNN

    inputs = np.random.default_rng(1).normal(size=(2, 6, 3)).astype("float32")
    legacy = keras.layers.RNN(StateDropoutGRUCell(4, state_dropout=0.5, seed=1), return_sequences=True)
    current = StateDropoutRNN(StateDropoutGRUCell(4, state_dropout=0.5, seed=1), return_sequences=True)
    legacy.build(inputs.shape)
    current.build(inputs.shape)
    current.set_weights(legacy.get_weights())
    clean = np.asarray(legacy(inputs, training=False))
    np.testing.assert_allclose(np.asarray(current(inputs, training=False)), clean, atol=1e-6)
    assert not np.allclose(np.asarray(legacy(inputs, training=True)), clean)
    assert not np.allclose(np.asarray(current(inputs, training=True)), clean)


def test_plain_encoder_all_padding_document_is_zero_not_nan():
    """Zero, and not the GRUs' response to zero inputs: with non-zero biases that response is not zero."""
    documents = make_documents()
    documents[1] = 0
    encoder = HierarchicalEncoder(VOCAB, 6, 5, 4)
    encoder(documents)
    for weight in encoder.word_rnn.weights + encoder.sentence_rnn.weights:
        if "bias" in weight.path:
            weight.assign(np.ones(weight.shape, "float32"))
    document = np.asarray(encoder(documents)[0])
    assert np.all(np.isfinite(document))
    assert np.all(document[1] == 0.0) and np.any(document[0] != 0.0)


def test_state_dropout_cell_seeds_its_own_dropout_too():
    # The seed reached the state noise only: the cell's `dropout` and `recurrent_dropout` were unseeded, while
    # `get_config` reported the seed.
    from course_lib.encoders.hierarchical import StateDropoutGRUCell

    inputs = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")

    def run(seed, state_dropout=0.0):
        keras.utils.set_random_seed(len(runs))  # different unseeded noise in each run
        rnn = keras.layers.RNN(StateDropoutGRUCell(5, state_dropout=state_dropout, dropout=0.5,
                                                   recurrent_dropout=0.5, seed=seed), return_sequences=True)
        rnn.build(inputs.shape)
        rnn.set_weights(runs[0][1].get_weights() if runs else rnn.get_weights())  # the same weights
        runs.append((np.asarray(rnn(inputs, training=True)), rnn.cell))
        return runs[-1]

    runs = []
    first, cell = run(7)
    np.testing.assert_allclose(run(7)[0], first)
    assert not np.allclose(run(8)[0], first)
    np.testing.assert_allclose(run(7, state_dropout=0.5)[0], run(7, state_dropout=0.5)[0])
    assert cell.get_config()["seed"] == 7 and cell.seed == 7
    assert StateDropoutGRUCell.from_config(cell.get_config()).seed == 7


@pytest.mark.parametrize("encoder_class", [HierarchicalAttentionEncoder, HierarchicalEncoder])
def test_hierarchical_encoders_take_numpy_integer_sizes(encoder_class):
    # `isinstance(value, int)` refused them.
    encoder = encoder_class(np.int64(VOCAB), np.int64(4), np.int32(5), np.int64(6))
    assert np.asarray(encoder(make_documents())[0]).shape[-1] == encoder.output_dim
    assert all(type(encoder.get_config()[name]) is int for name in ("vocab_size", "word_units", "sentence_units"))
    with pytest.raises(ValueError, match="`word_units` must be a whole number >= 1. Received: word_units=0"):
        encoder_class(VOCAB, 4, 0, 6)
