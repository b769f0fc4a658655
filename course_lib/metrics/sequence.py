"""Whole-sequence metrics for decoded token ids."""

import numpy as np

from course_lib.metrics.ties import check_positions, tied_argmax_credit


def exact_match(predicted, target, stop_id, pad_id=0):
    """Share of rows whose decoded sequence equals the target up to `<stop>`.

    Args:
        predicted, target: integer arrays `(batch, length)`; every target
            row holds `<stop>` after its last real token, before any padding
            (a target row without it, e.g. tokens then padding, a row cut at
            the array's end or an empty row, raises ValueError: where its
            sequence ends is unknown). Everything after the first `<stop>`
            (or padding) is ignored on both sides. A row counts as right only
            when its tokens before that point and the `<stop>` itself are
            right: a prediction cut short without `<stop>` is wrong.
        stop_id, pad_id: ids of `<stop>` and padding.

    Returns:
        A float in [0, 1].
    """
    predicted, target = np.asarray(predicted), np.asarray(target)
    if predicted.ndim != 2 or target.ndim != 2:
        raise ValueError(
            "`predicted` and `target` must be 2-D (batch, length). "
            f"Received: predicted.shape={predicted.shape}, target.shape={target.shape}"
        )
    if len(predicted) != len(target):
        raise ValueError(
            f"Need as many predictions as targets. Received: {len(predicted)} and {len(target)}"
        )
    if len(predicted) == 0:
        raise ValueError("Cannot score an empty batch. Received: 0 rows")

    def until_stop(row):
        row = row.tolist()
        for end, token in enumerate(row):
            if token == stop_id or token == pad_id:
                return row[:end], token == stop_id
        return row, False

    targets = [until_stop(row) for row in target]
    unstopped = [index for index, (_, stopped) in enumerate(targets) if not stopped]
    if unstopped:
        first = unstopped[0]
        raise ValueError(
            f"Every target row needs `<stop>` (id {stop_id}) after its last token, before any padding "
            f"(id {pad_id}); without it (no token at all, tokens then padding, or cut at the end) the "
            f"row cannot be scored. Received: target.shape={target.shape}, {len(unstopped)} row(s) "
            f"without <stop>: {unstopped[:10]}; target[{first}]={target[first].tolist()[:20]}"
        )
    return float(np.mean([until_stop(a) == b for a, b in zip(predicted, targets)]))


def alignment_share(alignments, gold_positions, valid=None):
    """Share of output steps whose largest attention weight is on the gold input (ties split the credit).

    Args:
        alignments: `(batch, output_steps, input_positions)` weights.
        gold_positions: `(batch, output_steps)` gold input index per step.
        valid: optional boolean `(batch, output_steps)` of the steps to count.
    """
    alignments = np.asarray(alignments, dtype=float)
    gold_positions = check_positions(gold_positions, "gold_positions")
    if alignments.ndim != 3 or gold_positions.shape != alignments.shape[:2]:
        raise ValueError(
            "Need alignments (batch, steps, positions) and gold (batch, steps). Received: "
            f"alignments.shape={alignments.shape}, gold_positions.shape={gold_positions.shape}"
        )
    counted = np.ones(gold_positions.shape, bool) if valid is None else np.asarray(valid, dtype=bool)
    if counted.shape != gold_positions.shape:
        raise ValueError(
            "`valid` must have the shape (batch, steps) of `gold_positions`. "
            f"Received: valid.shape={counted.shape}, gold_positions.shape={gold_positions.shape}"
        )
    if not counted.any() or alignments.shape[-1] == 0:
        raise ValueError(
            "No output step to count: the share is undefined. "
            f"Received: alignments.shape={alignments.shape}, {int(counted.sum())} valid steps"
        )
    if not np.isfinite(alignments[counted]).all():
        raise ValueError("`alignments` holds NaN or infinite weights in the counted steps. Received: non-finite values")
    gold = gold_positions[counted]
    if gold.min() < 0 or gold.max() >= alignments.shape[-1]:
        raise ValueError(
            f"Gold positions must lie in [0, {alignments.shape[-1]}). Received: range [{gold.min()}, {gold.max()}]"
        )
    # A tie among the largest weights gets the share of them on the gold input (see `metrics.ties`).
    right = np.arange(alignments.shape[-1]) == gold[:, None]  # (counted steps, positions)
    return float(tied_argmax_credit(alignments[counted], right).mean())
