"""`course.toml`: read in one place; every notebook's set-up cell and every Colab link follow it."""

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from course_lib import course_repository
from course_lib.grading import authoring
from private_copy import needs_private_copy

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = course_repository.notebooks_with_setup_cells(ROOT)
spec = importlib.util.spec_from_file_location("course_map", ROOT / "tools" / "course_map.py")
course_map = importlib.util.module_from_spec(spec)
spec.loader.exec_module(course_map)
FORK = 'repository = "https://github.com/someone/fork.git"\nbranch = "dev"\n'


@needs_private_copy
def test_there_are_notebooks_with_set_up_cells():
    assert {p.parent.name for p in NOTEBOOKS} == {"notebooks", "solutions", "assignments"}, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_set_up_cell_installs_the_repository_of_course_toml(path):
    cell = course_repository.setup_cell(nbformat.read(path, as_version=4))
    assert cell is not None, f"{path}: its first code cell is not the Colab set-up cell ({course_repository.SETUP_MARKER} ...)"
    assert cell.source == course_repository.setup_cell_source(ROOT), (
        f"{path}: its set-up cell does not install {course_repository.install_target(ROOT)} from course.toml: "
        f"run `{course_repository.REFRESH_COMMAND}`"
    )


def test_reading_course_toml(tmp_path):
    (tmp_path / "course.toml").write_text('# a comment\nrepository = "https://github.com/a/b"\n')
    assert course_repository.read(tmp_path) == course_repository.Repository("https://github.com/a/b", "a", "b", "main")
    assert course_repository.install_target(tmp_path) == "git+https://github.com/a/b"
    (tmp_path / "course.toml").write_text(FORK)
    found = course_repository.read(tmp_path)
    assert (found.owner, found.name, found.branch) == ("someone", "fork", "dev")
    assert course_repository.install_target(tmp_path) == "git+https://github.com/someone/fork.git@dev"
    assert course_repository.colab_url("notebooks/x.ipynb", tmp_path) == (
        "https://colab.research.google.com/github/someone/fork/blob/dev/notebooks/x.ipynb"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ('repository = "https://github.com/a/b', "not valid TOML.*Received"),
        ('branch = "main"\n', "must set `repository.*Received: repository=None"),
        ('repository = "https://gitlab.com/a/b"\n', "https://github.com/<owner>/<repo>. Received: 'https://gitlab.com/a/b'"),
        ('repository = "https://github.com/a/b"\nbranch = 3\n', "Received: branch=3"),
    ],
)
def test_a_malformed_course_toml_is_a_clear_error(tmp_path, text, message):
    (tmp_path / "course.toml").write_text(text)
    with pytest.raises(ValueError, match=message):
        course_repository.read(tmp_path)


def _fork(tmp_path):
    """A copy of the notebooks and the course map's inputs, with a fork's course.toml."""
    for folder in ("notebooks", "solutions", "assignments"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "course.toml").write_text(FORK)
    return tmp_path


@needs_private_copy
def test_a_fork_gets_its_own_set_up_cells_from_one_command(tmp_path):
    root = _fork(tmp_path)
    paths = course_repository.notebooks_with_setup_cells(root)
    before = {p: p.read_text() for p in paths}
    assert course_map.main(["--check"], root=root) == 1
    solution = root / "solutions" / "A1_bahdanau_attention.ipynb"
    assert authoring.stale_reasons(solution, root=root) == [
        "its set-up cell does not install git+https://github.com/someone/fork.git@dev (course.toml)"
    ]
    assert course_map.main([], root=root) == 0
    assert course_map.main(["--check"], root=root) == 0
    assert authoring.is_up_to_date(solution, root=root)
    for path in paths:
        old, new = before[path].splitlines(), path.read_text().splitlines()
        changed = [(a, b) for a, b in zip(old, new) if a != b]
        # Only the lines that name the install target change: pip's command and its failure message.
        assert len(old) == len(new) and len(changed) == 2, (path, changed)
        assert all("git+https://github.com/someone/fork.git@dev" in line for _, line in changed), changed
    assert "someone/fork/blob/dev/notebooks/01_language_model.ipynb" in (root / "docs" / "course_map.md").read_text()


