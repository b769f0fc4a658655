import atexit
import gc
import itertools
import os
import shutil
import tempfile

import pytest

# Every test, and every notebook kernel nbval starts, runs the fast profile.
os.environ.setdefault("COURSE_PROFILE", "fast")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_configure(config):
    """Each pytest-xdist worker (and each notebook kernel it starts) lets one TensorFlow op
    use its share of the cores, with two ops at a time. On CI's 2 cores with `-n 2`,
    TensorFlow's default (every op on all cores, in each worker) oversubscribed the CPU.
    Measured on the whole suite, same clone, same machine: 822 s with the default, 701 s
    with this. The test command runs `-n 3` on those 2 cores (one op thread each): a worker
    waiting for a kernel or a file leaves a core idle, and a third one fills it (5 Dec 2026,
    same tree: 706.9 s with `-n 2`, the cores 91 % busy; 672.5 s with `-n 3`, 98 %). Set here,
    not at import: a worker learns the worker count from `workerinput` (the controller, which
    runs no test, sets nothing: its workers inherit its environment)."""
    if hasattr(config, "workerinput"):
        workers = int(config.workerinput["workercount"])
    elif getattr(config.option, "numprocesses", None):
        return
    else:
        workers = 1
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "2")


def _retry_nbval_kernel_starts():
    """nbval gives a kernel 60 s to answer and never starts another: a kernel that
    dies or stays silent before running any cell would fail its whole notebook.
    A CI run lost one of the grader's kernels that way (cause not found; the
    grader now retries too), so nbval's kernels get as many tries as the grader's
    (`runner.KERNEL_START_ATTEMPTS`).
    jupyter_client's start shuts a failed kernel down before it raises."""
    try:
        import nbval.kernel
    except ImportError:
        return
    from course_lib.grading.runner import KERNEL_START_ATTEMPTS

    start_new_kernel = nbval.kernel.start_new_kernel

    def start_with_retries(*args, **kwargs):
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            try:
                return start_new_kernel(*args, **kwargs)
            except RuntimeError:
                if attempt == KERNEL_START_ATTEMPTS:
                    raise

    nbval.kernel.start_new_kernel = start_with_retries


_retry_nbval_kernel_starts()


def _nbval_kernels_over_unix_sockets():
    """nbval's kernels talk to pytest over Unix sockets in a folder of this process,
    as the grader's do (`runner.KernelSession`), not over TCP ports: jupyter_client
    picks free ports and the kernel binds them a moment later, so the kernels that
    two xdist workers start side by side could take each other's ports."""
    try:
        import nbval.kernel
    except ImportError:
        return
    from course_lib.grading.runner import socket_folder

    folder = socket_folder(tempfile.gettempdir())
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    numbers = itertools.count(1)

    class UnixSocketKernelManager(nbval.kernel.KernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", str(folder / f"kernel{next(numbers)}"))
            super().__init__(**kwargs)

    nbval.kernel.KernelManager = UnixSocketKernelManager


_nbval_kernels_over_unix_sockets()


@pytest.fixture(autouse=True, scope="module")
def free_compiled_programs_under_jax():
    """Under JAX, drops every compiled program when a test file ends.

    XLA's CPU compiler maps each compiled program's code into memory, and JAX
    keeps the programs in its caches for the life of the process. One pytest
    worker compiles thousands (every model, length and beam width the tests
    try), and near Linux's limit of 65,530 memory maps per process
    (`vm.max_map_count`) the compiler crashed with a segmentation fault. So
    the programs are freed after each file (a later file that needs one
    compiles it again). TensorFlow needs nothing: outside XLA its CPU kernels
    are not compiled per program.
    """
    yield
    import keras

    if keras.backend.backend() == "jax":
        import jax

        keras.backend.clear_session()
        jax.clear_caches()
        gc.collect()
