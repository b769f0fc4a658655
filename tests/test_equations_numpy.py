"""Whole models recomputed in NumPy from the lecture's equations.

`test_bahdanau_attention.py` checks the attention layer against its formulas, and
`test_seq2seq.py` checks that the teacher-forced pass equals the model's own `step`.
Neither would notice a decoder that wires correct pieces together wrongly (attending
with `s_t` instead of `s_{t-1}`, feeding `[c_t; e(y_{t-1})]` to the output layer in
another order, bridging the wrong backward state). Here these models are
written out again in NumPy, step by step, from nothing but their weights, and their
teacher-forced outputs and attention weights must agree:

* `Seq2Seq`: the encoder (one or both directions), the bridge, the attentional
  decoder (plain, deep output, conditional) and the plain decoder's options 1 and 2;
* `ImageCaptioner`: the same decoders fed locations `a_j` and a vector `fc7(I)`;
* `DocumentClassifier`: the hierarchical attention network (word and sentence
  attention against `u_w` and `u_s`), and `HierarchicalDialogModel`, which decodes
  from it;
* `RNNLanguageModel` (lecture 1) with each of its three cells.

Every weight is set to random numbers first (biases included): with Keras's zero
biases, a bias added twice or in the wrong gate would go unnoticed.
"""

import keras
import numpy as np
import pytest

from course_lib.models import Seq2Seq
from course_lib.models.captioner import ImageCaptioner
from course_lib.models.dialog import HierarchicalDialogModel
from course_lib.models.document_classifier import DocumentClassifier
from course_lib.models.language_model import RNNLanguageModel
from numpy_reference import numpy_attention, numpy_pooling

SOURCE_VOCAB, TARGET_VOCAB = 13, 11
# Sources of lengths 5, 3 and 1 padded on the right, one padded on the left and one with a gap (the encoder
# reads any padding pattern as if it were right-padded), and teacher-forced targets (<GO> = 1 first).
SOURCE = np.array([[4, 9, 5, 12, 7], [8, 6, 11, 0, 0], [10, 0, 0, 0, 0], [0, 0, 5, 7, 9], [6, 0, 0, 8, 4]], "int32")
TARGET_IN = np.array([[1, 5, 9, 4, 7], [1, 3, 8, 0, 0], [1, 6, 10, 2, 0], [1, 9, 7, 5, 2], [1, 4, 4, 8, 0]], "int32")


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x):
    x = x - x.max()
    return np.exp(x) / np.exp(x).sum()


def gru(cell, x, h):
    """One step of Keras's GRU (gates z, r, candidate; `reset_after=True`, two bias rows):

        z = sigmoid(x W_z + b_z + h U_z + b'_z)
        r = sigmoid(x W_r + b_r + h U_r + b'_r)
        h~ = tanh(x W_h + b_h + r * (h U_h + b'_h))
        h_new = z * h + (1 - z) * h~
    """
    kernel, recurrent, bias = (np.asarray(w, "float64") for w in (cell.kernel, cell.recurrent_kernel, cell.bias))
    units = h.shape[-1]
    from_input, from_state = x @ kernel + bias[0], h @ recurrent + bias[1]  # (3 * units,) each
    update = sigmoid(from_input[:units] + from_state[:units])
    reset = sigmoid(from_input[units:2 * units] + from_state[units:2 * units])
    candidate = np.tanh(from_input[2 * units:] + reset * from_state[2 * units:])
    return update * h + (1.0 - update) * candidate


def weights(variable):
    return np.asarray(variable, "float64")


def states(cells, inputs):
    """`h_j = GRU(h_{j-1}, x_j)` from zeros over `inputs` (length, dim); with two cells (a bidirectional
    layer) also `GRU_bwd` from the last input back, each `h_j = [h_fwd_j; h_bwd_j]` in reading order.
    Returns the states and the final state, `[h_fwd_T; h_bwd_1]` when bidirectional."""
    outputs, finals = [], []
    for cell, order in zip(cells, (1, -1)):
        state, row = np.zeros(cell.units), []
        for x in inputs[::order]:
            state = gru(cell, x, state)
            row.append(state)
        outputs.append(np.array(row[::order]))  # reading order
        finals.append(state)  # h_fwd_T, then h_bwd_1
    return np.concatenate(outputs, axis=-1), np.concatenate(finals)


def cells(layer):
    """The GRU cells of a recurrent layer: (forward,) or (forward, backward)."""
    if isinstance(layer, keras.layers.Bidirectional):
        return layer.forward_layer.cell, layer.backward_layer.cell
    return (layer.cell,)


