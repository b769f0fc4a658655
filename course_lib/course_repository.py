"""The course's public repository, read from `course.toml`, and the set-up cell built from it.

`course.toml`, at the repository root, names the one repository students
open notebooks from and install `course_lib` from:

    repository = "https://github.com/<owner>/<repo>"
    branch = "main"          # optional; "main" when absent

Everything that depends on it comes from here: the "Open in Colab" links
(`colab_url`) and the first code cell of every notebook, which installs the
course library on Colab (`setup_cell_source`). After editing `course.toml`
(for a fork), run `python tools/course_map.py`: it rewrites the course map and
the set-up cell of every notebook in `notebooks/`, `solutions/` and
`assignments/` (`refresh_setup_cells`); `course-lib assign` writes it into the
student notebooks as well.

The same command writes which runtime Colab opens each notebook on
(`write_colab_runtime`): a GPU for the notebooks that train models in the full
profile, Colab's default CPU runtime for the others. The choice is listed per
notebook in `tools/course_map.py`.
"""

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BRANCH = "main"
SETUP_MARKER = "# Set-up: on Colab"
COLAB_GPU_TYPE = "T4"  # the GPU of Colab's free tier
NOTEBOOK_FOLDERS = ("notebooks", "solutions", "assignments")
REFRESH_COMMAND = "python tools/course_map.py"
GITHUB_URL = re.compile(r"https://github\.com/(?P<owner>[^/\s]+)/(?P<name>[^/\s]+?)(?:\.git)?/?")


@dataclass(frozen=True)
class Repository:
    """The course's GitHub repository: `url` as written in `course.toml`, its owner, name and branch."""

    url: str
    owner: str
    name: str
    branch: str = DEFAULT_BRANCH

    def colab_url(self, path):
        """`https://colab.research.google.com/github/<owner>/<repo>/blob/<branch>/<path>` for a repository path."""
        return f"https://colab.research.google.com/github/{self.owner}/{self.name}/blob/{self.branch}/{path}"

    @property
    def install_target(self):
        """What the set-up cell gives to pip: `git+<repository>`, with `@<branch>` unless the branch is main."""
        return f"git+{self.url}" + ("" if self.branch == DEFAULT_BRANCH else f"@{self.branch}")


def read(root=ROOT):
    """The `Repository` named by `<root>/course.toml`.

    Raises ValueError, with what was received, when the file is not TOML,
    has no `repository`, or names something other than
    `https://github.com/<owner>/<repo>`.
    """
    path = Path(root) / "course.toml"
    if not path.is_file():
        raise FileNotFoundError(f"No course.toml at {path}: it names the course's repository (see README.md).")
    text = path.read_text()
    try:
        values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML ({error}). Received: {text[:200]!r}") from None
    url, branch = values.get("repository"), values.get("branch", DEFAULT_BRANCH)
    if not isinstance(url, str):
        raise ValueError(
            f"{path} must set `repository = \"https://github.com/<owner>/<repo>\"`. Received: repository={url!r}"
        )
    match = GITHUB_URL.fullmatch(url.strip())
    if match is None:
        raise ValueError(f"`repository` in {path} must be https://github.com/<owner>/<repo>. Received: {url!r}")
    if not isinstance(branch, str) or not branch.strip() or any(c.isspace() for c in branch):
        raise ValueError(f"`branch` in {path} must be a branch name. Received: branch={branch!r}")
    return Repository(url=url.strip(), owner=match.group("owner"), name=match.group("name"), branch=branch)


def colab_url(path, root=ROOT):
    """The Colab link of a repository path (`Repository.colab_url`)."""
    return read(root).colab_url(path)


def install_target(root=ROOT):
    """What the set-up cell gives to pip (`Repository.install_target`)."""
    return read(root).install_target


def tensorflow_version():
    """The TensorFlow release the course's `pyproject.toml` asks for (`"2.21"` from `tensorflow>=2.21,<2.22`).

    Read from this checkout's own `pyproject.toml`, whatever `course.toml` a fork names: the set-up cell says
    which TensorFlow pip will install.
    """
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for requirement in dependencies:
        match = re.fullmatch(r"tensorflow\s*>=\s*([\d.]+)\s*(,.*)?", requirement)
        if match:
            return match.group(1)
    raise ValueError(f"pyproject.toml names no `tensorflow>=X.Y` dependency. Received: {dependencies}")


