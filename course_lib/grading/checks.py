"""Visible checks for the assignments: quick feedback while you work.

Each `check_*` function runs your function on small made-up inputs and tests
properties any correct answer has (shapes, weights that sum to 1, padding
that gets no weight, the lecture's worked examples). A failed check raises
`CheckFailed` with a hint about what is wrong; it never shows a solution.
Passing every visible check does not guarantee full marks: the graders'
hidden tests use other inputs.
"""

import re

import numpy as np

from course_lib.grading.spec import is_integer, is_whole_number

NEGATIVE_SCORE = -1e9


class CheckFailed(AssertionError):
    """A visible check found a problem; the message says which."""


def _fail(message):
    raise CheckFailed(message)


def _passed(what):
    print(f"\u2713 {what}: visible checks passed")


def as_numpy(value, name="result"):
    """Converts a NumPy array, a Keras/TF tensor or nested lists to NumPy."""
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        _fail(f"{name} should be an array of numbers. Received: {type(value).__name__}")


# -- generic checks ---------------------------------------------------------------


def check_shape(value, expected_shape, name="result"):
    """Raises `CheckFailed` unless `value` has `expected_shape`."""
    array = as_numpy(value, name)
    if tuple(array.shape) != tuple(expected_shape):
        _fail(f"{name} has shape {tuple(array.shape)}, expected {tuple(expected_shape)}.")
    return array


SOFTMAX_OVERFLOW_HINT = ("exp() overflows for large scores and underflows to 0 / 0 for very negative ones: subtract "
                         "each row's own maximum (axis=-1, keepdims=True) first, not one maximum for the whole array.")


def check_finite(value, name="result", hint=SOFTMAX_OVERFLOW_HINT):
    """Raises `CheckFailed` when `value` holds NaN or infinity; `hint` says why that may be (a softmax's by default)."""
    array = as_numpy(value, name)
    if not np.all(np.isfinite(array)):
        _fail(f"{name} contains NaN or infinity. {hint}".strip())
    return array


def check_weights(weights, mask=None, name="weights", axis=-1, over="the source positions"):
    """Attention weights: non-negative, sum to 1 over `axis`, zero on padding.

    `over` names what the last axis holds, for the messages ("the classes").
    """
    weights = check_finite(weights, name)
    if np.any(weights < -1e-7):
        _fail(f"{name} has negative entries; a softmax is never negative.")
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), weights.shape)
        leaked = np.abs(weights[~mask]).max() if (~mask).any() else 0.0
        if leaked > 1e-6 and mask.any() and np.allclose(weights[mask], 0.0, atol=1e-6):
            _fail("only padded positions get weight: the mask is inverted (True marks a real position, "
                  "which keeps its score).")
        if leaked > 1e-6:
            _fail(f"padded positions get weight up to {leaked:.3g}: the mask is ignored.")
    sums = weights.sum(axis=axis)
    if not np.allclose(sums, 1.0, atol=1e-5):
        other = weights.sum(axis=0)
        hint = f" They do sum to 1 over the first axis: normalise over {over} (the last axis)." if weights.ndim > 1 and np.allclose(other, 1.0, atol=1e-5) else ""
        _fail(f"{name} do not sum to 1 over {over} (sums range {sums.min():.3g} to {sums.max():.3g}).{hint}")
    return weights


def check_indices(values, name, hint="use // (integer division), not /"):
    """Positions in an array must be whole numbers; `int()` would silently truncate 1.5 to 1."""
    array = as_numpy(values, name)
    if not np.array_equal(array, np.round(array)):
        _fail(f"{name} should be whole numbers (they are indices): {hint}. Received: {np.asarray(values).tolist()}")
    return array.astype(int)


def check_close(value, expected, name="result", rtol=1e-4, atol=1e-6, hint=""):
    """Compares with a value the check can compute without the solution."""
    array = check_shape(value, np.shape(expected), name)
    if not np.allclose(array, expected, rtol=rtol, atol=atol):
        _fail(f"{name} has wrong values (largest difference {np.max(np.abs(array - expected)):.3g}). {hint}".strip())
    return array