def encode(model, tokens):
    """`h_j = GRU(h_{j-1}, e(x_j))` over the real tokens, both ways when bidirectional;
    returns the annotations `h_j` and `s_0` (bridged: `tanh(W_bridge [h_fwd_T; h_bwd_1] + b)`)."""
    encoder = model.encoder
    annotations, final = states(cells(encoder.rnn), weights(encoder.embedding.embeddings)[tokens])
    if encoder.bridge is not None:
        final = np.tanh(final @ weights(encoder.bridge.kernel) + weights(encoder.bridge.bias))
    return annotations, final


def attend(attention, query, annotations):
    """e_j = v_att^T tanh(U_att query + W_att h_j), alpha = softmax_j(e), c = sum_j alpha_j h_j."""
    U_att, W_att, v_att = (weights(w) for w in (attention.query_kernel, attention.key_kernel, attention.score_vector))
    context, alpha = numpy_attention(query[None], annotations[None], U_att, W_att, v_att)  # a batch of one
    return context[0], alpha[0]


def attention_step(decoder, annotations, state, previous):
    """One step from y_{t-1} and s_{t-1}: returns the logits, s_t and alpha_t."""
    e_previous = weights(decoder.embedding.embeddings)[previous]  # e(y_{t-1})
    if decoder.conditional:
        query = gru(decoder.input_cell, e_previous, state)  # s'_t = GRU_1(s_{t-1}, e(y_{t-1}))
        c_t, alpha = attend(decoder.attention, query, annotations)
        state = gru(decoder.cell, c_t, query)  # s_t = GRU_2(s'_t, c_t)
    else:
        c_t, alpha = attend(decoder.attention, state, annotations)  # the query is s_{t-1}
        state = gru(decoder.cell, np.concatenate([e_previous, c_t]), state)  # s_t = GRU(s_{t-1}, [e; c_t])
    read = np.concatenate([state, c_t, e_previous]) if decoder.deep_output else state
    V, b = weights(decoder.output_layer.kernel), weights(decoder.output_layer.bias)
    return read @ V + b, state, alpha  # V s_t + b, or V [s_t; c_t; e(y_{t-1})] + b


def attention_decoder(decoder, annotations, s_0, target_in):
    """Teacher-forced logits and weights, one step per input token `y_{t-1}`."""
    state, logits, alphas = s_0, [], []
    for previous in target_in:
        step_logits, state, alpha = attention_step(decoder, annotations, state, previous)
        logits.append(step_logits)
        alphas.append(alpha)
    return np.array(logits), np.array(alphas)


def plain_decoder(decoder, s_0, h_T, target_in):
    """Option 1: s_0 (= h_T in Seq2Seq), input e(y_{t-1}). Option 2 (the course's choice): s_0 = 0,
    input [e(y_{t-1}); h_T]."""
    embeddings = weights(decoder.embedding.embeddings)
    V, b = weights(decoder.output_layer.kernel), weights(decoder.output_layer.bias)
    state = s_0 if decoder.option == 1 else np.zeros(decoder.units)
    logits = []
    for previous in target_in:
        x = embeddings[previous] if decoder.option == 1 else np.concatenate([embeddings[previous], h_T])
        state = gru(decoder.gru.cell, x, state)
        logits.append(state @ V + b)
    return np.array(logits)


def randomise(model, seed):
    """Sets every weight (biases and learned initial states too) to random numbers of its own seed,
    so a test's numbers do not depend on which tests ran before it."""
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(rng.normal(scale=0.6, size=variable.shape).astype("float32"))
    return model


def randomised(seed, **kwargs):
    model = Seq2Seq(SOURCE_VOCAB, TARGET_VOCAB, embedding_dim=6, units=8, **kwargs)
    model.build()
    return randomise(model, seed)


def reference(model):
    """NumPy logits `(batch, tgt_len, vocab)` and alignments `(batch, tgt_len, src_len)`, row by row,
    each source cut to its real tokens (padding gets no weight: it is never read)."""
    all_logits, all_alignments = [], []
    for source, target_in in zip(SOURCE, TARGET_IN):
        annotations, s_0 = encode(model, source[source != 0])
        if model.attention:
            logits, alphas = attention_decoder(model.decoder, annotations, s_0, target_in)
        else:
            logits, alphas = plain_decoder(model.decoder, s_0, s_0, target_in), None  # attends to nothing: zeros
        all_logits.append(logits)
        placed = np.zeros((len(target_in), SOURCE.shape[1]))
        if alphas is not None:
            placed[:, source != 0] = alphas  # the weights of the real positions, wherever they are
        all_alignments.append(placed)
    return np.array(all_logits), np.array(all_alignments)