def setup_cell_source(root=ROOT):
    """The source of the set-up cell: installs `course_lib` from the course's repository when it is missing.

    It installs too when `course_lib` is there but keras or matplotlib is not: pip then adds what the library needs.

    When pip replaced the files of a module the session had loaded already, the cell stops and asks for a restart.
    """
    target = install_target(root)
    return (
        f"{SETUP_MARKER} (or any machine without course_lib) this installs the course library.\n"
        "# The first time, it takes a minute or two and prints nothing while pip works. pip may end with a red\n"
        "# \"ERROR: pip's dependency resolver ...\" list of other packages on the machine that want other versions:\n"
        f"# the course uses none of them, and the cell goes on. If the machine's TensorFlow is not {tensorflow_version()}, pip replaces it\n"
        "# (about 600 MB with tensorflow-text); pip installs the repository's current version of course_lib.\n"
        "import importlib.util, os, subprocess, sys\n"
        "# The full profile (the default) trains the lecture's models. The fast profile trains small ones, each\n"
        "# notebook in about a minute on a CPU, with smaller numbers. For it, delete the \"# \" in front of the\n"
        "# next line, then Runtime > Restart session and run all.\n"
        "# os.environ[\"COURSE_PROFILE\"] = \"fast\"\n"
        "# It also installs when course_lib is there but a package every lecture imports is not (keras, matplotlib).\n"
        "if any(importlib.util.find_spec(name) is None for name in (\"course_lib\", \"keras\", \"matplotlib\")):\n"
        "    # pip may upgrade a package that this session has loaded already (matplotlib, say, once anything has\n"
        "    # drawn a plot): the old version would stay in memory, mixed with the new files, until a restart.\n"
        "    loaded_files = {name: (module.__file__, os.path.getmtime(module.__file__)) for name, module in list(sys.modules.items())\n"
        "                    if isinstance(getattr(module, \"__file__\", None), str) and os.path.isfile(module.__file__)}\n"
        f"    if subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\", \"{target}\"]).returncode:\n"
        f"        raise RuntimeError(\"pip could not install course_lib from {target} (its messages above say why: \"\n"
        "                           \"no network, the repository out of reach, or versions it could not resolve). On Colab: \"\n"
        "                           \"Runtime > Disconnect and delete runtime, run this cell again, and send pip's messages to \"\n"
        "                           \"the course staff if it fails twice. In a clone of the repository on your own machine, \"\n"
        "                           \"run `pip install -r requirements.txt -e .` there instead.\")\n"
        "    replaced = {name for name, (path, mtime) in loaded_files.items()\n"
        "                if not os.path.isfile(path) or os.path.getmtime(path) != mtime}\n"
        "    stale = sorted(name for name in replaced if name.rpartition(\".\")[0] not in replaced)  # packages, not each module\n"
        "    if stale:\n"
        "        raise RuntimeError(f\"course_lib is installed, and pip replaced {', '.join(stale)}, which this session had \"\n"
        "                           \"loaded already. Runtime > Restart session, then run all again: course_lib stays installed.\")\n"
        "# TensorFlow loads in the first cell that needs it, which may be a later one. It may then print a few lines\n"
        "# (some twice) about oneDNN, CPU instructions or missing CUDA drivers and a failed cuInit (on a machine without\n"
        "# a GPU), and \"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\".\n"
        "# They are harmless start-up notices, not errors.\n"
        "# A lecture's training cells end with `assert`s on what the run learned. If one fails in your run, that is\n"
        "# the course's check, not your mistake: run the notebook again, and tell the course staff if it fails twice.\n"
        "# In an assignment, an `assert` whose message says \"your ...\" compares your own function with the course's:\n"
        "# that one points at your code. A command shown as `course-lib ...` runs in a terminal; in a Colab cell,\n"
        "# put a ! in front of it."
    )


