"""Reranking beam candidates with a reverse ("channel") model.

Beam search ranks candidates `y` for a source `x` by the direct model's
length-normalised log-probability, `log P(y | x) / |y|`. When several
outputs are plausible (romanised Hindi `nilgiri` -> निलगिरी or नीलगिरि), a
second opinion helps: a model trained in the other direction says how well
each candidate explains the source, `log P(x | y)`. The noisy-channel
reranker combines the two,

    score(y) = log P(y | x) / |y|  +  weight * log P(x | y) / (|x| + 1),

(the `+ 1` counts the reverse model's `<stop>`), and sorts the k beams by it.
`weight = 0` keeps the beam order.
"""

import numpy as np


def sequence_log_probs(model, source, target, batch_size=512):
    """`log P(target | source)` of every row, teacher forced.

    Args:
        model: a `Seq2Seq` (anything with `forward(source, target_in)` returning
            `(logits, alignments)`).
        source: padded source ids `(N, S)`.
        target: padded target ids followed by `<stop>`, `(N, T)` (as
            `Vocabulary.encode(..., add_stop=True)` writes them).
        batch_size: rows per forward pass (rows are grouped by length).

    Returns:
        A float64 array `(N,)`: the sum over the real target tokens (the
        `<stop>` included, padding excluded) of their log-probabilities.
    """
    from keras import ops

    from course_lib.data.buckets import bucketed_order, sequence_lengths, teacher_forcing_pair, trim_to_longest

    source, target = np.asarray(source), np.asarray(target)
    if source.ndim != 2 or target.ndim != 2 or len(source) != len(target) or len(source) == 0:
        raise ValueError(
            "Need as many (and at least one) padded sources (N, S) as targets (N, T). "
            f"Received: source.shape={source.shape}, target.shape={target.shape}"
        )
    for name, ids in (("source", source), ("target", target)):
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"`{name}` must hold integer token ids. Received: {name}.dtype={ids.dtype}")
    totals = np.zeros(len(source), "float64")
    key = sequence_lengths(source) * (target.shape[1] + 1) + sequence_lengths(target)
    for rows in bucketed_order(key, batch_size):
        target_in, target_out = teacher_forcing_pair(trim_to_longest(target, rows))
        logits, _ = model.forward(ops.convert_to_tensor(trim_to_longest(source, rows).astype("int32")),
                                  ops.convert_to_tensor(target_in), training=False)
        log_probs = ops.convert_to_numpy(ops.log_softmax(logits, axis=-1)).astype("float64")  # (batch, T, vocab)
        picked = np.take_along_axis(log_probs, target_out[:, :, None], axis=-1)[:, :, 0]  # (batch, T)
        totals[rows] = np.sum(np.where(target_out != model.pad_id, picked, 0.0), axis=1)
    return totals


def noisy_channel_scores(direct_scores, channel_log_probs, source_lengths, weight=1.0):
    """`direct_scores + weight * channel_log_probs / (source_lengths + 1)`.

    Args:
        direct_scores: `(N, k)` length-normalised beam scores, `log P(y | x) / |y|`.
        channel_log_probs: `(N, k)` `log P(x | y)` from the reverse model.
        source_lengths: `(N,)` length of each source `x` (without `<stop>`).
        weight: how much the reverse model counts (0 = beam order).
    """
    direct_scores = np.asarray(direct_scores, "float64")
    channel_log_probs = np.asarray(channel_log_probs, "float64")
    source_lengths = np.asarray(source_lengths, "float64")
    if direct_scores.shape != channel_log_probs.shape or direct_scores.ndim != 2:
        raise ValueError(
            "`direct_scores` and `channel_log_probs` must both be (N, k). "
            f"Received: {direct_scores.shape} and {channel_log_probs.shape}"
        )
    if source_lengths.shape != direct_scores.shape[:1]:
        raise ValueError(
            f"`source_lengths` must be (N,) = {direct_scores.shape[:1]}. Received: {source_lengths.shape}"
        )
    if not np.isfinite(weight) or weight < 0:
        raise ValueError(f"`weight` must be a finite number >= 0. Received: weight={weight}")
    return direct_scores + weight * channel_log_probs / (source_lengths[:, None] + 1.0)