@pytest.mark.parametrize("kwargs", [
    {"attention": True},
    {"attention": True, "bidirectional": True},
    {"attention": True, "bidirectional": True, "deep_output": True, "attention_units": 5},
    {"attention": True, "bidirectional": True, "encoder_units": 4, "conditional": True},
    {"attention": False, "option": 1},
    {"attention": False, "option": 2},
    {"attention": False, "option": 2, "bidirectional": True},
], ids=["attention", "bidirectional", "deep-output", "conditional", "option1", "option2", "option2-bidirectional"])
def test_teacher_forced_pass_equals_the_equations_in_numpy(kwargs):
    model = randomised(0, **kwargs)
    logits, alignments = (np.asarray(x) for x in model.forward(SOURCE, TARGET_IN))
    expected_logits, expected_alignments = reference(model)
    assert np.abs(expected_logits).max() > 1.0  # random weights: logits far from zero, so a wrong term shows
    np.testing.assert_allclose(logits, expected_logits, atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(alignments, expected_alignments, atol=1e-6)
    if model.attention:
        np.testing.assert_allclose(alignments.sum(-1), 1.0, atol=1e-6)  # every row has a real token


def test_the_reference_tells_the_wirings_apart():
    """The check above can fail: the reference with one piece changed no longer matches the model."""
    model = randomised(1, attention=True, bidirectional=True)
    logits, _ = (np.asarray(x) for x in model.forward(SOURCE, TARGET_IN))
    source, target_in = SOURCE[0], TARGET_IN[0]
    annotations, s_0 = encode(model, source)
    decoder = model.decoder
    embeddings = weights(decoder.embedding.embeddings)
    V, b = weights(decoder.output_layer.kernel), weights(decoder.output_layer.bias)
    # Attending with the new state s_t (computed from the previous step's context) instead of s_{t-1}.
    state, context, wrong = s_0, np.zeros(annotations.shape[-1]), []
    for previous in target_in:
        state = gru(decoder.cell, np.concatenate([embeddings[previous], context]), state)
        context, _ = attend(decoder.attention, state, annotations)
        wrong.append(state @ V + b)
    assert np.abs(np.array(wrong) - logits[0]).max() > 1e-2
    # The backward direction's last state (h_bwd_T) bridged instead of h_bwd_1.
    units = model.encoder.units
    swapped = np.concatenate([annotations[-1, :units], annotations[-1, units:]])
    bridged = np.tanh(swapped @ weights(model.encoder.bridge.kernel) + weights(model.encoder.bridge.bias))
    assert np.abs(bridged - s_0).max() > 1e-2
    np.testing.assert_allclose(np.asarray(model.encode(SOURCE)[1])[0], s_0, atol=1e-5)


@pytest.mark.parametrize("decoder", ["attention", "attention+coordinates", "option1", "option2"])
def test_captioner_equals_the_equations_in_numpy(decoder):
    """attention: s_0 = tanh(W_init mean_j a_j + b), then the attentional decoder over the 12 locations
    (with coordinates: over [a_j; y_j; x_j], a 1 x 12 map, so y_j = 0 and x_j from -1 to 1; s_0 unchanged);
    option1: s_0 = W_proj fc7(I) (no bias); option2: s_0 = 0 and fc7(I) joined to every input."""
    coordinates = decoder == "attention+coordinates"
    decoder = decoder.split("+")[0]
    model = ImageCaptioner(TARGET_VOCAB, decoder=decoder, encoder="features", feature_locations=12,
                           feature_channels=7, feature_vector_dim=9, embedding_dim=6, units=8,
                           location_coordinates=coordinates)
    model.build()
    randomise(model, 2)
    rng = np.random.default_rng(12)
    inputs = {"locations": rng.normal(size=(3, 12, 7)).astype("float32"),
              "vector": rng.normal(size=(3, 9)).astype("float32"), "target_in": TARGET_IN[:3]}
    logits, alignments = (np.asarray(x) for x in model.forward(inputs))
    for row in range(3):
        a, fc7 = inputs["locations"][row].astype("float64"), inputs["vector"][row].astype("float64")
        if decoder == "attention":
            s_0 = np.tanh(a.mean(axis=0) @ weights(model.bridge.kernel) + weights(model.bridge.bias))
            if coordinates:
                a = np.concatenate([a, np.stack([np.zeros(12), np.linspace(-1, 1, 12)], axis=-1)], axis=-1)
            expected, alphas = attention_decoder(model.decoder, a, s_0, TARGET_IN[row])
            np.testing.assert_allclose(alignments[row], alphas, atol=1e-6)
        else:
            s_0 = fc7 @ weights(model.bridge.kernel) if decoder == "option1" else None
            expected = plain_decoder(model.decoder, s_0, fc7, TARGET_IN[row])
            assert not alignments[row].any()
        assert np.abs(expected).max() > 1.0
        np.testing.assert_allclose(logits[row], expected, atol=2e-5, rtol=1e-5)


def test_greedy_decoding_equals_the_argmax_loop_in_numpy():
    """From <GO>, feed back the most probable token (never <pad> or <GO>) until <stop> or max_length;
    padding after <stop>, and no weight drawn there."""
    model = randomised(2, attention=True, bidirectional=True, deep_output=True)
    bias = model.decoder.output_layer.bias
    bias.assign(np.asarray(bias) + np.eye(TARGET_VOCAB, dtype="float32")[2] * 1.0)  # <stop> within reach
    max_length = 6
    decoded = model.generate(SOURCE, max_length=max_length)
    stopped = []
    for row, source in enumerate(SOURCE):
        annotations, state = encode(model, source[source != 0])
        previous, tokens, alphas = 1, [], []
        while len(tokens) < max_length:
            logits, state, alpha = attention_step(model.decoder, annotations, state, previous)
            logits[[0, 1]] = -np.inf  # <pad> and <GO> are never written
            previous = int(np.argmax(logits))
            tokens.append(previous)
            alphas.append(alpha)
            if previous == 2:
                break
        stopped.append(tokens[-1] == 2)
        np.testing.assert_array_equal(decoded["tokens"][row], tokens + [0] * (max_length - len(tokens)))
        real = source != 0
        np.testing.assert_allclose(decoded["alignments"][row, :len(tokens)][:, real], alphas, atol=1e-5)
        assert not decoded["alignments"][row, len(tokens):].any() and not decoded["alignments"][row][:, ~real].any()
    assert any(stopped) and not all(stopped)  # both ways of ending are checked


def pool(attention, states_):
    """u_j = tanh(W h_j + b), alpha = softmax_j(u_j^T u), pooled = sum_j alpha_j h_j."""
    kernel, bias, context = (weights(w) for w in attention.weights)
    pooled, alpha = numpy_pooling(states_[None], kernel, bias, context, np.ones((1, len(states_)), bool))
    return pooled[0], alpha[0]


def hierarchical(encoder, document):
    """The HAN encoder on one document `(sentences, words)`: word level h_ij = GRU_w(h_i,j-1, e(w_ij)),
    s_i = sum_j alpha_ij h_ij with alpha_ij = softmax_j(u_ij^T u_w); sentence level h_i = GRU_s(h_i-1, s_i),
    s = sum_i alpha_i h_i against u_s. Padded words and sentences are left out: never read.
    Returns the sentence states h_i, the document vector s, the word weights (one array per
    sentence) and the sentence weights."""
    embeddings = weights(encoder.embedding.embeddings)
    sentences = [sentence[sentence != 0] for sentence in document if (sentence != 0).any()]
    vectors, word_weights = [], []
    for words in sentences:
        word_states, _ = states(cells(encoder.word_rnn), embeddings[words])
        s_i, alpha_words = pool(encoder.word_attention, word_states)
        vectors.append(s_i)
        word_weights.append(alpha_words)
    sentence_states, _ = states(cells(encoder.sentence_rnn), np.array(vectors))
    document_vector, sentence_weights = pool(encoder.sentence_attention, sentence_states)
    return sentence_states, document_vector, word_weights, sentence_weights


DOCUMENTS = np.array([[[4, 9, 5, 0], [8, 6, 11, 12], [10, 0, 0, 0]],
                      [[7, 7, 3, 0], [0, 0, 0, 0], [0, 0, 0, 0]]], "int32")  # 3 and 1 real sentences


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bidirectional", "one-directional"])
def test_hierarchical_attention_classifier_equals_the_equations_in_numpy(bidirectional):
    """`hierarchical` above, then P(y | d) = softmax(W_c s + b_c); padding gets exactly 0 weight."""
    model = DocumentClassifier(SOURCE_VOCAB, 4, embedding_dim=6, word_units=5, sentence_units=4,
                               attention_units=7, bidirectional=bidirectional)
    model.build()
    randomise(model, 3)
    probabilities = np.asarray(model(DOCUMENTS))
    explained = {key: np.asarray(value) for key, value in model.encode(DOCUMENTS).items()}
    for row, document in enumerate(DOCUMENTS):
        _, document_vector, word_weights, sentence_weights = hierarchical(model.encoder, document)
        for i, alpha_words in enumerate(word_weights):
            np.testing.assert_allclose(explained["word_weights"][row, i, :len(alpha_words)], alpha_words, atol=1e-5)
            assert not explained["word_weights"][row, i, len(alpha_words):].any()
        count = len(sentence_weights)
        np.testing.assert_allclose(explained["sentence_weights"][row, :count], sentence_weights, atol=1e-5)
        assert not explained["sentence_weights"][row, count:].any()
        np.testing.assert_allclose(explained["document"][row], document_vector, atol=1e-5)
        expected = softmax(document_vector @ weights(model.classifier.kernel) + weights(model.classifier.bias))
        np.testing.assert_allclose(probabilities[row], expected, atol=1e-5)
    assert np.ptp(explained["sentence_weights"][0, :3]) > 0.01  # not a uniform average (to 1e-5, above)


@pytest.mark.parametrize("attention", [True, False], ids=["attention", "plain"])
def test_dialog_model_equals_the_equations_in_numpy(attention):
    """The context read by `hierarchical`, s_0 = tanh(W_bridge s + b_bridge); then the attentional decoder
    over the utterance states h_i, or the plain one (option 1) from s_0 alone."""
    model = HierarchicalDialogModel(SOURCE_VOCAB, embedding_dim=6, word_units=5, sentence_units=4, units=8,
                                    attention=attention)
    model.build()
    randomise(model, 6)
    target_in = TARGET_IN[:2]
    logits, alignments = (np.asarray(x) for x in model.forward(DOCUMENTS, target_in))
    for row, context in enumerate(DOCUMENTS):
        utterance_states, context_vector, _, _ = hierarchical(model.encoder, context)
        s_0 = np.tanh(context_vector @ weights(model.bridge.kernel) + weights(model.bridge.bias))
        if attention:
            expected, alphas = attention_decoder(model.decoder, utterance_states, s_0, target_in[row])
            np.testing.assert_allclose(alignments[row, :, :len(utterance_states)], alphas, atol=1e-5)
            assert not alignments[row, :, len(utterance_states):].any()
        else:
            expected = plain_decoder(model.decoder, s_0, None, target_in[row])
        assert np.abs(expected).max() > 1.0
        np.testing.assert_allclose(logits[row], expected, atol=2e-5, rtol=1e-5)


def simple_rnn(cell, x, s):
    """s_t = tanh(U x_t + W s_{t-1} + b)."""
    return np.tanh(x @ weights(cell.kernel) + s @ weights(cell.recurrent_kernel) + weights(cell.bias))


def lstm(cell, x, h, c):
    """Keras's gate order i, f, candidate, o: c_t = f * c_{t-1} + i * tanh(.), h_t = o * tanh(c_t)."""
    units = h.shape[-1]
    z = x @ weights(cell.kernel) + h @ weights(cell.recurrent_kernel) + weights(cell.bias)
    i, f, o = sigmoid(z[:units]), sigmoid(z[units:2 * units]), sigmoid(z[3 * units:])
    c = f * c + i * np.tanh(z[2 * units:3 * units])
    return o * np.tanh(c), c


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_language_model_equals_the_equations_in_numpy(cell):
    """s_t = RNN(s_{t-1}, e(y_{t-1})) from the learned s_0 (h_0 and c_0 for the LSTM), P(y_t) = softmax(V s_t + c)."""
    model = RNNLanguageModel(TARGET_VOCAB, embedding_dim=6, units=8, cell=cell)
    model.build((None, None))
    randomise(model, 4)
    logits = np.asarray(model(TARGET_IN))
    rnn_cell, embeddings = model.rnn.cell, weights(model.embedding.embeddings)
    V, c = weights(model.output_layer.kernel), weights(model.output_layer.bias)
    for row, tokens in enumerate(TARGET_IN):
        real = tokens[: np.count_nonzero(tokens)]  # right-padded: the real tokens come first
        state = weights(model.initial_state)  # (states, units): s_0, or h_0 and c_0
        expected = []
        for token in real:
            x = embeddings[token]
            if cell == "lstm":
                state = np.stack(lstm(rnn_cell, x, state[0], state[1]))
            else:
                state = (simple_rnn if cell == "rnn" else gru)(rnn_cell, x, state[0])[None]
            expected.append(state[0] @ V + c)
        assert np.abs(expected).max() > 1.0
        np.testing.assert_allclose(logits[row, :len(real)], np.array(expected), atol=2e-5, rtol=1e-5)
