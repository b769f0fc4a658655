"""Thread settings for TensorFlow on a small CPU (CI, a laptop, a free VM).

TensorFlow's defaults split every op over all cores (intra-op) and run as
many independent ops at once (inter-op). A small recurrent model on two
cores gains nothing from splitting a (64, 288) x (288, 384) matmul in two,
but does gain from running independent work side by side: the forward and
backward GRUs of a bidirectional encoder are two independent loops. On the
course's 2-core CI machine, one thread per op and two ops at a time train
the reversal model about 20 % faster (benchmarks/reversal.py prints both).
"""

import os


def usable_cores():
    """The number of CPU cores this process may run on.

    A container, a CI runner or `taskset` may allow fewer cores than the machine has: `os.cpu_count()`
    counts the machine's, `os.sched_getaffinity` the process's, where the OS has it (Linux; not macOS or
    Windows, which fall back to `os.cpu_count()`).
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def tune_for_small_cpu(max_cores=2, intra_op=1, inter_op=2):
    """Uses `intra_op` threads per op and `inter_op` ops at a time on a small CPU.

    Does nothing when the process may run on more than `max_cores` cores
    (`usable_cores`), when the backend is not TensorFlow, or when
    TensorFlow's runtime has already started (the settings only apply
    before the first op runs).

    Args:
        max_cores: apply only where the process may run on at most this many cores.
        intra_op: threads that one op may use.
        inter_op: ops that may run at the same time.

    Returns:
        True when the settings were applied.
    """
    if intra_op < 1 or inter_op < 1:
        raise ValueError(
            f"Thread counts must be positive. Received: intra_op={intra_op}, inter_op={inter_op}"
        )
    import keras

    if keras.backend.backend() != "tensorflow" or usable_cores() > max_cores:
        return False
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        return False
    try:
        tf.config.threading.set_intra_op_parallelism_threads(intra_op)
        tf.config.threading.set_inter_op_parallelism_threads(inter_op)
    except RuntimeError:  # the runtime is already running: too late to change
        return False
    return True
