"""`compile_once`: one trace for every batch size and length on TensorFlow."""

import logging

import keras
import numpy as np
import pytest
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


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="TensorFlow's warning about tf.function retracing")
def test_models_that_each_compile_one_method_are_not_reported_as_retracing(caplog):
    # Lecture 7 run twice in one kernel decoded with six captioners, one trace each, and TensorFlow printed
    # "5 out of the last 9 calls to <function ...decode> triggered tf.function retracing".
    class Model:
        def __init__(self, scale):
            self.scale = scale
            self.decode = compile_once(self._decode, [((None,), "float32")])  # one per model, as Seq2Seq does

        def _decode(self, values):
            return values * self.scale

    with caplog.at_level(logging.WARNING):
        results = [float(Model(float(index)).decode(np.ones(3, "float32"))[0]) for index in range(8)]
    assert results == [float(index) for index in range(8)]
    assert not [record for record in caplog.records if "retracing" in record.getMessage()], caplog.text
