"""Credit for an arg-max that is tied: the share of the tied largest weights that are right.

`np.argmax` takes the first of equal weights, so an attention spread evenly over
its positions (a masked or untrained row) would score as a hit whenever the
right answer happened to be the first position, and as a miss otherwise: the
score would depend on where the answers lie, not on the model. With the
credit split among the tied positions, such a row scores what a random pick
among them would, and an untied row still scores 1 or 0.
"""

import numpy as np


def tied_argmax_credit(weights, right):
    """Per row, the share of the largest weights (all that tie for largest) that fall where `right` is True.

    Args:
        weights: `(..., positions)` finite weights.
        right: bool `(..., positions)`: the positions that count as a hit.

    Returns:
        float `(...)` in [0, 1]: 1 or 0 for a single largest weight.
    """
    weights = np.asarray(weights, dtype=float)
    largest = weights == weights.max(axis=-1, keepdims=True)  # (..., positions)
    return (largest & np.asarray(right, bool)).sum(axis=-1) / largest.sum(axis=-1)


def check_positions(values, name):
    """`values` as an integer array; ValueError for fractions, bools or non-numbers (int() would cut 1.7 to 1)."""
    array = np.asarray(values)
    if array.dtype.kind in "iu":
        return array
    if array.dtype.kind == "f" and np.isfinite(array).all() and (array == np.round(array)).all():
        return array.astype("int64")
    raise ValueError(f"`{name}` must hold whole-number positions. Received: {name}={array.tolist()!r:.80}")


__all__ = ["check_positions", "tied_argmax_credit"]
