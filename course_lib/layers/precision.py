"""The dtype in which softmaxes and logits are computed."""

import keras


def at_least_float32(dtype):
    """`"float64"` for float64, otherwise `"float32"`.

    Under a mixed policy (float16 or bfloat16 compute) softmaxes and logits
    run in float32, as Keras's mixed-precision guide advises; under a float64
    policy they stay in float64 instead of losing precision to float32.

    Args:
        dtype: a dtype name, a dtype object or a `keras.DTypePolicy`
            (its compute dtype is used).
    """
    if isinstance(dtype, keras.DTypePolicy):
        dtype = dtype.compute_dtype
    return "float64" if keras.backend.standardize_dtype(dtype) == "float64" else "float32"


def decoding_dtype(decoder, state=None):
    """The dtype in which a decoding loop sums log-probabilities: `at_least_float32` of the logits' dtype.

    The logits of the course's decoders come from an output layer of dtype
    `at_least_float32(decoder.dtype_policy)`: float32 under a float32 or mixed
    policy, float64 under float64. The sums and scores must be built in that
    dtype before the loop starts (a loop's carry keeps its dtype), so it is
    read from the decoder's policy; a decoder that is no Keras layer (a test
    table, an ensemble) is taken by the dtype of its first float state.

    Args:
        decoder: the decoder whose `step` gives the logits.
        state: its start state, a tensor or a nest of tensors (optional).
    """
    policy = getattr(decoder, "dtype_policy", None)
    if isinstance(policy, keras.DTypePolicy):
        return at_least_float32(policy)
    for leaf in keras.tree.flatten(state) if state is not None else ():
        dtype = keras.backend.standardize_dtype(getattr(leaf, "dtype", "int32"))
        if "float" in dtype:
            return at_least_float32(dtype)
    return "float32"
