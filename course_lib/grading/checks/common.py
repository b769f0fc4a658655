"""What every assignment's checks share: `CheckFailed`, generic checks, hints, and the lecture's formulas in NumPy."""

from pathlib import Path

import numpy as np

from course_lib.grading.checks.answers import CHECKS_ANSWERS, call_without_library_answers

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


KEEPDIMS_HINT = ("Dividing the (batch, positions) exponentials by their row sums needs the sums as (batch, 1): "
                 "sum with keepdims=True, so that every row is divided by its own total.")
WEIGHTED_SUM_HINT = ("Multiplying (batch, positions) weights with (batch, positions, dim) vectors needs an axis for "
                     "dim on the weights (weights[..., None]), or an einsum; then sum over the positions.")
_LIBRARIES = (str(Path(np.__file__).parent), str(Path(__file__).parents[2]))  # NumPy's frames and course_lib's


def _raised_in(error):
    """The innermost function of the student's code that the error passed through (None if none did)."""
    name, trace = None, error.__traceback__
    while trace is not None:
        code = trace.tb_frame.f_code
        if not code.co_filename.startswith(_LIBRARIES) and "-packages" not in code.co_filename:  # not NumPy, Keras...
            name = code.co_name
        trace = trace.tb_next
    return name


def _call(function, arguments, received, hint, broadcast_hint=BROADCAST_HINT):
    """Calls the student's function; a ValueError (matrices that do not fit) becomes a hint.

    `received` describes the arguments' shapes, `hint` which axis should meet which. Arrays that
    could not be broadcast get `broadcast_hint` instead (by default `BROADCAST_HINT`: the matrices
    met, the sum's axes did not), unless the error came from another of the student's functions that
    this one calls: the message then names it, since its own check says more. The checks' own
    formulas below are locked during the call (`answers.CHECKS_ANSWERS`), as in the hidden tests.
    """
    try:
        return call_without_library_answers(function, lambda: function(*arguments), CHECKS_ANSWERS, error=CheckFailed)
    except ValueError as error:
        if "could not be broadcast together with shapes" in str(error):  # an addition, not a matmul ("remapped")
            inner = _raised_in(error)
            if inner not in (None, function.__name__, "<lambda>"):
                hint = f"It was raised inside {inner}(), which {function.__name__} calls: see the check of {inner}."
            else:
                hint = broadcast_hint
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
