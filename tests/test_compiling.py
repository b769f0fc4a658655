"""`compile_once`: one trace for every batch size and length on TensorFlow."""

import keras
import numpy as np
from keras import ops

from course_lib.compiling import compile_once


def test_one_trace_serves_every_shape_and_dict_arguments():
    calls = []

    def total(tokens, features):
        calls.append(1)  # runs once per trace on TensorFlow, once per call elsewhere
        return ops.sum(ops.cast(tokens, "float32")) + ops.sum(features["image"])

    function = compile_once(total, [((None, None), "int32"), {"image": ((None, 2), "float32")}])
    results = [
        float(function(np.ones((batch, length), "int32"), {"image": np.ones((batch, 2), "float32")}))
        for batch, length in ((1, 3), (4, 2), (2, 7))
    ]
    assert results == [5.0, 16.0, 18.0]
    if keras.backend.backend() == "tensorflow":
        assert len(calls) == 1 and function.experimental_get_tracing_count() == 1
    else:
        assert function is total and len(calls) == 3
