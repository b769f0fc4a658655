"""tools/notebook_figures.py (the gallery's pictures) and the links of the README and docs/."""

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("notebook_figures", ROOT / "tools" / "notebook_figures.py")
notebook_figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notebook_figures)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PLOT = (
    "import os\nimport matplotlib.pyplot as plt\n"
    "from IPython.display import display\n"
    "figure, ax = plt.subplots(figsize=(2, 2))\n"
    "ax.set_title(os.environ['COURSE_PROFILE'])\n"
    "display(figure)\ndisplay(figure)\nplt.close(figure)"
)


def write_notebook(path, *sources):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_markdown_cell("# A lecture")] + [nbformat.v4.new_code_cell(s) for s in sources]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index}"
    nbformat.write(notebook, path)
    return path


def test_pictures_are_saved_by_cell_with_an_index_and_stale_ones_removed(tmp_path):
    out = tmp_path / "figures"
    out.mkdir()
    (out / "lecture-cell-9.png").write_bytes(b"an old picture")  # plots since taken out of the notebook
    (out / "lecture-0c0e2b6f.png").write_bytes(b"an old picture from a cell with a random id")
    (out / "other-cell-1.png").write_bytes(b"another notebook's picture")
    notebook = write_notebook(tmp_path / "lecture.ipynb", "print('no picture here')", PLOT)

    executed = tmp_path / "executed"
    assert notebook_figures.main([str(notebook), "--profile", "fast", "--out", str(out), "--executed", str(executed)]) == 0

    assert sorted(p.name for p in out.glob("*.png")) == ["lecture-cell-2-2.png", "lecture-cell-2.png", "other-cell-1.png"]
    assert (out / "lecture-cell-2.png").read_bytes().startswith(PNG_SIGNATURE)
    assert (out / "other-cell-1.png").read_bytes() == b"another notebook's picture"
    entry = json.loads((out / "figures.json").read_text())["lecture"]
    assert entry["profile"] == "fast" and entry["seconds"] > 0
    assert entry["commit"] == "unknown"  # tmp_path is outside any git repository
    assert [p["file"] for p in entry["pictures"]] == ["lecture-cell-2.png", "lecture-cell-2-2.png"]
    assert entry["pictures"][0]["code"] == "import os"
    kept = nbformat.read(executed / "lecture.ipynb", as_version=4)
    assert kept.cells[1].outputs[0]["text"] == "no picture here\n"


def test_the_commit_stamp_says_when_the_notebook_differs_from_it(tmp_path):
    def git(*arguments):
        subprocess.run(["git", "-C", str(tmp_path), *arguments], check=True, capture_output=True)

    notebook = write_notebook(tmp_path / "lecture.ipynb", "1 + 1")
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    assert notebook_figures.commit(notebook).endswith("+changes")  # not committed yet
    git("add", "lecture.ipynb")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "the lecture")
    assert "+" not in notebook_figures.commit(notebook) and notebook_figures.commit(notebook) != "unknown"
    write_notebook(notebook, "2 + 2")
    assert notebook_figures.commit(notebook).endswith("+changes")


def test_a_failing_notebook_keeps_its_pictures_and_the_command_fails(tmp_path, capsys):
    out = tmp_path / "figures"
    out.mkdir()
    (out / "broken-cell-1.png").write_bytes(b"the last good picture")
    notebook = write_notebook(tmp_path / "broken.ipynb", "raise RuntimeError('a check failed')")

    assert notebook_figures.main([str(notebook), "--out", str(out)]) == 1

    assert (out / "broken-cell-1.png").read_bytes() == b"the last good picture"
    assert not (out / "figures.json").exists()
    assert "a check failed" in capsys.readouterr().err


def test_a_path_that_is_not_a_notebook_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        notebook_figures.main([str(tmp_path / "missing.ipynb"), "--out", str(tmp_path)])
    assert stopped.value.code == 2
    assert "Received: " in capsys.readouterr().err


def markdown_links(path):
    """Relative link and image targets in a markdown file (web addresses and in-page anchors left out)."""
    for match in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)\)", path.read_text()):
        target = match.group(1)
        if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
            yield target.split("#")[0]


@pytest.mark.parametrize("document", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_documents_link_to_files_that_exist(document):
    links = list(markdown_links(document))
    missing = [target for target in links if not (document.parent / target).exists()]
    assert not missing, f"{document.name} links to files that do not exist: {missing}"


def test_the_gallery_shows_every_saved_picture_and_only_those():
    gallery = ROOT / "docs" / "gallery.md"
    shown = {Path(target).name for target in markdown_links(gallery) if target.endswith(".png")}
    index = json.loads((ROOT / "docs" / "figures" / "lectures" / "figures.json").read_text())
    recorded = {picture["file"] for entry in index.values() for picture in entry["pictures"]}
    on_disk = {p.name for p in (ROOT / "docs" / "figures" / "lectures").glob("*.png")}
    assert recorded == on_disk, "figures.json and the pictures on disk differ: rerun tools/notebook_figures.py"
    assert shown <= on_disk, f"the gallery shows pictures that are not there: {sorted(shown - on_disk)}"
    assert on_disk <= shown, f"pictures the gallery does not show: {sorted(on_disk - shown)}"
