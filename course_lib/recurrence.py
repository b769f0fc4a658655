"""`scan`: the loop every decoder runs, on any Keras backend.

`keras.ops.scan` on TensorFlow requires the per-step outputs to have the same
structure as the carry; decoders need to emit other things (logits, attention
weights). On TensorFlow this module runs its own `tf.while_loop` over
TensorArrays, which traces once for any sequence length; on JAX and PyTorch it
defers to `keras.ops.scan`, which has no such restriction there.
"""

import keras
from keras import ops


def scan(step, init, xs=None, length=None):
    """Loops `carry, y = step(carry, x)` over the leading axis of `xs`.

    Args:
        step: function `(carry, x) -> (carry, y)`; `carry` and `y` may be nested.
        init: the initial carry.
        xs: a tensor or nest of tensors, scanned along axis 0, or None.
        length: the number of steps when `xs` is None (on TensorFlow it may be
            a scalar tensor, so one trace serves every length).

    Returns:
        `(final_carry, ys)` with every leaf of `ys` stacked along a new axis 0.
    """
    if xs is None and length is None:
        raise ValueError("scan needs `xs` or `length`. Received: xs=None, length=None")
    if keras.backend.backend() != "tensorflow":
        return ops.scan(step, init, xs, length=length)
    return _tensorflow_scan(step, init, xs, length)


def _tensorflow_scan(step, init, xs, length):
    import tensorflow as tf

    tree = keras.tree
    xs_flat = [tf.convert_to_tensor(x) for x in tree.flatten(xs)] if xs is not None else []
    steps = tf.shape(xs_flat[0])[0] if xs_flat else tf.cast(length, tf.int32)
    xs_arrays = [
        tf.TensorArray(x.dtype, size=steps, element_shape=x.shape[1:]).unstack(x) for x in xs_flat
    ]

    def read_inputs(index):
        if xs is None:
            return None
        return tree.pack_sequence_as(xs, [array.read(index) for array in xs_arrays])

    # Trace one step outside the loop to learn the structure of `y`.
    probe_inputs = None if xs is None else tree.map_structure(lambda x: x[0], xs)
    probe_carry, probe_ys = step(init, probe_inputs)
    ys_flat = tree.flatten(probe_ys)
    ys_arrays = [
        tf.TensorArray(y.dtype, size=steps, element_shape=y.shape) for y in ys_flat
    ]
    carry_flat = [tf.convert_to_tensor(c) for c in tree.flatten(init)]
    carry_shapes = [tf.TensorShape(c.shape) for c in tree.flatten(probe_carry)]

    def body(index, carry_flat, ys_arrays):
        carry = tree.pack_sequence_as(init, carry_flat)
        new_carry, ys = step(carry, read_inputs(index))
        new_carry_flat = [
            tf.ensure_shape(tf.convert_to_tensor(c), s) if s.rank is not None else c
            for c, s in zip(tree.flatten(new_carry), carry_shapes)
        ]
        ys_arrays = [array.write(index, y) for array, y in zip(ys_arrays, tree.flatten(ys))]
        return index + 1, new_carry_flat, ys_arrays

    _, carry_flat, ys_arrays = tf.while_loop(
        lambda index, *_: index < steps,
        body,
        (tf.constant(0), carry_flat, ys_arrays),
        shape_invariants=(
            tf.TensorShape([]),
            [_loose(tf.TensorShape(c.shape)) for c in carry_flat],
            [tf.TensorShape(None) for _ in ys_arrays],
        ),
        maximum_iterations=steps,  # lets XLA size the gradient accumulators
    )
    ys_stacked = [array.stack() for array in ys_arrays]
    return tree.pack_sequence_as(init, carry_flat), tree.pack_sequence_as(probe_ys, ys_stacked)


def _loose(shape):
    """A shape invariant that lets the batch axis vary."""
    if shape.rank is None or shape.rank == 0:
        return shape
    import tensorflow as tf

    return tf.TensorShape([None] + shape.as_list()[1:])
