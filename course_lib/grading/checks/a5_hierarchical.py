"""A5: hierarchical attention: attention pooling against `u_w` / `u_s`, sentence vectors and mask, class probabilities."""

import numpy as np

from course_lib.grading.checks.answers import CHECKS_ANSWERS, call_without_library_answers
from course_lib.grading.checks.common import (
    KEEPDIMS_HINT, TANH_PLACE_HINT, WEIGHTED_SUM_HINT, CheckFailed, as_numpy, check_close, check_finite, check_shape,
    check_weights, _call, _fail, _passed, _rng, _softmax_rows,
)


def _a5_parameters(rng, dim=4, units=3):
    return rng.normal(size=(units, dim)) / np.sqrt(dim), 0.1 * rng.normal(size=units), rng.normal(size=units)


def check_attention_pool(attention_pool):
    rng = _rng(7)
    W, b, u = _a5_parameters(rng)
    states = rng.normal(size=(3, 5, 4))
    mask = np.arange(5)[None, :] < np.array([[5], [2], [3]])
    result = _call(attention_pool, (states, mask, W, b, u), "states of shape (3, 5, 4) and a (3, 5) mask",
                   "u_j = tanh(W h_j + b) for every position, then alpha = softmax(u_j . u) over the positions.",
                   broadcast_hint=f"{WEIGHTED_SUM_HINT} In the softmax, {KEEPDIMS_HINT[0].lower()}{KEEPDIMS_HINT[1:]}")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("attention_pool should return (pooled, weights).")
    pooled = check_shape(result[0], (3, 4), "pooled")
    weights = check_weights(result[1], mask=mask, name="weights", over="the positions of each row")
    check_close(pooled, np.einsum("bt,btd->bd", weights, states), "pooled",
                hint="the pooled vector is the weighted sum of the states h_j.")
    _, flat = attention_pool(states, mask, W, b, np.zeros_like(u))
    check_close(flat, mask / mask.sum(axis=1, keepdims=True), "weights with u = 0",
                hint="with u = 0 every score is 0, so the real positions share the weight equally.")
    _, shifted = attention_pool(states, mask, W, b + 1.0, u)
    if np.allclose(as_numpy(shifted), weights):
        # Without the tanh, b only adds b.u to every score, which the softmax cancels.
        _fail("the weights do not change when b changes: u_j = tanh(W h_j + b). Is b missing, or the tanh?")
    big = attention_pool(50 * states, mask, W, b, u)[1]
    check_finite(big, "weights for large states")
    empty = np.zeros((1, 5), dtype=bool)
    pooled_empty, weights_empty = attention_pool(states[:1], empty, W, b, u)
    if not (np.all(np.isfinite(as_numpy(weights_empty))) and np.allclose(as_numpy(weights_empty), 0.0)
            and np.allclose(as_numpy(pooled_empty), 0.0)):
        _fail("a row made only of padding must give zero weights and a zero vector (not NaN).")
    check_close(weights, _softmax_rows(np.tanh(states @ W.T + b) @ u, mask), "weights",
                hint=TANH_PLACE_HINT.format(v="u", formula="u_j = tanh(W h_j + b), alpha_j = softmax_j(u_j^T u) "
                                                           "over the real positions"))
    _passed("attention_pool")


def check_sentence_vectors(sentence_vectors, attention_pool):
    rng = _rng(8)
    W, b, u = _a5_parameters(rng)
    word_states = rng.normal(size=(2, 3, 5, 4))
    word_mask = np.arange(5)[None, None, :] < np.array([[5, 2, 0], [1, 4, 3]])[..., None]
    result = sentence_vectors(word_states, word_mask, W, b, u)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("sentence_vectors should return (vectors, word_weights).")
    vectors = check_shape(result[0], (2, 3, 4), "sentence vectors")
    weights = check_shape(result[1], (2, 3, 5), "word weights")
    single, single_weights = attention_pool(word_states[1, 1:2], word_mask[1, 1:2], W, b, u)
    check_close(vectors[1, 1], as_numpy(single)[0], "the vector of document 1, sentence 1",
                hint="each sentence is pooled on its own, over its own real words: pass attention_pool that "
                     "sentence's word mask.")
    check_close(weights[1, 1], as_numpy(single_weights)[0], "the word weights of document 1, sentence 1",
                hint="return the weights attention_pool gave each sentence's words, not a uniform spread.")
    if not np.allclose(vectors[0, 2], 0.0) or not np.allclose(weights[0, 2], 0.0):
        _fail("an empty (padded) sentence must get a zero vector and zero weights.")
    _passed("sentence_vectors")


def check_sentence_mask(sentence_mask):
    word_mask = np.array([[[True, True, False], [False, False, False]], [[True, False, False], [True, True, True]]])
    result = np.asarray(sentence_mask(word_mask))
    check_shape(result, (2, 2), "sentence_mask(word_mask)")
    if result.tolist() != [[True, False], [True, True]]:
        _fail("a sentence is real when at least one of its words is.")
    _passed("sentence_mask")


def check_class_probabilities(class_probabilities):
    rng = _rng(9)
    document, V, b = rng.normal(size=(2, 4)), rng.normal(size=(3, 4)), rng.normal(size=3)
    probabilities = check_shape(call_without_library_answers(class_probabilities, lambda: class_probabilities(document, V, b),
                                                             CHECKS_ANSWERS, error=CheckFailed),
                                (2, 3), "class_probabilities")
    check_weights(probabilities, name="class probabilities", over="the classes")
    if np.argmax(probabilities[0]) != np.argmax(V @ document[0] + b):
        _fail("the most probable class must be the one with the largest V s + b.")
    without_V = check_shape(class_probabilities(document, np.zeros_like(V), b), (2, 3), "class_probabilities")
    expected = _softmax_rows(np.stack([b, b]))  # softmax(b) for both documents
    check_close(without_V, expected, "class probabilities with V = 0",
                hint="with V = 0 they are softmax(b) for every document: is b missing?")
    confident = class_probabilities(1000.0 * document, V, b)  # logits in the thousands
    check_weights(confident, name="class probabilities for logits in the thousands", over="the classes")
    _passed("class_probabilities")
