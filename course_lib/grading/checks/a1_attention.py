"""A1: Bahdanau attention: the key projection, scores, mask, softmax, context vector, steps, shapes, parameters."""

import numpy as np

from course_lib.grading.checks.common import (
    KEEPDIMS_HINT, NEGATIVE_SCORE, TANH_PLACE_HINT, WEIGHTED_SUM_HINT, as_numpy, check_close, check_finite,
    check_shape, check_weights, _additive_scores, _call, _fail, _passed, _rng,
)


def _a1_parameters(rng, query_dim=6, value_dim=5, units=4):
    return {
        "U_att": rng.normal(size=(units, query_dim)) / np.sqrt(query_dim),
        "W_att": rng.normal(size=(units, value_dim)) / np.sqrt(value_dim),
        "v_att": rng.normal(size=(units,)),
    }


def check_project_keys(project_keys):
    rng = _rng(1)
    params = _a1_parameters(rng)
    values = rng.normal(size=(2, 3, 5))
    keys = _call(project_keys, (values, params["W_att"]),
                 "values of shape (2, 3, 5) = (batch, src_len, value_dim) and W_att of shape (4, 5) = (units, value_dim)",
                 "W_att h_j multiplies each h_j (value_dim numbers) by W_att, whose second axis is value_dim.")
    keys = check_shape(keys, (2, 3, 4), "project_keys(values, W_att)")
    one_hot = np.zeros((1, 1, 5))
    one_hot[0, 0, 2] = 1.0
    check_close(project_keys(one_hot, params["W_att"])[0, 0], params["W_att"][:, 2], "keys of a one-hot h_j",
                hint="W_att h_j with h_j = e_2 must be column 2 of W_att (W_att has shape (units, value_dim)).")
    swapped = project_keys(values[:, ::-1], params["W_att"])
    check_close(swapped, keys[:, ::-1], "keys of reversed values",
                hint="each key may depend only on its own h_j.")
    _passed("project_keys")


def check_attention_scores(attention_scores):
    """Checks part 2 on its own: the keys W_att h_j are made here, not with your `project_keys`."""
    rng = _rng(2)
    params = _a1_parameters(rng)
    query = rng.normal(size=(2, 6))
    values = rng.normal(size=(2, 3, 5))
    keys = values @ params["W_att"].T  # W_att h_j for every position: (batch, src_len, units)
    scores = _call(attention_scores, (query, keys, params["U_att"], params["v_att"]),
                   "a query of shape (2, 6) = (batch, query_dim), keys (2, 3, 4) = (batch, src_len, units), "
                   "U_att (4, 6) = (units, query_dim) and v_att (4,)",
                   "U_att s_{t-1} multiplies the state (query_dim numbers) by U_att, whose second axis is query_dim.")
    scores = check_shape(scores, (2, 3), "attention_scores(query, keys, U_att, v_att)")
    check_finite(scores, "scores", hint="")
    bound = np.abs(params["v_att"]).sum()
    big = attention_scores(50 * query, 50 * keys, params["U_att"], params["v_att"])
    if np.abs(as_numpy(big)).max() > bound + 1e-6:
        _fail(f"scores exceed sum(|v_att|) = {bound:.3g} for large states: is the tanh missing?")
    zero = attention_scores(query, keys, params["U_att"], np.zeros_like(params["v_att"]))
    check_close(zero, np.zeros((2, 3)), "scores with v_att = 0", hint="the score is a dot product with v_att.")
    other = attention_scores(query + 1.0, keys, params["U_att"], params["v_att"])
    if np.allclose(as_numpy(other), scores):
        _fail("the scores do not change when the decoder state changes: use U_att s_{t-1}.")
    reversed_scores = attention_scores(query, keys[:, ::-1], params["U_att"], params["v_att"])
    check_close(reversed_scores, scores[:, ::-1], "scores of reversed keys",
                hint="score j may depend only on h_j and s_{t-1}.")
    check_close(scores, _additive_scores(query, keys, params["U_att"], params["v_att"]), "scores",
                hint=TANH_PLACE_HINT.format(v="v_att", formula="e_j = v_att^T tanh(U_att s_{t-1} + W_att h_j)"))
    _passed("attention_scores")


