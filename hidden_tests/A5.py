"""Hidden tests of A5: hierarchical attention for document classification (7 points).

Lecture orientation: `W` is `(units, state_dim)`, `b` and `u` are `(units,)`;
`u_j = tanh(W h_j + b)`, `alpha_j = softmax_j(u_j . u)` (padding: exactly 0,
a row of padding: all zeros), `s = sum_j alpha_j h_j`.
"""

import numpy as np

from course_lib.grading.checks.answers import CHECKS_ANSWERS, locked_answers_setup, with_locked_answers
from course_lib.grading.spec import Assignment, Question, Test, allclose, exact


def attention_pool(states, mask, W, b, u):
    hidden = np.tanh(states @ W.T + b)  # (..., T, units)
    scores = hidden @ u  # (..., T)
    mask = np.asarray(mask, dtype=bool)
    scores = np.where(mask, scores, -1e9)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores) * mask
    totals = weights.sum(axis=-1, keepdims=True)
    weights = np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 0.0)
    return np.einsum("...t,...td->...d", weights, states), weights


def sentence_vectors(word_states, word_mask, W_w, b_w, u_w):
    batch, sentences, words, dim = word_states.shape
    pooled, weights = attention_pool(
        word_states.reshape(batch * sentences, words, dim), word_mask.reshape(batch * sentences, words), W_w, b_w, u_w
    )
    return pooled.reshape(batch, sentences, dim), weights.reshape(batch, sentences, words)


def sentence_mask(word_mask):
    return np.asarray(word_mask, dtype=bool).any(axis=-1)


def class_probabilities(document, V, b):
    logits = document @ V.T + b
    logits = logits - logits.max(axis=-1, keepdims=True)
    return np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)


def _word_mask(rng, batch, sentences, words):
    lengths = rng.integers(0, words + 1, size=(batch, sentences))
    lengths[:, 0] = np.maximum(lengths[:, 0], 1)
    return np.arange(words)[None, None, :] < lengths[..., None]


def _pool_inputs(batch, length, dim, units, empty_row=False):
    def make(rng):
        lengths = rng.integers(1, length + 1, size=batch)
        lengths[0] = length
        if empty_row:
            lengths[-1] = 0
        return {
            "states": rng.normal(size=(batch, length, dim)),
            "mask": np.arange(length)[None, :] < lengths[:, None],
            "W": rng.normal(size=(units, dim)) / np.sqrt(dim),
            "b": 0.1 * rng.normal(size=units),
            "u": rng.normal(size=units),
        }

    return make


def _sentence_inputs(rng):
    batch, sentences, words, dim, units = 2, 4, 5, 6, 3
    return {
        "word_states": rng.normal(size=(batch, sentences, words, dim)),
        "word_mask": _word_mask(rng, batch, sentences, words),
        "W": rng.normal(size=(units, dim)) / np.sqrt(dim),
        "b": 0.1 * rng.normal(size=units),
        "u": rng.normal(size=units),
    }


POOL_CALL = "student.attention_pool(inputs['states'], inputs['mask'], inputs['W'], inputs['b'], inputs['u'])"
SENTENCE_CALL = "student.sentence_vectors(inputs['word_states'], inputs['word_mask'], inputs['W'], inputs['b'], inputs['u'])"


def _pick(index, name, row=None):
    """Compares part `index` of a `(vectors, weights)` pair; only its `row` when given."""
    base = allclose(rtol=1e-4, atol=1e-6)

    def compare(got, expected, inputs):
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False, "expected a tuple of two arrays (vectors, weights)"
        got_part, expected_part = got[index], expected[index]
        if row is not None:
            got_part = np.asarray(got_part)
            if got_part.shape != expected_part.shape:
                return False, f"{name}: wrong shape {got_part.shape}, expected {expected_part.shape}"
            got_part, expected_part = got_part[row], expected_part[row]
        ok, reason = base(got_part, expected_part, inputs)
        return ok, reason.replace("result", name, 1)

    return compare


