"""The lecture's two attention formulas in NumPy, the references that the layer tests and
`test_equations_numpy.py` compare the library with."""

import numpy as np


def numpy_attention(query, values, U_att, W_att, v_att, mask=None, bias=None):
    """e_j = v^T tanh(U s + W h_j [+ b]); alpha = softmax_j(e); c = sum_j alpha_j h_j."""
    hidden = (query @ U_att)[:, None, :] + values @ W_att  # (batch, src_len, units)
    if bias is not None:
        hidden = hidden + bias
    scores = np.tanh(hidden) @ v_att  # (batch, src_len)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=1, keepdims=True)
    return np.einsum("bs,bsd->bd", weights, values), weights


def numpy_pooling(values, kernel, bias, context, mask):
    """u_j = tanh(W h_j + b); alpha = softmax_j(u_j^T u) over real positions; sum_j alpha_j h_j."""
    hidden = np.tanh(values @ kernel + bias)  # (batch, length, units)
    scores = hidden @ context  # (batch, length)
    scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    return (weights[:, :, None] * values).sum(axis=1), weights