def check_apply_mask(apply_mask):
    scores = np.array([[0.5, -1.0, 2.0, 0.1], [1.5, 0.3, -0.2, 0.0]])
    mask = np.array([[True, True, True, False], [True, False, False, False]])
    original = scores.copy()
    masked = check_shape(apply_mask(scores, mask), scores.shape, "apply_mask(scores, mask)")
    if not np.array_equal(scores, original):
        _fail("apply_mask changed its input in place; return a new array.")
    if np.isinf(masked).any():
        _fail("use NEGATIVE_SCORE (-1e9), not -inf: a row of padding would give NaN after the softmax.")
    if np.allclose(masked[~mask], scores[~mask]) and np.allclose(masked[mask], NEGATIVE_SCORE):
        _fail("the real positions got NEGATIVE_SCORE and the padded ones kept their scores: the mask is "
              "inverted (True marks a real position).")
    if np.allclose(masked[~mask], scores[~mask]):
        _fail("padded positions still have their scores: the mask is ignored.")
    if not np.allclose(masked[~mask], NEGATIVE_SCORE):
        _fail("padded positions should get NEGATIVE_SCORE (-1e9).")
    if not np.allclose(masked[mask], scores[mask]):
        _fail("real (unpadded) positions must keep their scores.")
    _passed("apply_mask")


def check_softmax(softmax):
    rng = _rng(3)
    scores = rng.normal(size=(3, 5))
    first = _call(softmax, (scores,), "scores of shape (3, 5)", "softmax works on the last axis of any array.",
                  broadcast_hint=KEEPDIMS_HINT)
    weights = check_weights(check_shape(first, (3, 5), "softmax(scores)"), name="softmax(scores) of shape (3, 5)")
    worked = check_shape(softmax(np.array([[0.0, 0.0, np.log(3.5), np.log(3.5), 0.0]])), (1, 5), "softmax(scores)")
    check_close(worked, [[0.1, 0.1, 0.35, 0.35, 0.1]], "softmax of the lecture's scores [0, 0, ln 3.5, ln 3.5, 0]",
                hint="alpha_j = exp(e_j) / sum_j' exp(e_j').")
    check_close(softmax(scores + 7.0), weights, "softmax(scores + 7)",
                hint="adding the same number to every score must not change the weights.")
    check_finite(softmax(np.array([[1000.0, 999.0, -1000.0]])), "softmax of scores around 1000")
    levels = softmax(np.array([[1000.0, 999.0], [-1000.0, -1001.0]]))  # two rows far apart
    check_finite(levels, "softmax of the rows [1000, 999] and [-1000, -1001]")
    check_close(levels, np.full((2, 2), [1.0, np.exp(-1.0)]) / (1.0 + np.exp(-1.0)),
                "softmax of the rows [1000, 999] and [-1000, -1001]",
                hint="each row is normalised on its own, and only differences within a row matter.")
    check_weights(softmax(rng.normal(size=(2, 3, 4))), name="softmax of a (2, 3, 4) block")
    _passed("softmax")


def check_context_vector(context_vector):
    rng = _rng(4)
    values = rng.normal(size=(2, 4, 3))
    one_hot = np.zeros((2, 4))
    one_hot[0, 1] = one_hot[1, 3] = 1.0
    context = check_shape(_call(context_vector, (one_hot, values), "weights of shape (2, 4) and values (2, 4, 3)",
                                "c_t = sum_j alpha_j h_j for every example of the batch.",
                                broadcast_hint=WEIGHTED_SUM_HINT), (2, 3), "context_vector(weights, values)")
    check_close(context, np.stack([values[0, 1], values[1, 3]]), "context for one-hot weights",
                hint="all weight on position j must give c_t = h_j.")
    uniform = np.full((2, 4), 0.25)
    check_close(context_vector(uniform, values), values.mean(axis=1), "context for uniform weights",
                hint="equal weights must give the average of the h_j.")
    _passed("context_vector")


