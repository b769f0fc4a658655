"""Hidden tests of A4: captioning with attention over image locations (5 points).

Lecture orientation: `U_att` is `(units, state_dim)`, `W_att` `(units, channels)`,
`v_att` `(units,)`; location `j = row * width + col` of a `height x width x
channels` feature map.
"""

import numpy as np

from course_lib.grading.checks.answers import CHECKS_ANSWERS, locked_answers_setup, with_locked_answers
from course_lib.grading.spec import Assignment, Question, Test, allclose, exact


def feature_map_to_locations(feature_map):
    batch, height, width, channels = feature_map.shape
    return feature_map.reshape(batch, height * width, channels)


def attention_over_locations(state, locations, U_att, W_att, v_att):
    hidden = np.tanh(locations @ W_att.T + (state @ U_att.T)[:, None, :])  # (batch, L, units)
    scores = hidden @ v_att  # (batch, L)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
    return np.einsum("bl,blc->bc", weights, locations), weights


def weights_to_map(weights, height, width):
    return np.asarray(weights).reshape(-1, height, width)


def attended_cell(weights, height, width):
    return tuple(int(v) for v in divmod(int(np.argmax(weights)), width))


def _map_inputs(batch, height, width, channels):
    return lambda rng: {"feature_map": rng.normal(size=(batch, height, width, channels))}


def _attention_inputs(batch, locations, channels, state_dim, units, scale=1.0):
    def make(rng):
        return {
            "state": scale * rng.normal(size=(batch, state_dim)),
            "locations": rng.normal(size=(batch, locations, channels)),
            "U_att": rng.normal(size=(units, state_dim)) / np.sqrt(state_dim),
            "W_att": rng.normal(size=(units, channels)) / np.sqrt(channels),
            "v_att": rng.normal(size=units),
        }

    return make


ATTENTION_CALL = (
    "student.attention_over_locations(inputs['state'], inputs['locations'], inputs['U_att'], "
    "inputs['W_att'], inputs['v_att'])"
)


def _expected_attention(i):
    return attention_over_locations(i["state"], i["locations"], i["U_att"], i["W_att"], i["v_att"])


ASSIGNMENT = Assignment(
    id="A4",
    notebook="A4_captioning_attention",
    questions=[
        Question("locations", "a feature map as a list of locations"),
        Question("attention", "attention of a decoder state over the locations"),
        Question("map", "the weights back on the grid"),
        Question("cell", "the most attended cell"),
    ],
    # The visible checks' own formulas (`common._additive_scores`, `common._softmax_rows`) are out of reach while a
    # student's function runs (`answers.call_without_library_answers`): an answer that calls them scores zero.
    tests=with_locked_answers([
        Test("locations: 2 maps of 3 x 4 x 5", "locations", 0.5, call="student.feature_map_to_locations(inputs['feature_map'])",
             inputs=_map_inputs(2, 3, 4, 5), expected=lambda i: feature_map_to_locations(i["feature_map"])),
        Test("locations: 14 x 14 x 8 (VGG's grid)", "locations", 0.5,
             call="student.feature_map_to_locations(inputs['feature_map'])",
             inputs=_map_inputs(1, 14, 14, 8), expected=lambda i: feature_map_to_locations(i["feature_map"])),
        Test("attention: 196 locations", "attention", 1.0, call=ATTENTION_CALL,
             inputs=_attention_inputs(2, 196, 8, 6, 5), expected=_expected_attention,
             compare=allclose(names=("context", "weights"))),
        Test("attention: large states", "attention", 1.0, call=ATTENTION_CALL,
             inputs=_attention_inputs(3, 9, 4, 7, 3, scale=20.0), expected=_expected_attention,
             compare=allclose(names=("context", "weights"))),
        Test("map: 3 x 5 grid", "map", 1.0, call="student.weights_to_map(inputs['weights'], 3, 5)",
             inputs=lambda rng: {"weights": rng.dirichlet(np.ones(15), size=2)},
             expected=lambda i: weights_to_map(i["weights"], 3, 5)),
        Test("cell: 4 x 6 grid", "cell", 1.0,
             call="[student.attended_cell(w, 4, 6) for w in inputs['weights']]",
             inputs=lambda rng: {"weights": rng.dirichlet(np.ones(24) * 0.3, size=5)},
             expected=lambda i: [attended_cell(w, 4, 6) for w in i["weights"]], compare=exact()),
    ]),
    kernel_setup=locked_answers_setup(CHECKS_ANSWERS),
    cell_timeout=60,  # graded cells take under 4 s in the fast profile; training cells are skipped
    notebook_timeout=600,
    memory_mb=8192,
)
