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
