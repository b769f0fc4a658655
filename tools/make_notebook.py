"""Builds a `.ipynb` from a percent-format Python script (authoring aid).

    python tools/make_notebook.py lecture.py notebooks/01_reversal.ipynb

`# %% [markdown]` starts a markdown cell (its lines lose the leading `# `),
`# %%` a code cell. The Colab set-up cell (install course_lib when it is
missing) is put first, from the repository URL in `course.toml`
(`course_lib.course_repository`; rerun `python tools/course_map.py` after
editing `course.toml` to refresh it in every existing notebook).
"""

import argparse
import re
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
    cells = cells_from_percent(Path(source_path).read_text(encoding="utf-8"))
    notebook.cells = [cells[0], nbformat.v4.new_code_cell(setup_cell_source()), *cells[1:]] if cells and cells[0].cell_type == "markdown" else [nbformat.v4.new_code_cell(setup_cell_source()), *cells]
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index}"
    nbformat.validate(notebook)
    nbformat.write(notebook, target_path)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Builds a .ipynb from a percent-format Python script (`# %%` code cells, "
                    "`# %% [markdown]` markdown cells), with the Colab set-up cell put first.")
    parser.add_argument("source", help="the percent-format .py script")
    parser.add_argument("target", help="the .ipynb file to write (replaced when it exists)")
    args = parser.parse_args(argv)
    source, target = Path(args.source), Path(args.target)
    # Checked before anything is built: these used to end in a traceback.
    if not source.is_file():
        parser.error(f"argument source: {'expected a file, received a folder' if source.is_dir() else 'no such file'}"
                     f": {args.source!r}")
    if target.is_dir():
        parser.error(f"argument target: expected a file, received {args.target!r}, which is a folder")
    folder = target.parent
    if not folder.is_dir():
        parser.error(f"argument target: {str(folder)!r} {'is a file' if folder.exists() else 'does not exist'}; "
                     f"the notebook goes into an existing folder. Received: {args.target!r}")
    try:
        build(source, target)
    except UnicodeDecodeError as error:
        parser.error(f"argument source: {args.source!r} is not UTF-8 text ({error.reason} at byte {error.start})")
    except OSError as error:  # a target that cannot be written
        parser.error(f"{error.strerror or error}: {error.filename or args.target!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