def _rng(seed=0):
    return np.random.default_rng(seed)


BROADCAST_HINT = ("Adding a (batch, units) term to a (batch, positions, units) one needs an axis for the "
                  "positions on the first, so that the same vector is added at every position.")


def _call(function, arguments, received, hint):
    """Calls the student's function; a ValueError (matrices that do not fit) becomes a hint.

    `received` describes the arguments' shapes, `hint` which axis should meet which. Arrays that
    could not be broadcast get `BROADCAST_HINT` instead: the matrices met, the sum's axes did not.
    """
    try:
        return function(*arguments)
    except ValueError as error:
        if "could not be broadcast together with shapes" in str(error):  # an addition, not a matmul ("remapped")
            hint = BROADCAST_HINT
        raise CheckFailed(f"{function.__name__} raised ValueError ({error}) on {received}. {hint}") from error


def _additive_scores(queries, keys, U_att, v_att):
    """The lecture's e_j = v_att^T tanh(U_att s_{t-1} + W_att h_j), with `keys` = W_att h_j: (batch, positions)."""
    return np.tanh(keys + (queries @ U_att.T)[:, None, :]) @ v_att


def _softmax_rows(scores, mask=None):
    """A stable softmax over the last axis; masked positions get 0 (and a row of padding all zeros)."""
    mask = np.ones(scores.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    shifted = np.where(mask, scores, -np.inf)
    top = np.max(shifted, axis=-1, keepdims=True)
    exponentials = np.where(mask, np.exp(shifted - np.where(np.isfinite(top), top, 0.0)), 0.0)
    totals = exponentials.sum(axis=-1, keepdims=True)
    return exponentials / np.where(totals > 0, totals, 1.0)


TANH_PLACE_HINT = ("the tanh acts on the sum of the projections, and the dot product with {v} comes after it: "
                   "{formula}.")


# -- A1: Bahdanau attention -----------------------------------------------------------


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
    weights = check_weights(check_shape(softmax(scores), (3, 5), "softmax(scores)"),
                            name="softmax(scores) of shape (3, 5)")
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
    context = check_shape(context_vector(one_hot, values), (2, 3), "context_vector(weights, values)")
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
            if not isinstance(value, tuple) or not all(isinstance(v, (int, np.integer)) for v in value):
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


# -- the self-test quiz ------------------------------------------------------------------


def check_answer_type(value, kind, name):
    """Quiz answers: the right kind of value (never checks the answer itself).

    It accepts what the grader accepts (`course_lib.grading.spec`): a shape
    as a tuple or list of ints, a whole number also as `98432.0`, a set of
    names also as a list or tuple.
    """
    if kind == "shape":
        ok = isinstance(value, (tuple, list)) and all(is_integer(v) for v in value)
        form = "a tuple of ints"
    elif kind == "int":
        ok = is_whole_number(value)
        form = "a whole number"
    elif kind == "number":
        ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        form = "a number"
    elif kind == "choice":
        ok = isinstance(value, str) and len(value.strip()) == 1
        form = "one letter"
    elif kind == "set":
        ok = isinstance(value, (set, frozenset, list, tuple)) and all(isinstance(v, str) for v in value)
        form = "a set of names"
    else:
        raise ValueError(f"Unknown answer kind. Received: kind={kind!r}")
    if not ok:
        _fail(f"{name} should be {form}. Received: {value!r}")
    print(f"\u2713 {name} has the right form")


def check_answer_dict(value, kinds, name):
    """Quiz answers given as a dict: exactly the keys of `kinds`, each of its kind (`check_answer_type`)."""
    if not isinstance(value, dict):
        _fail(f"{name} should be a dict. Received: {type(value).__name__}")
    if set(value) != set(kinds):
        _fail(f"{name} should have the keys {sorted(kinds)}. Received: {sorted(map(str, value))}")
    for key, kind in kinds.items():
        check_answer_type(value[key], kind, f"{name}[{key!r}]")


# -- A2: the attentional decoder ------------------------------------------------------


# The library's own step and teacher-forced pass, by attribute, and how a student calls them.
# The hidden tests make the same methods raise (hidden_tests/A2.py, `_grader_decoder(locked=True)`).
A2_LOCKED_METHODS = {
    "step": "decoder.step(...)",
    "call": "decoder(...)",
    "_recur": "decoder._recur(...)",
    "_scheduled_sampling": "decoder._scheduled_sampling(...)",
}


def _a2_decoder(seed=0, batch=3, src_len=5, value_dim=6, vocab=9):
    """A decoder with its library methods locked, an unlocked copy with the same weights, and inputs.

    Returns `(decoder, reference, memory, state, mask, called)`: `called` lists the
    locked methods the student's code tried to use.
    """
    import keras

    from course_lib.decoders import AttentionGRUDecoder

    keras.utils.set_random_seed(seed)
    decoder = AttentionGRUDecoder(vocab, 4, 8, attention_units=5)
    reference = AttentionGRUDecoder(vocab, 4, 8, attention_units=5)
    rng = _rng(seed)
    values = keras.ops.convert_to_tensor(rng.normal(size=(batch, src_len, value_dim)), dtype="float32")
    mask = np.arange(src_len)[None, :] < np.array([[src_len], [2], [3]])[:batch]
    for layer in (decoder, reference):
        layer.build((batch, 1), values.shape)
    reference.set_weights(decoder.get_weights())
    memory = reference.prepare_memory(values, None, keras.ops.convert_to_tensor(mask))
    state = keras.ops.convert_to_tensor(rng.normal(size=(batch, 8)), dtype="float32")
    called = []

    def forbidden(name):
        def method(*args, **kwargs):
            called.append(name)
            raise CheckFailed(f"{name} is not available in this exercise.")

        return method

    for attribute, name in A2_LOCKED_METHODS.items():
        object.__setattr__(decoder, attribute, forbidden(name))
    return decoder, reference, memory, state, mask, called


def _call_without_library(function, arguments, called, exercise, instead, sizes=""):
    """Calls the student's function; fails when it used one of the decoder's locked methods.

    An error from inside a sub-layer (sizes that do not fit) becomes a hint that gives the
    `sizes` the sub-layers expect, instead of a traceback from deep in TensorFlow.
    """
    try:
        result = function(*arguments)
    except Exception as error:
        if not called:
            if sizes and not isinstance(error, CheckFailed) and _is_size_error(error):
                raise CheckFailed(f"{exercise} raised {type(error).__name__} ({_size_line(error)}). {sizes}") from error
            raise
        result = None
    if called:
        _fail(f"{exercise} calls {called[0]}, the course library's own version of what this exercise asks for. "
              f"The exercise is to write it yourself: {instead}. The grader makes {called[0]} unavailable, so "
              "this answer would score zero.")
    return result


def _is_size_error(error):
    """Whether `error` says that arrays of the wrong sizes met (NumPy, Keras or TensorFlow wording)."""
    text = str(error).lower()  # `error` may also be one line of a message
    return any(word in text for word in ("incompatible", "broadcast", "shape", "dimension", "size"))


def _size_line(error):
    """The line of `error`'s message that names the sizes (TensorFlow's first line only names the layer)."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines() if line.strip()]
    sized = [line for line in lines if _is_size_error(line)]
    return (sized or lines or [""])[0][:300]


def count_calls(layer, method):
    """Replaces `layer.method` by a version that counts its calls; returns the list holding the count.

    The visible A2 check and the hidden A2 test (in the student's kernel) both count
    `decoder.attention.project_keys` this way.
    """
    original, made = getattr(layer, method), [0]

    def counted(*args, **kwargs):
        made[0] += 1
        return original(*args, **kwargs)

    object.__setattr__(layer, method, counted)
    return made


def check_teacher_forcing_inputs(teacher_forcing_inputs):
    from course_lib.data import reversal

    source, target_in, target_out = reversal.make_examples(np.array([[1, 2, 3], [4, 5, 6]]))
    result = np.asarray(teacher_forcing_inputs(target_out, reversal.GO))
    check_shape(result, target_in.shape, "teacher_forcing_inputs(target_out)")
    if not np.all(result[:, 0] == reversal.GO):
        _fail("every decoder input starts with <GO>.")
    if np.any(result == reversal.STOP):
        _fail("<stop> is only ever an output: drop the last target token from the inputs.")
    if not np.array_equal(result, target_in):
        _fail("input t + 1 must be target token t (the target shifted right by one).")
    other_go = 7  # another vocabulary's <GO> id: the argument, not reversal.GO, must be used
    result = np.asarray(teacher_forcing_inputs(target_out, other_go))
    if not np.all(result[:, 0] == other_go):
        _fail(f"with go_id={other_go} the inputs must start with {other_go}: use the go_id argument, "
              "not a fixed id.")
    _passed("teacher_forcing_inputs")


def check_attention_decoder_step(attention_decoder_step):
    import keras

    decoder, reference, memory, state, mask, called = _a2_decoder()
    tokens = keras.ops.convert_to_tensor([1, 4, 7], dtype="int32")
    key_projections = count_calls(decoder.attention, "project_keys")
    result = _call_without_library(
        attention_decoder_step, (decoder, tokens, state, memory), called, "attention_decoder_step",
        "use decoder.embedding, decoder.attention, decoder.cell and decoder.output_layer",
        sizes="Here e(y_{t-1}) has 4 numbers and c_t must have the 6 of each h_j (a weighted SUM over the 5 "
              "source positions), so decoder.cell takes [e(y_{t-1}); c_t] of 4 + 6 = 10 numbers per example, "
              "and a state of 8.",
    )
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        _fail("attention_decoder_step should return (logits, new_state, weights).")
    logits = check_shape(result[0], (3, 9), "logits")
    new_state = check_shape(result[1], (3, 8), "new_state")
    weights = check_weights(result[2], mask=mask, name="attention weights")
    _, expected_weights = reference.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
    if not np.allclose(weights, as_numpy(expected_weights), atol=1e-5):
        _fail("the weights must come from attending with the previous state s_{t-1} (the `state` argument), "
              "before the GRU update.")
    if key_projections[0]:
        _fail("attention_decoder_step projected the keys W_att h_j again (decoder.attention without "
              "projected_keys): pass projected_keys=memory[\"keys\"], which prepare_memory computed once for "
              "the source sentence.")
    if np.allclose(new_state, as_numpy(state)):
        _fail("the new state equals the old one: run decoder.cell on [e(y_{t-1}); c_t].")
    expected_logits = reference.output_layer(keras.ops.convert_to_tensor(new_state))
    if not np.allclose(logits, as_numpy(expected_logits), atol=1e-5):
        _fail("the logits must be decoder.output_layer applied to the new state s_t.")
    reference_logits, reference_state, _ = reference.step(tokens, state, memory)
    if not np.allclose(new_state, as_numpy(reference_state), atol=1e-4):
        _fail("the new state differs from the course decoder's: feed the GRU cell [e(y_{t-1}); c_t], "
              "embedding first.")
    _passed("attention_decoder_step")


def check_teacher_forced_decode(teacher_forced_decode):
    import keras

    decoder, reference, memory, state, mask, called = _a2_decoder(seed=1)
    target_inputs = keras.ops.convert_to_tensor([[1, 4, 5, 6], [1, 7, 8, 3], [1, 3, 3, 3]], dtype="int32")
    result = _call_without_library(
        teacher_forced_decode, (decoder, target_inputs, memory, state), called, "teacher_forced_decode",
        "loop over the decoder inputs and call your attention_decoder_step at every step",
    )
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("teacher_forced_decode should return (logits, alignments).")
    check_shape(result[0], (3, 4, 9), "logits")
    alignments = check_shape(result[1], (3, 4, 5), "alignments")
    check_weights(alignments, mask=mask[:, None, :], name="alignments at every step")
    reference_logits, reference_alignments = reference(target_inputs, memory["values"], state, source_mask=memory["mask"])
    if not np.allclose(as_numpy(result[0]), as_numpy(reference_logits), atol=1e-4):
        if not _step_agrees(teacher_forced_decode, decoder, reference, target_inputs[:, 0], state, memory):
            _fail("the logits differ from the course decoder's, because your attention_decoder_step does: "
                  "fix part 2 first (its check says how), then run this cell again.")
        _fail("the logits differ from the course decoder's teacher-forced pass: feed the TRUE previous token "
              "at every step and carry the state from one step to the next.")
    _passed("teacher_forced_decode")


def _step_agrees(teacher_forced_decode, decoder, reference, tokens, state, memory):
    """Whether the student's `attention_decoder_step` (the one the loop calls) matches one reference step.

    True when there is no such function to look at, so that the loop gets the blame only when the
    step is right.
    """
    step = getattr(teacher_forced_decode, "__globals__", {}).get("attention_decoder_step")
    if not callable(step):
        return True
    expected_logits, expected_state, _ = reference.step(tokens, state, memory)
    try:
        logits, new_state, _ = step(decoder, tokens, state, memory)
        logits, new_state = as_numpy(logits), as_numpy(new_state)
    except Exception:  # CheckFailed included: a step that fails its own check is not right
        return False
    return (logits.shape == tuple(expected_logits.shape) and new_state.shape == tuple(expected_state.shape)
            and np.allclose(logits, as_numpy(expected_logits), atol=1e-4)
            and np.allclose(new_state, as_numpy(expected_state), atol=1e-4))


# -- A3: transliteration -------------------------------------------------------------


def check_word_accuracy(word_accuracy):
    references = [["इंडिया"], ["हिंदी", "हिन्दी"], ["कमल"], ["सिता"]]
    score = word_accuracy(["इंडिया", "हिन्दी", "कमला", "सीता"], references)
    if not isinstance(score, (float, np.floating)) and not (isinstance(score, (int, np.integer)) and not isinstance(score, bool)):
        _fail(f"word_accuracy should return a number. Received: {score!r}")
    if abs(score - 0.5) > 1e-9:
        hint = " A word is right when it equals ANY of its accepted spellings." if abs(score - 0.25) < 1e-9 else ""
        _fail(f"2 of these 4 predictions are right, so the accuracy is 0.5. Received: {score}.{hint}")
    if word_accuracy(["कमल"], [["कमल"]]) != 1.0:
        _fail("a single correct word must give 1.0.")
    if word_accuracy(["कमल"], [["कमला"]]) != 0.0:
        _fail("a prediction must equal an accepted spelling: कमल is wrong when कमला is expected "
              "(part of a word is not a match).")
    _passed("word_accuracy")


def check_top_k_accuracy(top_k_accuracy):
    references = [["कमल"], ["किरन"]]
    candidates = [["कमला", "कमल", "कामल"], ["किरन", "कीरन", "किरण"]]
    if abs(top_k_accuracy(candidates, references, 1) - 0.5) > 1e-9:
        _fail("with k = 1 only the first candidate counts: 1 of 2 words is right.")
    if abs(top_k_accuracy(candidates, references, 2) - 1.0) > 1e-9:
        _fail("with k = 2 a word is right when one of its first two candidates is accepted.")
    if top_k_accuracy([["कम", "हिन्दी"]], [["कमल", "हिंदी", "हिन्दी"]], 1) != 0.0:
        _fail("a candidate must equal an accepted spelling: कम is part of कमल, not a match.")
    if top_k_accuracy([["कम", "हिन्दी"]], [["कमल", "हिंदी", "हिन्दी"]], 2) != 1.0:
        _fail("a word is right when a candidate equals ANY of its accepted spellings (here the third).")
    _passed("top_k_accuracy")


def check_edit_distance(edit_distance):
    cases = [("kitten", "sitting", 3), ("", "abc", 3), ("abc", "", 3), ("कमल", "कमल", 0), ("हिंदी", "हिन्दी", 2)]
    for a, b, expected in cases:
        got = edit_distance(a, b)
        if got != expected:
            _fail(f"edit_distance({a!r}, {b!r}) should be {expected} (insertions, deletions, substitutions cost 1). "
                  f"Received: {got}")
    if edit_distance("abcd", "xbcy") != edit_distance("xbcy", "abcd"):
        _fail("edit distance is symmetric.")
    _passed("edit_distance")


def check_beam_step(beam_step):
    rng = _rng(6)
    logits = rng.normal(size=(3, 6))
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    beam_scores = np.array([-1.0, -1.5, -4.0])
    result = beam_step(log_probs, beam_scores, 3)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        _fail("beam_step should return (scores, parents, tokens).")
    scores, parents, tokens = (check_shape(r, (3,), name) for r, name in zip(result, ("scores", "parents", "tokens")))
    parents, tokens = check_indices(parents, "parents"), check_indices(tokens, "tokens")
    if np.any(parents < 0) or np.any(parents >= 3) or np.any(tokens < 0) or np.any(tokens >= 6):
        _fail("parents index the beams (0..beams-1) and tokens the vocabulary (0..vocab-1).")
    totals = beam_scores[:, None] + log_probs  # (beams, vocab)
    best_three = np.sort(totals.ravel())[::-1][:3]
    pointed_at = beam_scores[parents] + log_probs[parents, tokens]
    if np.allclose(np.sort(scores)[::-1], best_three) and not np.allclose(scores, pointed_at):
        _fail("the scores are right, but (parents, tokens) do not point at them: check how a position in the "
              "flattened beams x vocabulary array becomes a beam and a token.")
    check_close(scores, pointed_at, "scores",
                hint="a candidate's score is its parent beam's score plus the token's log-probability.")
    if np.any(np.diff(scores) > 1e-12):
        _fail("return the candidates best first.")
    if np.sort(totals.ravel())[-3] > scores.min() + 1e-9:
        _fail("a better candidate was left out: choose among all beams x tokens at once, not per beam.")
    single = beam_step(log_probs, np.array([0.0, -1e9, -1e9]), 3)
    if not np.all(np.asarray(single[1]).astype(int) == 0):
        _fail("when only the first beam is alive (the first step), every candidate must come from it.")
    _passed("beam_step")


def check_length_normalized_score(length_normalized_score):
    if abs(length_normalized_score(-6.0, 3, 0.0) - (-6.0)) > 1e-9:
        _fail("with length_penalty = 0 the score is the raw log-probability.")
    if abs(length_normalized_score(-6.0, 3, 1.0) - (-2.0)) > 1e-9:
        _fail("with length_penalty = 1 the score is the mean log-probability per token.")
    if abs(length_normalized_score(-7.0, 2, 1.0) - (-3.5)) > 1e-9:
        _fail("with length_penalty = 1, -7.0 over 2 tokens is -3.5: use / (true division), not //.")
    _passed("length_normalized_score")


# -- A5: hierarchical attention ---------------------------------------------------------


def _a5_parameters(rng, dim=4, units=3):
    return rng.normal(size=(units, dim)) / np.sqrt(dim), 0.1 * rng.normal(size=units), rng.normal(size=units)


def check_attention_pool(attention_pool):
    rng = _rng(7)
    W, b, u = _a5_parameters(rng)
    states = rng.normal(size=(3, 5, 4))
    mask = np.arange(5)[None, :] < np.array([[5], [2], [3]])
    result = attention_pool(states, mask, W, b, u)
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
    probabilities = check_shape(class_probabilities(document, V, b), (2, 3), "class_probabilities")
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


# -- A4: attention over image locations ------------------------------------------------


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
    weights = np.zeros((1, 6))
    weights[0, 4] = 1.0
    grid = check_shape(weights_to_map(weights, 2, 3), (1, 2, 3), "weights_to_map(weights, 2, 3)")
    if grid[0, 1, 1] != 1.0:
        _fail("location 4 of a 2 x 3 grid is row 1, column 1 (j = row * width + col).")
    _passed("weights_to_map")


def check_attended_cell(attended_cell):
    weights = np.full(12, 0.05)
    weights[7] = 0.45
    cell = attended_cell(weights, 3, 4)
    if tuple(check_indices(cell, "the (row, col) of attended_cell")) != (1, 3):
        _fail(f"location 7 of a 3 x 4 grid is (row 1, column 3). Received: {cell}")
    _passed("attended_cell")
