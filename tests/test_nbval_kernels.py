"""nbval's kernels: started again when one fails before running a cell, and over Unix sockets (see conftest.py)."""

from pathlib import Path

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


def test_notebook_kernels_talk_over_unix_sockets(tmp_path):
    kernel = nbval.kernel.RunningKernel(nbval.kernel.CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path), startup_timeout=30)
    try:
        assert kernel.execute_cell_input("print(6 * 7)", allow_stdin=False)
        assert kernel.km.transport == "ipc", kernel.km.transport
        sockets = list(Path(kernel.km.ip).parent.glob(Path(kernel.km.ip).name + "-*"))
        assert len(sockets) == 5, sockets  # shell, iopub, stdin, control, heartbeat
    finally:
        kernel.stop()
