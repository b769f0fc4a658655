"""Post-processing of decoded token ids."""

import numpy as np


def strip_special_tokens(tokens, stop_id, pad_id=0, start_id=None):
    """Cuts each row at its first `<stop>` and drops padding.

    Args:
        tokens: `(batch, length)` integer array of decoded ids.

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