def setup_cell(notebook):
    """The set-up cell of a notebook read by nbformat (its first code cell, when that starts with the marker), or None."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            return cell if cell.source.lstrip().startswith(SETUP_MARKER) else None
    return None


def write_setup_cell(notebook, wanted):
    """Sets the notebook's set-up cell to `wanted` (`setup_cell_source(root)`); True when it changed.

    A notebook without a set-up cell is left alone (False).
    """
    cell = setup_cell(notebook)
    if cell is None or cell.source == wanted:
        return False
    cell.source = wanted
    return True


def notebooks_with_setup_cells(root=ROOT):
    """The `.ipynb` files of `notebooks/`, `solutions/` and `assignments/`."""
    return sorted(p for folder in NOTEBOOK_FOLDERS for p in (Path(root) / folder).glob("*.ipynb"))


def write_colab_runtime(notebook, gpu):
    """Sets the runtime that Colab opens the notebook on; True when the metadata changed.

    Colab reads two fields of the notebook's metadata when it opens it (they
    are what "Runtime -> Change runtime type" saves): `accelerator` and
    `colab.gpuType`. With `gpu=True` they are set to "GPU" and
    `COLAB_GPU_TYPE`, so "Open in Colab" connects to a GPU runtime; with
    `gpu=False` both are removed and Colab opens its default CPU runtime.
    Nothing else in the metadata changes.
    """
    metadata = notebook.metadata
    before = json.dumps(metadata, sort_keys=True)
    colab = dict(metadata.get("colab", {}))
    if gpu:
        metadata["accelerator"] = "GPU"
        colab["gpuType"] = COLAB_GPU_TYPE
    else:
        metadata.pop("accelerator", None)
        colab.pop("gpuType", None)
    if colab:
        metadata["colab"] = colab
    else:
        metadata.pop("colab", None)
    return json.dumps(metadata, sort_keys=True) != before


def _stale(paths, edit):
    """The paths among `paths` whose notebook `edit(notebook)` would change (nothing is written)."""
    import nbformat

    return [Path(p) for p in paths if edit(nbformat.read(p, as_version=4))]


def _rewrite(paths, edit):
    """Applies `edit(notebook) -> changed` to each notebook in `paths`; writes only the changed ones, returns them."""
    import nbformat

    changed = []
    for path in paths:
        path = Path(path)
        text = path.read_text()
        notebook = nbformat.reads(text, as_version=4)
        if edit(notebook):
            new = nbformat.writes(notebook)
            path.write_text(new + "\n" if text.endswith("\n") and not new.endswith("\n") else new)
            changed.append(path)
    return changed


def stale_setup_cells(paths, root=ROOT):
    """The paths among `paths` whose set-up cell differs from the one `course.toml` gives."""
    wanted = setup_cell_source(root)  # course.toml is read once
    return _stale(paths, lambda notebook: write_setup_cell(notebook, wanted))


def refresh_setup_cells(paths, root=ROOT):
    """Rewrites the set-up cell of each notebook in `paths` from `course.toml`; returns the paths changed.

    Only the set-up cell changes, and only where it differs: a notebook that
    is already up to date is not written at all.
    """
    wanted = setup_cell_source(root)
    return _rewrite(paths, lambda notebook: write_setup_cell(notebook, wanted))


def stale_colab_runtimes(runtimes):
    """The paths of `runtimes` (`{path: gpu}`) whose metadata asks Colab for another runtime."""
    stale = []
    for path, gpu in runtimes.items():
        stale += _stale([path], lambda notebook: write_colab_runtime(notebook, gpu))
    return stale


def refresh_colab_runtimes(runtimes):
    """Writes the runtime of each notebook of `runtimes` (`{path: gpu}`) where it differs; returns the paths changed."""
    changed = []
    for path, gpu in runtimes.items():
        changed += _rewrite([path], lambda notebook: write_colab_runtime(notebook, gpu))
    return changed


__all__ = [
    "Repository", "colab_url", "notebooks_with_setup_cells", "read", "refresh_colab_runtimes", "refresh_setup_cells",
    "setup_cell", "setup_cell_source", "stale_colab_runtimes", "stale_setup_cells", "write_colab_runtime",
    "write_setup_cell",
]
