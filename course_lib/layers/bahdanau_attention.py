"""Additive (Bahdanau) attention, written with the lecture's symbols.

    e_j   = v_att^T tanh(U_att s_{t-1} + W_att h_j)
    alpha = softmax_j(e)
    c_t   = sum_j alpha_j h_j
"""

import keras
from keras import ops

from course_lib.layers.masking import (
    NEGATIVE_SCORE, check_count, check_flag, check_mask, check_mask_dtype, check_same_batch, masked_softmax,
)


@keras.saving.register_keras_serializable(package="course_lib")
class BahdanauAttention(keras.layers.Layer):
    """Additive attention of a decoder state over encoder states.

    The key projection `W_att h_j` depends only on the source sentence, so it
    can be computed once with `project_keys(values)` and passed back to every
    decoder step as `projected_keys=`; only `U_att s_{t-1}` is new at each step.

    Args:
        units: size `d_1` of the hidden layer of the scoring network (the rows
            of `U_att` and `W_att`, the length of `v_att`).
        use_bias: whether the scoring network adds a bias `b_att` inside the
            tanh. The lecture's formula has none (`use_bias=False`).
        kernel_initializer: initializer for `U_att`, `W_att` and `v_att`.

    Call arguments:
        query: the decoder state `s_{t-1}`, shape `(batch, query_dim)`, or a
            block of states `(batch, num_queries, query_dim)` scored at once.
        values: the encoder states `h_j`, shape `(batch, src_len, value_dim)`.
        mask: optional boolean source mask `(batch, src_len)`; `False` marks
            padding, which receives exactly zero weight. A row with no real
            position gives all-zero weights and a zero context, never NaN.
            With a rank-3 query the mask may also be `(batch, num_queries,
            src_len)`, one row per query (a causal mask, say).
        projected_keys: optional output of `project_keys(values)`.
        values_mask: the Keras mask that `values` carries (from an
            `Embedding(mask_zero=True)` and a recurrent layer, say); Keras
            passes it in by itself. Combined with `mask` when both are given.

    Returns:
        A tuple `(context, weights)`: `context` has shape `(batch, value_dim)`
        and `weights` `(batch, src_len)`; with a rank-3 query they gain a
        `num_queries` axis after the batch axis. Neither carries a Keras
        mask: unlike `keras.layers.AdditiveAttention`, a rank-3 query's mask
        is not passed on, so a layer after this one is given the mask it
        needs explicitly.

    Example: with `use_bias=False`, a 512-d query, 256-d values and 128 units
    the layer holds 128*512 + 128*256 + 128 = 98,432 numbers (self-test Q6).
    """

    def __init__(self, units, use_bias=False, kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        check_count(units, "units")
        self.units = int(units)
        self.use_bias = check_flag(use_bias, "use_bias")
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = True

    def build(self, query_shape, values_shape=None):
        if values_shape is None:
            raise ValueError(
                "BahdanauAttention needs both the query and the values shapes to build. "
                f"Received: query_shape={query_shape}, values_shape={values_shape}"
            )
        query_dim, value_dim = query_shape[-1], values_shape[-1]
        # U_att: (query_dim, units) acting on s_{t-1}; W_att: (value_dim, units) acting on h_j.
        self.query_kernel = self.add_weight(
            name="U_att", shape=(query_dim, self.units), initializer=self.kernel_initializer
        )
        self.key_kernel = self.add_weight(
            name="W_att", shape=(value_dim, self.units), initializer=self.kernel_initializer
        )
        self.score_vector = self.add_weight(
            name="v_att", shape=(self.units,), initializer=self.kernel_initializer
        )
        self.bias = (
            self.add_weight(name="b_att", shape=(self.units,), initializer="zeros")
            if self.use_bias
            else None
        )
        self.query_dim, self.value_dim = query_dim, value_dim

    def project_keys(self, values):
        """Returns `W_att h_j` for every source position: `(batch, src_len, units)`.

        Compute it once per source batch and pass it to every decoder step.
        """
        if not self.built:  # `W_att` is made with `U_att`, whose size only the query tells
            raise ValueError(
                "`project_keys` needs the layer's weights: call the layer once, or "
                "`build(query_shape, values_shape)`, first. "
                f"Received: values.shape={values.shape} for an unbuilt layer"
            )
        self._check_values(values)
        keys = ops.matmul(values, self.key_kernel)  # (batch, src_len, units)
        if self.bias is not None:
            keys = keys + self.bias
        return keys

    def score(self, query, projected_keys):
        """Unnormalised scores `e_j`: `(batch, src_len)` or `(batch, queries, src_len)`."""
        projected_query = ops.matmul(query, self.query_kernel)  # (batch, [queries,] units)
        if len(query.shape) == 2:
            hidden = ops.tanh(projected_keys + projected_query[:, None, :])  # (batch, src_len, units)
        else:
            # (batch, queries, 1, units) + (batch, 1, src_len, units)
            hidden = ops.tanh(projected_query[:, :, None, :] + projected_keys[:, None, :, :])
        # v_att^T tanh(...): an einsum, not matmul by a vector, whose TensorFlow form (a tensordot
        # with a transpose computed at run time) XLA cannot differentiate inside the decoder's loop.
        return ops.einsum("...u,u->...", hidden, self.score_vector)  # (batch, [queries,] src_len)

    def call(self, query, values, mask=None, projected_keys=None, values_mask=None):
        mask = self._checked_mask(query, values, mask, projected_keys, values_mask)
        if projected_keys is None:
            projected_keys = self.project_keys(values)  # (batch, src_len, units)
        scores = self.score(query, projected_keys)  # (batch, [queries,] src_len)
        if mask is not None and len(query.shape) == 3 and len(mask.shape) == 2:
            mask = mask[:, None, :]  # (batch, 1, src_len): the same row for every query
        weights = masked_softmax(scores, mask)  # (batch, [queries,] src_len)
        if len(query.shape) == 2:
            context = ops.einsum("bs,bsd->bd", weights, values)  # (batch, value_dim)
        else:
            context = ops.einsum("bqs,bsd->bqd", weights, values)  # (batch, queries, value_dim)
        return context, weights

    def compute_output_spec(self, query, values, mask=None, projected_keys=None, values_mask=None):
        # The checks `call` makes, also for symbolic inputs (`keras.Input`): Keras would otherwise build the output
        # from `compute_output_shape` alone and a mismatch would surface only when the model runs.
        self._checked_mask(query, values, mask, projected_keys, values_mask)
        return super().compute_output_spec(query, values, mask=mask, projected_keys=projected_keys,
                                           values_mask=values_mask)

    def _checked_mask(self, query, values, mask, projected_keys, values_mask):
        """Checks the call's inputs; returns the mask to apply (`mask` and `values_mask` together), or None."""
        if values_mask is not None:
            # Both checked before the cast: an additive float mask cast to booleans keeps exactly the padding.
            check_mask_dtype(values_mask)
            if mask is not None:
                check_mask_dtype(mask)
            values_mask = ops.cast(values_mask, "bool")
            if mask is not None and len(mask.shape) == 3:
                values_mask = values_mask[:, None, :]  # (batch, 1, src_len), for every query's row
            mask = values_mask if mask is None else ops.logical_and(ops.cast(mask, "bool"), values_mask)
        self._check_inputs(query, values, mask)
        if projected_keys is not None and (len(projected_keys.shape) != 3 or any(
            got is not None and want is not None and got != want
            for got, want in zip(projected_keys.shape, (*values.shape[:2], self.units))
        )):
            raise ValueError(
                "`projected_keys` must be `W_att h_j` of these values, (batch, src_len, units). "
                f"Received: projected_keys.shape={projected_keys.shape}, values.shape={values.shape}"
            )
        return mask

    def compute_mask(self, query, values, mask=None, projected_keys=None, values_mask=None):
        return None

    def compute_output_shape(self, query_shape, values_shape):
        if len(query_shape) == 2:
            return (query_shape[0], values_shape[-1]), (query_shape[0], values_shape[1])
        return (
            (query_shape[0], query_shape[1], values_shape[-1]),
            (query_shape[0], query_shape[1], values_shape[1]),
        )

    def _check_values(self, values):
        if len(values.shape) != 3:
            raise ValueError(
                "BahdanauAttention expects `values` of rank 3 (batch, src_len, value_dim). "
                f"Received: values.shape={values.shape}"
            )
        if self.built and values.shape[-1] is not None and values.shape[-1] != self.value_dim:
            raise ValueError(
                f"BahdanauAttention was built for values of size {self.value_dim} (`W_att`). "
                f"Received: values.shape={values.shape}"
            )

    def _check_inputs(self, query, values, mask):
        self._check_values(values)
        if len(query.shape) not in (2, 3):
            raise ValueError(
                "BahdanauAttention expects `query` of rank 2 (batch, query_dim) or 3 "
                f"(batch, num_queries, query_dim). Received: query.shape={query.shape}"
            )
        if self.built and query.shape[-1] is not None and query.shape[-1] != self.query_dim:
            raise ValueError(
                f"BahdanauAttention was built for queries of size {self.query_dim} (`U_att`). "
                f"Received: query.shape={query.shape}"
            )
        check_same_batch(query=query, values=values)
        if mask is not None and len(mask.shape) == 3 and len(query.shape) == 3:  # one row per query
            check_mask(mask, (values.shape[0], query.shape[1], values.shape[1]), "query` and `values")
        elif mask is not None:
            check_mask(mask, values.shape[:2], "values")

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config


__all__ = ["BahdanauAttention", "NEGATIVE_SCORE"]