def _padding_row(got, expected, inputs):
    """The last row, made of padding, gives zeros and no NaN, and the other rows are right too.

    The padding row is judged first, for the reason; then the whole output, so that an answer
    that returns zeros everywhere does not earn this point.
    """
    for index, name in enumerate(("pooled", "weights")):
        ok, reason = _pick(index, f"{name} of the padding row", row=-1)(got, expected, inputs)
        if not ok:
            return ok, reason
    for index, name in enumerate(("pooled", "weights")):
        ok, reason = _pick(index, f"{name} of the other rows")(got, expected, inputs)
        if not ok:
            return ok, reason
    return True, ""


ASSIGNMENT = Assignment(
    id="A5",
    notebook="A5_hierarchical_attention",
    questions=[
        Question("pool", "attention pooling against a learned vector u"),
        Question("sentences", "word attention inside every sentence"),
        Question("mask", "which sentences hold words"),
        Question("classify", "P(y | document) = softmax(V s + b)"),
    ],
    # The visible checks' own formulas (`common._additive_scores`, `common._softmax_rows`) are out of reach while a
    # student's function runs (`answers.call_without_library_answers`): an answer that calls them scores zero.
    tests=with_locked_answers([
        Test("pool: weights over a padded batch", "pool", 1.0, call=POOL_CALL, inputs=_pool_inputs(4, 7, 5, 3),
             expected=lambda i: attention_pool(i["states"], i["mask"], i["W"], i["b"], i["u"]), compare=_pick(1, "weights")),
        Test("pool: pooled vectors", "pool", 1.0, call=POOL_CALL, inputs=_pool_inputs(3, 6, 4, 8),
             expected=lambda i: attention_pool(i["states"], i["mask"], i["W"], i["b"], i["u"]), compare=_pick(0, "pooled")),
        Test("pool: a row of padding gives zeros, not NaN", "pool", 1.0, call=POOL_CALL,
             inputs=_pool_inputs(3, 5, 4, 4, empty_row=True),
             expected=lambda i: attention_pool(i["states"], i["mask"], i["W"], i["b"], i["u"]),
             compare=_padding_row),
        Test("sentences: vectors of 2 documents x 4 sentences", "sentences", 1.0, call=SENTENCE_CALL,
             inputs=_sentence_inputs,
             expected=lambda i: sentence_vectors(i["word_states"], i["word_mask"], i["W"], i["b"], i["u"]),
             compare=_pick(0, "sentence vectors"), substitute=("attention_pool",)),
        Test("sentences: word weights", "sentences", 1.0, call=SENTENCE_CALL, inputs=_sentence_inputs,
             expected=lambda i: sentence_vectors(i["word_states"], i["word_mask"], i["W"], i["b"], i["u"]),
             compare=_pick(1, "word weights"), substitute=("attention_pool",)),
        Test("mask: documents with empty sentences", "mask", 1.0,
             call="student.sentence_mask(inputs['word_mask'])",
             inputs=lambda rng: {"word_mask": _word_mask(rng, 3, 5, 4)},
             expected=lambda i: sentence_mask(i["word_mask"]), compare=exact()),
        Test("classify: 5 classes", "classify", 0.5,
             call="student.class_probabilities(inputs['document'], inputs['V'], inputs['b'])",
             inputs=lambda rng: {"document": rng.normal(size=(4, 6)), "V": rng.normal(size=(5, 6)), "b": rng.normal(size=5)},
             expected=lambda i: class_probabilities(i["document"], i["V"], i["b"])),
        # Logits in the thousands (a long, confident document vector): exp() overflows
        # unless each row's largest logit is subtracted first.
        Test("classify: large logits (a stable softmax)", "classify", 0.5,
             call="student.class_probabilities(inputs['document'], inputs['V'], inputs['b'])",
             inputs=lambda rng: {"document": 2000.0 * rng.normal(size=(3, 6)), "V": rng.normal(size=(4, 6)),
                                 "b": rng.normal(size=4)},
             expected=lambda i: class_probabilities(i["document"], i["V"], i["b"])),
    ]),
    kernel_setup=locked_answers_setup(CHECKS_ANSWERS),
    references={"attention_pool": attention_pool},
    cell_timeout=60,  # graded cells take under 4 s in the fast profile; training cells are skipped
    notebook_timeout=600,
    memory_mb=8192,
)
