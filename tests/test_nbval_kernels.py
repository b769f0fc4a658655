"""nbval's kernels are started again when one fails before running a cell (see conftest.py)."""

import nbval.kernel
from jupyter_client import KernelManager

from course_lib.grading.runner import KERNEL_START_ATTEMPTS


def test_a_notebook_kernel_that_fails_to_start_is_started_again(tmp_path, monkeypatch):
    starts = []

    class FailsFirst(KernelManager):
        def start_kernel(self, **kwargs):  # the first starts die at once: their Python has no standard library
            starts.append(1)
            if len(starts) < KERNEL_START_ATTEMPTS:
                kwargs["env"] = dict(kwargs.get("env") or {}, PYTHONHOME=str(tmp_path / "no-python-here"))
            return super().start_kernel(**kwargs)

    monkeypatch.setattr(nbval.kernel, "KernelManager", FailsFirst)
    kernel = nbval.kernel.RunningKernel(nbval.kernel.CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path), startup_timeout=30)
    try:
        reply = kernel.execute_cell_input("print(6 * 7)", allow_stdin=False)
        assert reply
    finally:
        kernel.stop()
    assert len(starts) == KERNEL_START_ATTEMPTS
