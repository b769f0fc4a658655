"""Hidden tests of A1: Bahdanau attention from the equations (10 points).

Never handed to students. The reference below follows the lecture's
orientation: `U_att` is `(d_1, query_dim)`, `W_att` is `(d_1, value_dim)`,
`v_att` is `(d_1,)`, and a batch of states is a row per example.
"""

import numpy as np

from course_lib.grading.checks.answers import CHECKS_ANSWERS, locked_answers_setup, with_locked_answers
from course_lib.grading.spec import Assignment, Question, Test, allclose, exact


# -- reference implementation (runs in the grader, and is swapped into the
#    student's kernel only while a composite part is being tested) ---------------


def project_keys(values, W_att):
    return np.einsum("bsd,ud->bsu", values, W_att)  # (batch, src_len, units)


def attention_scores(query, projected_keys, U_att, v_att):
    projected_query = query @ U_att.T  # (batch, units)
    return np.tanh(projected_keys + projected_query[:, None, :]) @ v_att  # (batch, src_len)


def apply_mask(scores, mask):
    return np.where(np.asarray(mask, dtype=bool), scores, -1e9)


def softmax(scores):
    shifted = scores - np.max(scores, axis=-1, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=-1, keepdims=True)


def context_vector(weights, values):
    return np.einsum("bs,bsd->bd", weights, values)  # (batch, value_dim)


def attend_over_steps(decoder_states, values, mask, U_att, W_att, v_att):
    keys = project_keys(values, W_att)
    contexts, all_weights = [], []
    for step in range(decoder_states.shape[1]):
        scores = attention_scores(decoder_states[:, step], keys, U_att, v_att)
        weights = softmax(apply_mask(scores, mask))
        contexts.append(context_vector(weights, values))
        all_weights.append(weights)
    return np.stack(contexts, axis=1), np.stack(all_weights, axis=1)


def attention_shapes(batch, src_len, query_dim, value_dim, units):
    return {
        "U_att": (units, query_dim),
        "W_att": (units, value_dim),
        "v_att": (units,),
        "scores": (batch, src_len),
        "weights": (batch, src_len),
        "context": (batch, value_dim),
    }


def attention_parameter_count(query_dim, value_dim, units):
    return units * query_dim + units * value_dim + units


# -- hidden inputs ---------------------------------------------------------------


def _padding_mask(rng, batch, src_len):
    lengths = rng.integers(1, src_len + 1, size=batch)
    lengths[0] = src_len
    return np.arange(src_len)[None, :] < lengths[:, None]


def _attention_inputs(batch, src_len, query_dim, value_dim, units, scale=1.0):
    def make(rng):
        return {
            "query": scale * rng.normal(size=(batch, query_dim)),
            "values": scale * rng.normal(size=(batch, src_len, value_dim)),
            "U_att": rng.normal(size=(units, query_dim)) / np.sqrt(query_dim),
            "W_att": rng.normal(size=(units, value_dim)) / np.sqrt(value_dim),
            "v_att": rng.normal(size=(units,)),
        }

    return make


def _keys_test(name, sizes, points):
    return Test(
        name, "keys", points,
        call="student.project_keys(inputs['values'], inputs['W_att'])",
        inputs=_attention_inputs(*sizes),
        expected=lambda i: project_keys(i["values"], i["W_att"]),
    )


def _score_test(name, sizes, points, scale=1.0):
    def make(rng):
        inputs = _attention_inputs(*sizes, scale=scale)(rng)
        inputs["keys"] = project_keys(inputs["values"], inputs["W_att"])
        return inputs

    return Test(
        name, "score", points,
        call="student.attention_scores(inputs['query'], inputs['keys'], inputs['U_att'], inputs['v_att'])",
        inputs=make,
        expected=lambda i: attention_scores(i["query"], i["keys"], i["U_att"], i["v_att"]),
    )


def _mask_inputs(batch, src_len):
    def make(rng):
        return {"scores": rng.normal(scale=3.0, size=(batch, src_len)), "mask": _padding_mask(rng, batch, src_len)}

    return make


def _softmax_inputs(shape, scale, shift=0.0):
    def make(rng):
        return {"scores": shift + rng.normal(scale=scale, size=shape)}

    return make


def _context_inputs(batch, src_len, value_dim, real_lengths=None):
    """Random weights (rows sum to 1) and values; with `real_lengths`, the
    positions after each row's length are padding and get weight 0."""
    def make(rng):
        scores = rng.normal(size=(batch, src_len))
        if real_lengths is not None:
            scores = apply_mask(scores, np.arange(src_len)[None, :] < np.array(real_lengths)[:, None])
        return {
            "weights": softmax(scores),
            "values": rng.normal(size=(batch, src_len, value_dim)),
        }

    return make


def _steps_inputs(rng):
    batch, steps, src_len, dim, units = 3, 4, 6, 5, 7
    return {
        # query_dim == value_dim, so projecting the keys with the wrong
        # matrix runs without a shape error and must be caught by the values.
        "states": rng.normal(size=(batch, steps, dim)),
        "values": rng.normal(size=(batch, src_len, dim)),
        "mask": _padding_mask(rng, batch, src_len),
        "U_att": rng.normal(size=(units, dim)) / np.sqrt(dim),
        "W_att": rng.normal(size=(units, dim)) / np.sqrt(dim),
        "v_att": rng.normal(size=(units,)),
    }


STEPS_CALL = (
    "student.attend_over_steps(inputs['states'], inputs['values'], inputs['mask'], "
    "inputs['U_att'], inputs['W_att'], inputs['v_att'])"
)
PARTS = ("project_keys", "attention_scores", "apply_mask", "softmax", "context_vector")


