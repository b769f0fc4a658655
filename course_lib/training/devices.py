"""Notices when a machine has an NVIDIA GPU that TensorFlow cannot use.

On a GPU runtime (Colab's, say) TensorFlow trains on the GPU only when it
finds CUDA libraries of the versions it was built for. If it does not find
them (a `tensorflow` installed or upgraded without them, for one), it says
nothing and trains on the CPU, and a full-profile notebook runs at CPU speed
(up to half an hour for the longest lectures on 2 cores) instead of a GPU's. `warn_if_gpu_unused` makes that
visible: the course's training loops call it before they train.
"""

import functools
import warnings
from pathlib import Path

# Where the NVIDIA driver lists its GPUs (one folder per GPU), and the device file of the first one.
NVIDIA_GPU_FOLDER = Path("/proc/driver/nvidia/gpus")
NVIDIA_DEVICE_FILE = Path("/dev/nvidia0")


def nvidia_gpu_attached():
    """True when the NVIDIA driver lists a GPU on this machine, whatever TensorFlow sees."""
    try:
        return NVIDIA_DEVICE_FILE.exists() or any(NVIDIA_GPU_FOLDER.iterdir())
    except OSError:  # no driver: no folder
        return False


@functools.cache  # once per process: what is attached, and what TensorFlow lists, do not change
def warn_if_gpu_unused():
    """Warns when an NVIDIA GPU is attached but TensorFlow lists none; checks once per process.

    Returns:
        True when it warned (now or earlier in this process).
    """
    import keras

    if keras.backend.backend() != "tensorflow" or not nvidia_gpu_attached():
        return False
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return False
    warnings.warn(
        f"This machine has an NVIDIA GPU, but TensorFlow {tf.__version__} lists none "
        "(tf.config.list_physical_devices('GPU') is empty), so training runs on the CPU, many times slower. "
        "Usually it has not found the CUDA libraries it was built for; they install with it: "
        f'pip install "tensorflow[and-cuda]=={tf.__version__}", then restart the session (on Colab: '
        "Runtime > Restart session).",
        stacklevel=2,
    )
    return True
