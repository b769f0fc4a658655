"""Keeps one submission's processes to themselves (the grader's side; limits are `sandbox.py`'s).

Every process started for a submission carries a token in its environment,
by which the ones still running afterwards are found and killed
(`kill_marked_processes`); they get a private home inside the submission's
temporary folder (`private_home`), and no user site-packages, which
`check_installation` makes sure the kernels do not need. (`sandbox.py`, which
sets each kernel's limits, stays apart: it runs before every kernel starts and
imports nothing but the standard library.)
"""

import importlib.util
import os
import site
from pathlib import Path

from course_lib.grading.runner import kill_until_gone

TOKEN_VARIABLE = "COURSE_GRADING_TOKEN"


def marked_processes(token):
    """Pids of the processes started for one submission that still carry its token in their environment."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_marked_processes(token):
    """Kills every process started for one submission that carries its token, until none is left.

    Returns:
        True when none is left (`runner.kill_until_gone`).
    """
    return kill_until_gone(lambda: marked_processes(token))


# Where a submission's processes keep their settings and caches: inside its own temporary folder,
# never the grader's home, where an IPython start-up file or a matplotlib or Keras setting left
# by one submission would run in every later kernel (and in the instructor's own IPython).
PRIVATE_HOME = {
    "HOME": ".", "IPYTHONDIR": ".ipython", "JUPYTER_CONFIG_DIR": ".jupyter",
    "JUPYTER_DATA_DIR": ".local/share/jupyter", "MPLCONFIGDIR": ".config/matplotlib", "KERAS_HOME": ".keras",
    "XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share",
}


def private_home(folder):
    """The environment that gives a submission's processes their own home inside `folder`.

    Args:
        folder: a new, empty folder that is removed with the submission's other files.

    Returns:
        A dict of environment variables: `PRIVATE_HOME`'s folders (made here) and
        `PYTHONNOUSERSITE=1` (nothing is loaded from, or can be added to, the user's site-packages).
    """
    environment = {"PYTHONNOUSERSITE": "1"}
    for name, relative in PRIVATE_HOME.items():
        path = Path(folder) / relative
        path.mkdir(parents=True, exist_ok=True)
        environment[name] = str(path)
    return environment


def check_installation():
    """Raises RuntimeError when a package the kernels need lives in the user's site-packages.

    The kernels run with `PYTHONNOUSERSITE=1` (see `private_home`), so a `pip install --user` of the
    grader's packages would leave every kernel without them and every submission with zero.
    """
    user_site = Path(site.getusersitepackages())
    stranded = []
    for name in ("course_lib", "ipykernel", "jupyter_client", "nbformat", "numpy", "keras"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and user_site in Path(spec.origin).resolve().parents:
            stranded.append(name)
    if stranded:
        raise RuntimeError(
            f"The grading kernels do not see the user's site-packages ({user_site}), which holds "
            f"{', '.join(stranded)}: install them in a virtual environment or the system Python instead."
        )