def _shape_test(name, sizes, points):
    return Test(
        name, "shapes", points,
        call="student.attention_shapes(*inputs['sizes'])",
        inputs=lambda rng: {"sizes": sizes},
        expected=lambda i: attention_shapes(*i["sizes"]),
        compare=exact(),
    )


def _count_test(name, sizes, points):
    return Test(
        name, "params", points,
        call="student.attention_parameter_count(*inputs['sizes'])",
        inputs=lambda rng: {"sizes": sizes},
        expected=lambda i: attention_parameter_count(*i["sizes"]),
        compare=exact(int),
    )


ASSIGNMENT = Assignment(
    id="A1",
    notebook="A1_bahdanau_attention",
    questions=[
        Question("keys", "W_att h_j for every source position"),
        Question("score", "e_j = v_att^T tanh(U_att s_{t-1} + W_att h_j)"),
        Question("mask", "padding gets a large negative score"),
        Question("softmax", "alpha = softmax over the source positions"),
        Question("context", "c_t = sum_j alpha_j h_j"),
        Question("steps", "attention at every decoder step, keys projected once"),
        Question("shapes", "shapes of the parameters and outputs"),
        Question("params", "number of attention parameters"),
    ],
    # The visible checks' own formulas (`common._additive_scores`, `common._softmax_rows`) are out of reach while a
    # student's function runs (`answers.call_without_library_answers`): an answer that calls them scores zero.
    tests=with_locked_answers([
        _keys_test("keys: batch of 3, 6 positions, 5-d values, 4 units", (3, 6, 8, 5, 4), 0.5),
        _keys_test("keys: one example, one position", (1, 1, 3, 2, 7), 0.5),
        _score_test("score: batch of 4, units differ from both state sizes", (4, 7, 6, 5, 3), 1.0),
        _score_test("score: large states (tanh saturates)", (2, 5, 4, 4, 6), 0.5, scale=10.0),
        _score_test("score: single source position", (3, 1, 2, 5, 4), 0.5),
        Test("mask: random padding", "mask", 0.4,
             call="student.apply_mask(inputs['scores'], inputs['mask'])",
             inputs=_mask_inputs(5, 8), expected=lambda i: apply_mask(i["scores"], i["mask"])),
        # the docstring and the visible check ask for a new array: the scores handed in stay as they were
        # (and the result is right: returning the scores untouched earns nothing here either)
        Test("mask: a new array, the scores passed in left unchanged", "mask", 0.2,
             call="(lambda scores: (student.apply_mask(scores, inputs['mask']), scores))(inputs['scores'].copy())",
             inputs=_mask_inputs(5, 8), expected=lambda i: (apply_mask(i["scores"], i["mask"]), i["scores"]),
             compare=allclose(names=("masked scores", "scores passed in"))),
        Test("mask: heavy padding", "mask", 0.4,
             call="student.apply_mask(inputs['scores'], inputs['mask'])",
             inputs=lambda rng: {"scores": rng.normal(size=(4, 9)),
                                 "mask": np.arange(9)[None, :] < np.array([[9], [1], [2], [5]])},
             expected=lambda i: apply_mask(i["scores"], i["mask"])),
        Test("softmax: random scores 4x7", "softmax", 1.0,
             call="student.softmax(inputs['scores'])",
             inputs=_softmax_inputs((4, 7), 2.0), expected=lambda i: softmax(i["scores"])),
        Test("softmax: 3-D scores with large values", "softmax", 1.0,
             call="student.softmax(inputs['scores'])",
             # Rows around +1000 and around -1000: exp() overflows above about
             # 709 and underflows to 0 below about -745, so only a softmax
             # that subtracts each row's own maximum passes (the maximum of
             # the whole array leaves the -1000 rows as 0 / 0).
             inputs=_softmax_inputs((2, 3, 5), 3.0, shift=np.array([[[1000.0], [-1000.0], [1000.0]],
                                                                      [[-1000.0], [1000.0], [-1000.0]]])),
             expected=lambda i: softmax(i["scores"])),
        Test("context: random weights", "context", 0.5,
             call="student.context_vector(inputs['weights'], inputs['values'])",
             inputs=_context_inputs(3, 6, 4), expected=lambda i: context_vector(i["weights"], i["values"])),
        Test("context: padded positions (weight 0), wide values", "context", 0.5,
             call="student.context_vector(inputs['weights'], inputs['values'])",
             inputs=_context_inputs(2, 3, 9, real_lengths=(1, 2)),
             expected=lambda i: context_vector(i["weights"], i["values"])),
        Test("steps: 4 decoder states over a padded batch", "steps", 1.0,
             call=STEPS_CALL, inputs=_steps_inputs,
             expected=lambda i: attend_over_steps(i["states"], i["values"], i["mask"], i["U_att"], i["W_att"], i["v_att"]),
             compare=allclose(names=("contexts", "weights")), substitute=PARTS,
             calls={"project_keys": 1}),  # the keys are projected once, before the loop
        _shape_test("shapes: batch 8, 11 positions, 64-d state, 32-d values, 16 units", (8, 11, 64, 32, 16), 0.5),
        # All five sizes differ, so a transposed U_att or W_att is caught here too.
        _shape_test("shapes: batch 2, 3 positions, 5-d state, 7-d values, 4 units", (2, 3, 5, 7, 4), 0.5),
        _count_test("params: 300-d state, 200-d values, 50 units", (300, 200, 50), 0.5),
        _count_test("params: 1024-d state, 2048-d values, 256 units", (1024, 2048, 256), 0.5),
    ]),
    kernel_setup=locked_answers_setup(CHECKS_ANSWERS),
    references={name: globals()[name] for name in PARTS},
    cell_timeout=30,
    notebook_timeout=240,
    memory_mb=4096,
)
