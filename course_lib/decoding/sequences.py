"""Post-processing of decoded token ids."""

import numpy as np


def strip_special_tokens(tokens, stop_id, pad_id=0, start_id=None):
    """Cuts each row at its first `<stop>` and drops padding.

    Args:
        tokens: `(batch, length)` integer array of decoded ids.
        stop_id: id of `<stop>`; a row ends at its first one.
        pad_id: id of padding, dropped.
        start_id: optional id of `<GO>`, dropped as well when given.

    Returns:
        A list of Python lists of ids, one per row, without `<stop>`/padding.
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError(f"`tokens` must have rank 2. Received: tokens.shape={tokens.shape}")
    rows = []
    for row in tokens.tolist():
        out = []
        for token in row:
            if token == stop_id:
                break
            if token == pad_id or token == start_id:
                continue
            out.append(token)
        rows.append(out)
    return rows


def reverse_tokens(ids, stop_id, pad_id=0):
    """Reverses each row's tokens before its first `<stop>` (or padding);
    `<stop>` and padding stay where they are.

    A right-to-left model is trained on `reverse_tokens(targets)` and its
    decoded output is put back in reading order the same way (reversing twice
    gives the input back). Reversing ids, not strings, keeps every Devanagari
    code point a token of its own (a reversed string would be re-normalised).

    Args:
        ids: `(batch, length)` integer array.
        stop_id, pad_id: ids of `<stop>` and padding; a row's content ends
            before the first of either.

    Returns:
        A new array of the same shape.
    """
    ids = np.array(ids, copy=True)
    if ids.ndim != 2:
        raise ValueError(f"`ids` must have rank 2. Received: ids.shape={ids.shape}")
    for row, end in zip(ids, content_lengths(ids, stop_id, pad_id)):
        row[:end] = row[:end][::-1].copy()
    return ids


def content_lengths(ids, stop_id, pad_id=0):
    """`(batch,)`: how many tokens each row has before its first `<stop>` or padding."""
    ends = (np.asarray(ids) == stop_id) | (np.asarray(ids) == pad_id)  # (batch, length)
    return np.where(ends.any(axis=1), ends.argmax(axis=1), ends.shape[1])