@needs_private_copy
def test_assign_writes_the_set_up_cell_from_course_toml(tmp_path):
    # A solution whose own set-up cell is stale: the student version still installs the fork.
    root = _fork(tmp_path)
    solution = root / "solutions" / "A1_bahdanau_attention.ipynb"
    target = authoring.generate(solution, root=root)
    cell = course_repository.setup_cell(nbformat.read(target, as_version=4))
    assert cell.source == course_repository.setup_cell_source(root)
    assert "git+https://github.com/someone/fork.git@dev" in cell.source
    assert authoring.is_up_to_date(solution, root=root) and not authoring.is_up_to_date(solution)
    assert course_repository.stale_setup_cells([solution], root) == [solution]


def test_a_notebook_without_a_set_up_cell_is_left_alone(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "plain.ipynb"
    nbformat.write(notebook, path)
    assert course_repository.setup_cell(notebook) is None
    assert course_repository.refresh_setup_cells([path], ROOT) == []


def test_the_set_up_cell_says_what_to_do_when_pip_cannot_install(monkeypatch):
    """Offline (or with the repository unreachable) the cell stops with a plain message, not a traceback of pip."""
    import importlib.util
    import subprocess

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: subprocess.CompletedProcess(command, 1))
    target = re.escape(course_repository.install_target(ROOT))
    with pytest.raises(RuntimeError, match=rf"pip could not install course_lib from {target} \(its messages above say why: "
                                           r"no network.*On Colab: Runtime > Disconnect and delete runtime.*"
                                           r"run `pip install -r requirements\.txt -e \.` there instead"):
        exec(course_repository.setup_cell_source(ROOT), {})  # noqa: S102


def test_the_set_up_cell_names_the_tensorflow_that_pip_installs():
    source = course_repository.setup_cell_source(ROOT)
    assert "If the machine's TensorFlow is not 2.21, pip replaces it" in source
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"tensorflow>=2.21,<2.22"' in pyproject and '"tensorflow-text>=2.21,<2.22"' in pyproject


@pytest.mark.parametrize("missing", [None, "course_lib", "keras", "matplotlib"])
def test_the_set_up_cell_installs_when_the_library_or_a_package_it_needs_is_missing(monkeypatch, missing):
    """course_lib installed without keras (a half-finished install) must not pass for a working one."""
    import importlib.util
    import subprocess

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == missing else found(name, *args))
    commands = []
    monkeypatch.setattr(subprocess, "run", lambda command, **kwargs: commands.append(command)
                        or subprocess.CompletedProcess(command, 0))
    exec(course_repository.setup_cell_source(ROOT), {})  # noqa: S102
    assert len(commands) == (0 if missing is None else 1), commands
    if missing:
        assert commands[0][1:4] == ["-m", "pip", "install"]
        assert commands[0][-1] == course_repository.install_target(ROOT)


@pytest.mark.parametrize(
    "pip_does, message",
    [
        # matplotlib's case on Colab: loaded before the cell, then upgraded by pip. The package is named once,
        # not with each of its modules; a namespace package (no file of its own, like `google`) is left out.
        ("upgrades", r"pip replaced fake_namespace\.fake_package, which this session had loaded already\. "
                     r"Runtime > Restart session"),
        ("removes", r"pip replaced fake_namespace\.fake_package\.sub, which"),  # a module gone is replaced too
        ("upgrades what is not loaded", None),
        ("leaves it", None),
    ],
)
def test_the_set_up_cell_asks_for_a_restart_when_pip_replaced_a_loaded_package(monkeypatch, tmp_path, pip_does,
                                                                                  message):
    import importlib.util
    import os
    import subprocess
    import types

    package = tmp_path / "fake_namespace" / "fake_package"
    package.mkdir(parents=True)
    files = {"fake_namespace.fake_package": package / "__init__.py", "fake_namespace.fake_package.sub": package / "sub.py",
             "not_loaded": tmp_path / "not_loaded.py"}
    for name, path in files.items():
        path.write_text("")
        os.utime(path, (1_000_000, 1_000_000))
        if name != "not_loaded":
            module = types.ModuleType(name)
            module.__file__ = str(path)
            monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "fake_namespace", types.ModuleType("fake_namespace"))  # no __file__

    def pip(command, **kwargs):
        if pip_does == "upgrades":
            for path in files.values():
                path.write_text("# the new version\n")
        elif pip_does == "removes":
            files["fake_namespace.fake_package.sub"].unlink()
        elif pip_does == "upgrades what is not loaded":
            files["not_loaded"].write_text("# the new version\n")
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    monkeypatch.setattr(subprocess, "run", pip)
    if message is None:
        exec(course_repository.setup_cell_source(ROOT), {})  # noqa: S102
    else:
        with pytest.raises(RuntimeError, match=message):
            exec(course_repository.setup_cell_source(ROOT), {})  # noqa: S102


