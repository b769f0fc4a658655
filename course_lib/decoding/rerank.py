"""Reranking beam candidates with a second model.

Beam search ranks candidates `y` for a source `x` by the direct model's
length-normalised log-probability, `log P(y | x) / m ** length_penalty`,
where `m` counts the output tokens and `<stop>` (`|y| + 1`), or is
`max_length` for a beam cut off before `<stop>` (`course_lib.decoding.beam`;
at the default `length_penalty=1`, the mean log-probability per token). When
several outputs are plausible (romanised Hindi `nilgiri` -> निलगिरी or नीलगिरि), a
second opinion can settle it. Two kinds:

* a **channel** model, trained in the other direction, says how well each
  candidate explains the source, `log P(x | y)` (the noisy-channel reranker);
* a **right-to-left** model scores the same `log P(y | x)` but writes `y`
  from its end, so it errs at other places than the left-to-right beam.

The combined score is

    score(y) = log P(y | x) / m ** length_penalty  +  weight * log Q / n,

where `log Q` is the second model's log-probability of the candidate and `n`
the number of tokens it scored (its output and `<stop>`); the k beams are
sorted by it. `weight = 0` keeps the beam order. The second model's
log-probabilities come from one teacher-forced pass over the candidates
(`course_lib.data.buckets.batched_log_probs`).
"""

import numbers

import numpy as np


def rerank_scores(direct_scores, other_log_probs, other_lengths, weight=1.0):
    """`direct_scores + weight * other_log_probs / other_lengths`.

    Args:
        direct_scores: `(N, k)` length-normalised beam scores, `log P(y | x) / m ** length_penalty`
            (the beam's `scores`; see the module docstring).
        other_log_probs: `(N, k)` the second model's log-probabilities.
        other_lengths: the tokens each of those covers, `(N, k)` or `(N,)`
            (e.g. `|x| + 1` for a channel model, `|y| + 1` for a right-to-left one).
        weight: how much the second model counts (0 = beam order: `direct_scores`
            unchanged, also where `other_log_probs` is -inf).
    """
    direct_scores = np.asarray(direct_scores, "float64")
    other_log_probs = np.asarray(other_log_probs, "float64")
    received_lengths = np.asarray(other_lengths)
    if received_lengths.dtype == bool:  # True would count as a length of 1
        raise ValueError(f"`other_lengths` must be numbers of tokens. Received: other_lengths.dtype=bool")
    other_lengths = received_lengths.astype("float64")
    if direct_scores.shape != other_log_probs.shape or direct_scores.ndim != 2:
        raise ValueError(
            "`direct_scores` and `other_log_probs` must both be (N, k). "
            f"Received: {direct_scores.shape} and {other_log_probs.shape}"
        )
    if other_lengths.ndim == 1:
        other_lengths = other_lengths[:, None]
    for name, values in (("direct_scores", direct_scores), ("other_log_probs", other_log_probs)):
        if np.isnan(values).any() or np.isposinf(values).any():  # -inf (an impossible candidate) is fine
            raise ValueError(
                f"`{name}` must be log-probabilities (finite or -inf). "
                f"Received: {int(np.isnan(values).sum())} NaN and {int(np.isposinf(values).sum())} +inf in {name}"
            )
    if (other_lengths.shape not in (direct_scores.shape, direct_scores.shape[:1] + (1,))
            or not np.isfinite(other_lengths).all() or np.any(other_lengths < 1)):
        raise ValueError(
            f"`other_lengths` must be (N,) or (N, k) = {direct_scores.shape}, every entry a finite number >= 1. "
            f"Received: shape {received_lengths.shape}, smallest {other_lengths.min() if other_lengths.size else None}"
        )
    if (isinstance(weight, (bool, np.bool_)) or not isinstance(weight, numbers.Real)
            or not np.isfinite(weight) or weight < 0):
        raise ValueError(f"`weight` must be a finite number >= 0. Received: weight={weight}")
    if weight == 0:  # 0 * -inf (an impossible candidate) would be NaN
        return direct_scores.copy()
    return direct_scores + weight * other_log_probs / other_lengths
