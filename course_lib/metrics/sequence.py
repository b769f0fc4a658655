"""Whole-sequence metrics for decoded token ids."""

import numpy as np


def exact_match(predicted, target, stop_id, pad_id=0):
    """Share of rows whose decoded sequence equals the target up to `<stop>`.

    Args:
        predicted, target: integer arrays `(batch, length)`; the target holds
            `<stop>` after the last real token. Everything after the first
            `<stop>` (or padding) is ignored on both sides.
    """
    from course_lib.decoding.sequences import strip_special_tokens

    predicted, target = np.asarray(predicted), np.asarray(target)
    if len(predicted) != len(target):
        raise ValueError(
            f"Need as many predictions as targets. Received: {len(predicted)} and {len(target)}"
        )
    ours = strip_special_tokens(predicted, stop_id, pad_id)
    theirs = strip_special_tokens(target, stop_id, pad_id)
    return float(np.mean([a == b for a, b in zip(ours, theirs)])) if len(ours) else 0.0


def alignment_share(alignments, gold_positions, valid=None):
    """Share of output steps whose largest attention weight is on the gold input.

    Args:
        alignments: `(batch, output_steps, input_positions)` weights.
        gold_positions: `(batch, output_steps)` gold input index per step.
        valid: optional boolean `(batch, output_steps)` of the steps to count.
    """
    alignments = np.asarray(alignments)
    gold_positions = np.asarray(gold_positions)
    if alignments.ndim != 3 or gold_positions.shape != alignments.shape[:2]:
        raise ValueError(
            "Need alignments (batch, steps, positions) and gold (batch, steps). Received: "
            f"alignments.shape={alignments.shape}, gold_positions.shape={gold_positions.shape}"
        )
    hits = alignments.argmax(axis=-1) == gold_positions
    if valid is not None:
        hits = hits[np.asarray(valid, dtype=bool)]
    return float(hits.mean()) if hits.size else 0.0