@needs_private_copy
def test_colab_opens_the_notebooks_that_train_on_a_gpu():
    runtimes = course_map.colab_runtimes()
    assert {p.parent.name for p in runtimes} == {"notebooks", "solutions", "assignments"}
    assert runtimes[ROOT / "notebooks" / "04_reversal_attention.ipynb"] is True
    assert runtimes[ROOT / "notebooks" / "03_attention_by_hand.ipynb"] is False
    assert runtimes[ROOT / "solutions" / "A3_transliteration.ipynb"] is True
    for path, gpu in runtimes.items():
        metadata = nbformat.read(path, as_version=4).metadata
        assert metadata.get("accelerator") == ("GPU" if gpu else None), (path, metadata)
        assert metadata.get("colab", {}).get("gpuType") == (course_repository.COLAB_GPU_TYPE if gpu else None), path


def test_write_colab_runtime_changes_only_the_runtime_fields():
    notebook = nbformat.v4.new_notebook()
    notebook.metadata.update({"colab": {"name": "mine.ipynb", "provenance": []}, "kernelspec": {"name": "python3"}})
    assert course_repository.write_colab_runtime(notebook, gpu=True)
    assert notebook.metadata == {
        "accelerator": "GPU", "kernelspec": {"name": "python3"},
        "colab": {"name": "mine.ipynb", "provenance": [], "gpuType": course_repository.COLAB_GPU_TYPE},
    }
    assert not course_repository.write_colab_runtime(notebook, gpu=True)  # already so: nothing to write
    assert course_repository.write_colab_runtime(notebook, gpu=False)
    assert notebook.metadata == {"colab": {"name": "mine.ipynb", "provenance": []}, "kernelspec": {"name": "python3"}}
    bare = nbformat.v4.new_notebook()
    assert course_repository.write_colab_runtime(bare, gpu=True)
    assert course_repository.write_colab_runtime(bare, gpu=False)
    assert "colab" not in bare.metadata and "accelerator" not in bare.metadata


@needs_private_copy
def test_the_course_map_finds_and_rewrites_a_wrong_runtime(tmp_path):
    root = _fork(tmp_path)
    course_map.main([], root=root)  # the fork's set-up cells
    reversal, by_hand = root / "notebooks" / "04_reversal_attention.ipynb", root / "notebooks" / "03_attention_by_hand.ipynb"
    for path, gpu in ((reversal, False), (by_hand, True)):  # each the wrong way round
        assert course_repository.refresh_colab_runtimes({path: gpu}) == [path]
    assert course_map.main(["--check"], root=root) == 1
    assert course_map.main([], root=root) == 0
    assert course_map.main(["--check"], root=root) == 0
    assert nbformat.read(reversal, as_version=4).metadata["accelerator"] == "GPU"
    assert "accelerator" not in nbformat.read(by_hand, as_version=4).metadata


@needs_private_copy
def test_a_student_notebook_opens_on_its_solutions_runtime():
    solution = nbformat.read(ROOT / "solutions" / "A2_attentional_decoder.ipynb", as_version=4)
    student, _ = authoring.make_student_notebook(solution)
    assert student.metadata["accelerator"] == "GPU"
    assert student.metadata["colab"]["gpuType"] == course_repository.COLAB_GPU_TYPE
