"""A4: attention over image locations: a feature map as locations, attention over them, weights back to the map."""

import numpy as np

from course_lib.grading.checks.common import (
    TANH_PLACE_HINT, as_numpy, check_close, check_indices, check_shape, check_weights, _additive_scores, _call,
    _fail, _passed, _rng, _softmax_rows,
)


def check_feature_map_to_locations(feature_map_to_locations):
    feature_map = np.arange(2 * 3 * 4 * 5, dtype=float).reshape(2, 3, 4, 5)
    locations = check_shape(feature_map_to_locations(feature_map), (2, 12, 5), "locations of a (2, 3, 4, 5) map")
    if not np.array_equal(locations[1, 1 * 4 + 2], feature_map[1, 1, 2]):
        _fail("location j = row * width + col must hold the feature vector of that cell (row-major order).")
    _passed("feature_map_to_locations")


def check_attention_over_locations(attention_over_locations):
    rng = _rng(10)
    state = rng.normal(size=(2, 6))
    locations = rng.normal(size=(2, 9, 4))
    U_att, W_att, v_att = rng.normal(size=(5, 6)) / 2, rng.normal(size=(5, 4)) / 2, rng.normal(size=5)
    result = _call(attention_over_locations, (state, locations, U_att, W_att, v_att),
                   "a state of shape (2, 6) = (batch, state_dim), locations (2, 9, 4) = (batch, L, channels), "
                   "U_att (5, 6), W_att (5, 4) and v_att (5,)",
                   "U_att acts on the decoder state s_{t-1} and W_att on the location vectors a_j: check which "
                   "matrix you use where, and that each one's second axis meets the vector it multiplies.")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("attention_over_locations should return (context, weights).")
    context = check_shape(result[0], (2, 4), "context")
    check_shape(result[1], (2, 9), "weights (batch, L)")
    weights = check_weights(result[1], name="weights over the 9 locations", over="the image locations")
    check_close(context, np.einsum("bl,blc->bc", weights, locations), "context",
                hint="c_t is the weighted sum of the location vectors a_j.")
    _, zero_weights = attention_over_locations(state, locations, U_att, W_att, np.zeros(5))
    check_close(zero_weights, np.full((2, 9), 1 / 9), "weights with v_att = 0",
                hint="with v_att = 0 every score is 0 and every location gets 1/9.")
    _, moved = attention_over_locations(state + 3.0, locations, U_att, W_att, v_att)
    if np.allclose(as_numpy(moved), weights):
        # Without the tanh the state's term is the same at every location and cancels in the softmax.
        _fail("the weights do not depend on the decoder state: use U_att s_{t-1}, inside the tanh "
              "(without the tanh, U_att s_{t-1} adds the same number to every score and cancels).")
    check_close(weights, _softmax_rows(_additive_scores(state, locations @ W_att.T, U_att, v_att)), "weights",
                hint=TANH_PLACE_HINT.format(v="v_att", formula="e_j = v_att^T tanh(U_att s_{t-1} + W_att a_j)"))
    _passed("attention_over_locations")


def check_weights_to_map(weights_to_map):
    weights = np.zeros((2, 6))  # a batch of two: the model's batches hold several steps or images
    weights[0, 4] = 1.0
    weights[1, 2] = 1.0
    grid = check_shape(weights_to_map(weights, 2, 3), (2, 2, 3), "weights_to_map(weights, 2, 3) for 2 rows")
    if grid[0, 1, 1] != 1.0:
        _fail("location 4 of a 2 x 3 grid is row 1, column 1 (j = row * width + col).")
    if grid[1, 0, 2] != 1.0:
        _fail("each row of weights is its own map: row 1's location 2 is its (row 0, column 2).")
    _passed("weights_to_map")


def check_attended_cell(attended_cell):
    weights = np.full(12, 0.05)
    weights[7] = 0.45
    cell = attended_cell(weights, 3, 4)
    if tuple(check_indices(cell, "the (row, col) of attended_cell")) != (1, 3):
        _fail(f"location 7 of a 3 x 4 grid is (row 1, column 3). Received: {cell}")
    _passed("attended_cell")