def check_attend_over_steps(attend_over_steps):
    rng = _rng(5)
    # query_dim != value_dim, so U_att and W_att cannot be swapped unnoticed.
    params = _a1_parameters(rng, query_dim=6, value_dim=5, units=4)
    states = rng.normal(size=(2, 3, 6))
    values = rng.normal(size=(2, 4, 5))
    mask = np.array([[True, True, True, True], [True, True, False, False]])
    result = _call(attend_over_steps, (states, values, mask, params["U_att"], params["W_att"], params["v_att"]),
                   "decoder states of 6 numbers (query_dim) and values h_j of 5 (value_dim), with U_att of shape "
                   "(4, 6) and W_att of shape (4, 5)",
                   "U_att acts on the decoder states s_{t-1} and W_att on the values h_j: check which matrix you "
                   "pass where.")
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("attend_over_steps should return a tuple (contexts, weights).")
    contexts = check_shape(result[0], (2, 3, 5), "contexts")
    weights = check_shape(result[1], (2, 3, 4), "weights")
    check_weights(weights, mask=mask[:, None, :], name="weights at every step")
    check_close(contexts, np.einsum("bts,bsd->btd", weights, values), "contexts",
                hint="each context must be the weighted sum of the h_j with that step's weights.")
    # Row t of decoder_states is the query of step t (it plays s_{t-1}): changing
    # only row 1 may change only the weights of step 1.
    changed_states = states.copy()
    changed_states[:, 1] += 2.0
    changed = as_numpy(attend_over_steps(changed_states, values, mask, params["U_att"], params["W_att"],
                                         params["v_att"])[1], "weights")
    moved = [step for step in range(3) if not np.allclose(changed[:, step], weights[:, step], atol=1e-9)]
    if not moved:  # no step moved: the query never reaches the weights, whatever the indexing
        _fail("changing decoder_states[:, 1] changed no weights at all: the weights do not depend on the decoder "
              "state. Without the tanh, U_att s_{t-1} adds the same number to every score, which the softmax "
              "cancels; check attention_scores, and that each step passes its state to it.")
    if moved != [1]:
        _fail(f"changing only decoder_states[:, 1] changed the weights of steps {moved}, expected step 1 alone: "
              "step t attends with decoder_states[:, t].")
    made = _calls_made(attend_over_steps, "project_keys",
                       lambda: attend_over_steps(states, values, mask, params["U_att"], params["W_att"], params["v_att"]))
    if made == 0:
        _fail("attend_over_steps never called your project_keys: use it, once and before the loop, for the "
              "keys W_att h_j.")
    if made is not None and made != 1:
        _fail(f"attend_over_steps called project_keys {made} time(s) for 3 decoder steps: call it once, before the "
              "loop. W_att h_j does not depend on the step, so it is computed once per source sentence.")
    _passed("attend_over_steps")


def _calls_made(function, name, run):
    """How many times `run()` calls the global `name` of `function`'s notebook (None when there is none)."""
    namespace = getattr(function, "__globals__", None)
    if not isinstance(namespace, dict) or not callable(namespace.get(name)):
        return None
    original, count = namespace[name], [0]

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    namespace[name] = counted
    try:
        run()
    finally:
        namespace[name] = original
    return count[0]


_SHAPE_HINTS = {
    "U_att": "U_att multiplies s_{t-1} (query_dim numbers) and gives a vector of units numbers; "
             "the lecture writes a matrix as (rows, columns).",
    "W_att": "W_att multiplies h_j (value_dim numbers) and gives a vector of units numbers, like U_att s_{t-1}; "
             "the lecture writes a matrix as (rows, columns).",
    "v_att": "v_att turns a vector of units numbers into one number per position, by a dot product.",
    "scores": "there is one score per source position, for every example of the batch.",
    "weights": "the softmax turns each score into one weight, so the weights have the shape of the scores.",
    "context": "c_t is a weighted average of the h_j (value_dim numbers each), one per example of the batch.",
}


def check_attention_shapes(attention_shapes):
    expected_keys = set(_SHAPE_HINTS)
    # Two sets of sizes, all different from each other, so that every dimension
    # has to be the right one and numbers typed in are noticed.
    for sizes in (dict(batch=64, src_len=20, query_dim=512, value_dim=256, units=128),
                  dict(batch=3, src_len=7, query_dim=10, value_dim=6, units=4)):
        shapes = attention_shapes(**sizes)
        if not isinstance(shapes, dict):
            _fail(f"attention_shapes should return a dict of shapes. Received: {type(shapes).__name__}")
        if set(shapes) != expected_keys:
            _fail(f"attention_shapes should have the keys {sorted(expected_keys)}. Received: {sorted(shapes)}")
        for key, value in shapes.items():
            # a list is a shape too: the grader's hidden tests compare it as a tuple
            if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
                _fail(f"shapes[{key!r}] should be a tuple of ints. Received: {value!r}")
        b, s, q, v, u = (sizes[k] for k in ("batch", "src_len", "query_dim", "value_dim", "units"))
        expected = {"U_att": (u, q), "W_att": (u, v), "v_att": (u,), "scores": (b, s), "weights": (b, s),
                    "context": (b, v)}
        arguments = ", ".join(f"{k}={n}" for k, n in sizes.items())
        for key, hint in _SHAPE_HINTS.items():
            if tuple(int(n) for n in shapes[key]) != expected[key]:
                _fail(f"attention_shapes({arguments}) gives {key} the wrong shape {shapes[key]}: {hint}")
    _passed("attention_shapes")


def check_parameter_count(attention_parameter_count):
    count = attention_parameter_count(512, 256, 128)
    if count != 98_432:
        _fail(f"self-test Q6 (512-d state, 256-d values, d_1 = 128) has 98,432 parameters. Received: {count}")
    if attention_parameter_count(10, 10, 1) != 21:
        _fail("with d_1 = 1 there is one row in U_att and in W_att and one number in v_att.")
    _passed("attention_parameter_count")
