import gc
import os

import pytest

# Every test, and every notebook kernel nbval starts, runs the fast profile.
os.environ.setdefault("COURSE_PROFILE", "fast")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("MPLBACKEND", "Agg")


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
