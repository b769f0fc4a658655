"""Builds a `.ipynb` from a percent-format Python script (authoring aid).

    python tools/make_notebook.py lecture.py notebooks/01_reversal.ipynb

`# %% [markdown]` starts a markdown cell (its lines lose the leading `# `),
`# %%` a code cell. The Colab set-up cell (install course_lib when it is
missing) is put first, from the repository URL in `course.toml`
(`course_lib.course_repository`; rerun `python tools/course_map.py` after
editing `course.toml` to refresh it in every existing notebook).
"""

import re
import sys
from pathlib import Path

import nbformat

from course_lib import course_repository

ROOT = Path(__file__).resolve().parents[1]


def setup_cell_source():
    return course_repository.setup_cell_source(ROOT)


def cells_from_percent(text):
    cells, kind, lines = [], None, []

    def flush():
        body = "\n".join(lines).strip("\n")
        if kind is not None and body.strip():
            if kind == "markdown":
                body = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
                cells.append(nbformat.v4.new_markdown_cell(body))
            else:
                cells.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        else:
            lines.append(line)
    flush()
    return cells


def build(source_path, target_path):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    cells = cells_from_percent(Path(source_path).read_text())
    notebook.cells = [cells[0], nbformat.v4.new_code_cell(setup_cell_source()), *cells[1:]] if cells and cells[0].cell_type == "markdown" else [nbformat.v4.new_code_cell(setup_cell_source()), *cells]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index}"
    nbformat.validate(notebook)
    nbformat.write(notebook, target_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    build(sys.argv[1], sys.argv[2])
