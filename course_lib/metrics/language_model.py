"""Perplexity: `exp` of the mean negative log-likelihood per token.

A model that spreads its probability evenly over `k` tokens has perplexity
`k`, so perplexity reads as "how many tokens the model is choosing between".
The unigram baseline ignores the history entirely: `P(y_t = j) = count(j) / N`
from the training text. A language model is only worth its recurrence if it
beats this baseline clearly.
"""

import numbers

import numpy as np

from course_lib.counts import check_count


def perplexity_from_log_probs(token_log_probs, targets, pad_id=0):
    """`exp(-mean log P)` over the real (non-padding) target tokens."""
    token_log_probs, targets = np.asarray(token_log_probs, "float64"), np.asarray(targets)
    if token_log_probs.shape != targets.shape:
        raise ValueError(
            "`token_log_probs` and `targets` must have the same shape. "
            f"Received: token_log_probs.shape={token_log_probs.shape}, targets.shape={targets.shape}"
        )
    real = targets != pad_id
    if not real.any():
        raise ValueError("`targets` holds no real token (all padding). Received: targets with only pad ids")
    real_log_probs = token_log_probs[real]
    if np.isnan(real_log_probs).any() or (real_log_probs > 1e-4).any():
        raise ValueError(
            "`token_log_probs` must be log-probabilities (<= 0, not NaN) at the real tokens; "
            "did you pass probabilities? "
            f"Received: {int(np.isnan(real_log_probs).sum())} NaN, max={np.nanmax(real_log_probs)}"
        )
    if np.isneginf(real_log_probs).any():
        raise ValueError(
            "A real token has probability 0 (log-probability -inf): the perplexity is infinite. "
            f"Received: {int(np.isneginf(real_log_probs).sum())} tokens with -inf"
        )
    return float(np.exp(-real_log_probs.mean()))


def _token_ids(ids, name):
    """`ids` as an integer array; an empty list (read as floats by numpy) is fine."""
    ids = np.asarray(ids)
    if ids.size == 0:
        return ids.astype("int64")
    if ids.dtype.kind not in "iu":
        raise ValueError(
            f"`{name}` must hold integer token ids. "
            f"Received: dtype={ids.dtype}, first values {ids.reshape(-1)[:5].tolist()}"
        )
    return ids


def unigram_log_probs(train_targets, vocab_size, pad_id=0, smoothing=1.0):
    """`log P(j)` from token counts in `train_targets` (add-`smoothing`), `(vocab,)`.

    Padding gets no probability; every other id, even unseen, gets some.
    """
    train_targets = _token_ids(train_targets, "train_targets")
    vocab_size = check_count(vocab_size, "vocab_size")
    if isinstance(smoothing, bool) or not isinstance(smoothing, numbers.Real) or not np.isfinite(smoothing):
        raise ValueError(f"`smoothing` must be a finite number >= 0. Received: smoothing={smoothing!r}")
    if not 0 <= pad_id < vocab_size or smoothing < 0:
        raise ValueError(
            f"Need 0 <= pad_id < vocab_size and smoothing >= 0. "
            f"Received: pad_id={pad_id}, vocab_size={vocab_size}, smoothing={smoothing}"
        )
    if train_targets.size and (train_targets.min() < 0 or train_targets.max() >= vocab_size):
        raise ValueError(
            f"Token ids must lie in 0..{vocab_size - 1}. "
            f"Received: min={train_targets.min()}, max={train_targets.max()}"
        )
    counts = np.bincount(train_targets[train_targets != pad_id].ravel(), minlength=vocab_size).astype("float64")
    counts += smoothing
    counts[pad_id] = 0.0
    if counts.sum() == 0:
        raise ValueError("`train_targets` holds no real token and smoothing=0: no probabilities to count. "
                         f"Received: train_targets.shape={train_targets.shape}")
    with np.errstate(divide="ignore"):
        return np.log(counts / counts.sum())


def unigram_perplexity(train_targets, eval_targets, vocab_size, pad_id=0, smoothing=1.0):
    """Perplexity on `eval_targets` of the unigram model counted on `train_targets`."""
    log_probs = unigram_log_probs(train_targets, vocab_size, pad_id, smoothing)
    eval_targets = _token_ids(eval_targets, "eval_targets")
    if eval_targets.size == 0:
        raise ValueError("Cannot compute a perplexity on no tokens. Received: eval_targets of size 0")
    if eval_targets.size and (eval_targets.min() < 0 or eval_targets.max() >= vocab_size):
        raise ValueError(
            f"Token ids must lie in 0..{vocab_size - 1}. "
            f"Received: eval_targets min={eval_targets.min()}, max={eval_targets.max()}"
        )
    per_token = np.where(eval_targets != pad_id, log_probs[eval_targets], 0.0)
    return perplexity_from_log_probs(per_token, eval_targets, pad_id)
