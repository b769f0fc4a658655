"""Perplexity: `exp` of the mean negative log-likelihood per token.

A model that spreads its probability evenly over `k` tokens has perplexity
`k`, so perplexity reads as "how many tokens the model is choosing between".
The unigram baseline ignores the history entirely: `P(y_t = j) = count(j) / N`
from the training text. A language model is only worth its recurrence if it
beats this baseline clearly.
"""

import numpy as np


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
    return float(np.exp(-token_log_probs[real].mean()))


def unigram_log_probs(train_targets, vocab_size, pad_id=0, smoothing=1.0):
    """`log P(j)` from token counts in `train_targets` (add-`smoothing`), `(vocab,)`.

    Padding gets no probability; every other id, even unseen, gets some.
    """
    train_targets = np.asarray(train_targets)
    if train_targets.size and (train_targets.min() < 0 or train_targets.max() >= vocab_size):
        raise ValueError(
            f"Token ids must lie in 0..{vocab_size - 1}. "
            f"Received: min={train_targets.min()}, max={train_targets.max()}"
        )
    counts = np.bincount(train_targets[train_targets != pad_id].ravel(), minlength=vocab_size).astype("float64")
    counts += smoothing
    counts[pad_id] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(counts / counts.sum())


def unigram_perplexity(train_targets, eval_targets, vocab_size, pad_id=0, smoothing=1.0):
    """Perplexity on `eval_targets` of the unigram model counted on `train_targets`."""
    log_probs = unigram_log_probs(train_targets, vocab_size, pad_id, smoothing)
    eval_targets = np.asarray(eval_targets)
    per_token = np.where(eval_targets != pad_id, log_probs[eval_targets], 0.0)
    return perplexity_from_log_probs(per_token, eval_targets, pad_id)
