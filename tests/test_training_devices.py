"""`warn_if_gpu_unused`: a GPU that TensorFlow cannot use is said, once, before training starts."""

import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from course_lib.training import devices
from course_lib.training.fit import build_before_fit

pytestmark = pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="checks what TensorFlow lists")


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """`machine(attached, tensorflow_gpus)`: whether the NVIDIA driver lists a GPU, and what TensorFlow lists."""
    devices.warn_if_gpu_unused.cache_clear()  # each test is a new process, as far as the check goes
    monkeypatch.setattr(devices, "NVIDIA_DEVICE_FILE", tmp_path / "nvidia0")
    monkeypatch.setattr(devices, "NVIDIA_GPU_FOLDER", tmp_path / "gpus")

    def set_up(attached=True, tensorflow_gpus=()):
        if attached:
            (tmp_path / "gpus" / "0000:00:04.0").mkdir(parents=True)

        def list_physical_devices(kind=None):
            if not attached:
                raise AssertionError("TensorFlow was asked although no GPU is attached")
            return list(tensorflow_gpus) if kind == "GPU" else []

        monkeypatch.setattr(tf.config, "list_physical_devices", list_physical_devices)

    yield set_up
    devices.warn_if_gpu_unused.cache_clear()  # the fakes' answer is not this machine's


def test_an_attached_gpu_that_tensorflow_does_not_list_is_said_once(machine):
    machine(attached=True, tensorflow_gpus=())
    assert devices.nvidia_gpu_attached()
    with pytest.warns(UserWarning, match=r"NVIDIA GPU, but TensorFlow .* lists none .* runs on the CPU.*"
                                         r'pip install "tensorflow\[and-cuda\]==' + tf.__version__):
        assert devices.warn_if_gpu_unused() is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert devices.warn_if_gpu_unused() is True  # once per process


@pytest.mark.parametrize("attached, tensorflow_gpus", [(True, ["/physical_device:GPU:0"]), (False, ())])
def test_nothing_is_said_when_tensorflow_uses_the_gpu_or_there_is_none(machine, attached, tensorflow_gpus):
    machine(attached=attached, tensorflow_gpus=tensorflow_gpus)
    assert devices.nvidia_gpu_attached() is attached
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert devices.warn_if_gpu_unused() is False


def test_the_training_loops_check_before_they_train(machine):
    machine(attached=True, tensorflow_gpus=())
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    dataset = tf.data.Dataset.from_tensor_slices((np.zeros((4, 3), "float32"), np.zeros((4, 2), "float32"))).batch(2)
    with pytest.warns(UserWarning, match="lists none"):
        build_before_fit(model, dataset)
