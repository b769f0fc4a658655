"""Agreement of attention with a gold word alignment.

For each target word the attention arg-max (the source position with the
largest `alpha_{tj}`) is compared with the set of source positions that the
gold alignment links to that word; a tie for the largest weight splits the
credit among the tied positions (`metrics.ties`).
"""

import numpy as np

from course_lib.metrics.ties import check_positions, tied_argmax_credit


def link_set(links):
    """One target word's gold links as a set of source positions: an int, ints, or None / empty (no link)."""
    if links is None:
        return set()
    positions = check_positions([links] if np.isscalar(links) else list(links), "gold links")
    return {int(x) for x in positions}


def attention_agreement(alignments, gold_alignments, target_lengths=None, source_lengths=None):
    """Share of target words whose attention arg-max is a gold-aligned source position.

    Args:
        alignments: attention weights `(batch, tgt_len, src_len)` (array or list
            of `(tgt_len_i, src_len_i)` matrices).
        gold_alignments: per example, a list over target words of the gold
            source positions: an int, or a set/list of ints (several source
            words), or an empty set/None for a target word that is aligned to
            nothing (such words are not counted).
        target_lengths: optional number of real target words per example
            (default: `len(gold_alignments[i])`); the `<stop>` step and padding
            after it are not counted.
        source_lengths: optional number of real source positions per example
            (integers, 1 up to the attention's width); the arg-max is taken
            over those only.

    Returns:
        A float in [0, 1].
    """
    if len(alignments) != len(gold_alignments):
        raise ValueError(
            "Need one gold alignment per example. "
            f"Received: {len(alignments)} attention matrices, {len(gold_alignments)} gold alignments"
        )
    if source_lengths is not None:
        source_lengths = np.asarray(source_lengths)
        if source_lengths.shape != (len(alignments),) or source_lengths.dtype.kind not in "iu":
            raise ValueError(
                "`source_lengths` must hold one integer per example. "
                f"Received: source_lengths={source_lengths.tolist()!r:.80} for {len(alignments)} examples"
            )
        if len(source_lengths) and source_lengths.min() < 1:
            raise ValueError(
                f"`source_lengths` must be at least 1. Received: source_lengths={source_lengths.tolist()!r:.80}"
            )
    if target_lengths is not None:
        target_lengths = check_positions(target_lengths, "target_lengths")
        if target_lengths.shape != (len(alignments),):
            raise ValueError(
                "`target_lengths` must hold one number per example. "
                f"Received: {target_lengths.size} for {len(alignments)} examples"
            )
    hits = 0
    counted = 0
    looked_at = 0  # target words read, linked or not
    for index, (matrix, gold) in enumerate(zip(alignments, gold_alignments)):
        matrix = np.asarray(matrix, dtype=float)
        if matrix.ndim != 2:
            raise ValueError(
                f"Attention of example {index} must be a 2-D matrix. Received: shape={matrix.shape}"
            )
        steps = len(gold) if target_lengths is None else int(target_lengths[index])
        if steps > matrix.shape[0] or steps > len(gold):
            raise ValueError(
                f"Example {index} has {steps} target words but attention for {matrix.shape[0]} "
                f"steps and gold links for {len(gold)} words."
            )
        if source_lengths is not None:
            if source_lengths[index] > matrix.shape[1]:
                raise ValueError(
                    f"Example {index} has {source_lengths[index]} source positions but attention over "
                    f"{matrix.shape[1]}. Received: source_lengths[{index}]={source_lengths[index]}"
                )
            matrix = matrix[:, : int(source_lengths[index])]
        if steps < 0 or matrix.shape[1] == 0:
            raise ValueError(
                f"Example {index} needs a non-negative number of target words and at least one source "
                f"position. Received: target words={steps}, attention shape={matrix.shape}"
            )
        if not np.isfinite(matrix[:steps]).all():
            raise ValueError(f"Attention of example {index} holds NaN or infinite weights. Received: non-finite values")
        looked_at += steps
        for step in range(steps):
            links = link_set(gold[step])
            if not links:
                continue
            if min(links) < 0 or max(links) >= matrix.shape[1]:
                raise ValueError(
                    f"Gold link of example {index}, target word {step} lies outside the "
                    f"{matrix.shape[1]} source positions. Received: {sorted(links)}"
                )
            counted += 1
            right = np.isin(np.arange(matrix.shape[1]), sorted(links))  # (src_len,)
            hits += float(tied_argmax_credit(matrix[step], right))  # a tie splits the credit (`metrics.ties`)
    if counted == 0:
        raise _no_gold_links(gold_alignments, looked_at)
    return hits / counted


def _no_gold_links(gold_alignments, words_read):
    """The error of an agreement over no linked target word (both agreements raise it)."""
    return ValueError(
        "No target word has a gold link; the agreement is undefined. "
        f"Received: len(gold_alignments)={len(gold_alignments)}, with {words_read} target words read"
    )


def chance_agreement(gold_alignments, source_lengths):
    """The agreement a uniformly random source position would reach, on average (`attention_agreement`'s chance).

    A target word linked to `k` of `n` source words is hit with probability `k / n`; the mean is over the
    words with a gold link, as `attention_agreement` counts them. With words linked to two or three source
    words it lies well above `1 / n`.

    Args:
        gold_alignments: as for `attention_agreement`.
        source_lengths: the number of source positions attention chooses among, one per example.

    Returns:
        A float in [0, 1].
    """
    if len(source_lengths) != len(gold_alignments):
        raise ValueError(
            "Need one source length per gold alignment. "
            f"Received: {len(source_lengths)} source lengths, {len(gold_alignments)} gold alignments"
        )
    shares = []
    for index, (gold, length) in enumerate(zip(gold_alignments, source_lengths)):
        for links in map(link_set, gold):
            if not links:
                continue
            if int(length) < 1 or min(links) < 0 or max(links) >= int(length):
                raise ValueError(
                    f"Gold links of example {index} must lie among its {length} source positions. "
                    f"Received: {sorted(links)}"
                )
            shares.append(len(links) / int(length))
    if not shares:
        raise _no_gold_links(gold_alignments, sum(len(gold) for gold in gold_alignments))
    return float(np.mean(shares))
