"""`check_count`: a count (a layer size, a batch size, a length, a beam width) must be a whole number.

Here, without Keras, so that the layers (`course_lib.layers.masking` exports it) and the text and data
pipelines, which load Keras only where they run a model, share one check.
"""

import numpy as np

INT32_MAX = 2**31 - 1


def check_count(value, name, least=1):
    """Raises `ValueError` unless `value` is a whole number >= `least` (and at most 2**31 - 1: counts become
    int32 tensors, a loop's length or a shape, where 2**31 would overflow).

    A float such as 2.5 is refused rather than cut to 2, and True or False is not a number here.

    Args:
        value: the count received.
        name: the argument's name, for the message.
        least: the smallest count allowed.

    Returns:
        `value` as a Python `int`: a NumPy integer (`labels.max() + 1`) is accepted, and what is stored,
        saved in a config or passed on to Keras layers (whose `Embedding` and `Dense` refuse NumPy
        integers) is a plain int.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"`{name}` must be a whole number >= {least}. Received: {name}={value!r}")
    if value > INT32_MAX:
        raise ValueError(f"`{name}` must be at most {INT32_MAX}. Received: {name}={value!r}")
    return int(value)


__all__ = ["check_count"]
