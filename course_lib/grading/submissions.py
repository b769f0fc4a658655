"""Prepares a batch: reads the submitted notebooks and what they are compared with.

A submission is read (`read_submission`) into a notebook or a reason it is
not graded; the handed-out notebook's code cells (`handed_out_cells`) tell
deleted cells apart; the hidden tests' inputs and expected values
(`hidden_inputs`) are computed in the grader's own process; each submission
gets a unique name (`unique_names`) for its CSV row and feedback file.
`one_line` quotes an error message in one line, as the feedback shows it.
"""

from pathlib import Path

import numpy as np

from course_lib.grading.runner import ANSI
from course_lib.grading.spec import REPOSITORY_ROOT

MAX_NOTEBOOK_BYTES = 20 * 2**20


def one_line(text, limit):
    """An error message as one line of a Markdown list: no colour codes, no line breaks, at most `limit` characters."""
    text = " ".join(ANSI.sub("", str(text)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def hidden_inputs(assignment):
    """Inputs and expected values of every test, computed in this process."""
    inputs, expected = {}, {}
    for test in assignment.tests:
        rng = np.random.default_rng(test.seed(assignment.id))
        inputs[test.name] = test.inputs(rng)
        expected[test.name] = test.expected(inputs[test.name])
    return inputs, expected


STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError")


def kept_lines(source):
    """A cell's non-blank lines, without the stubs students replace."""
    if not isinstance(source, str):
        source = "".join(str(part) for part in source or [])
    lines = (line.strip() for line in source.splitlines())
    return [line for line in lines if line and not line.startswith(STUB_LINES)]


def handed_out_cells(assignment):
    """The student notebook's code cells, to tell deleted cells apart.

    Each is known by its id and by its first and last lines that students
    do not edit: notebooks saved without cell ids (nbformat before 4.5) get
    new random ids when read, and must not look as if every cell were deleted.
    """
    path = REPOSITORY_ROOT / "assignments" / f"{assignment.notebook}.ipynb"
    if not path.is_file():
        return None
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") == "code":
            kept = kept_lines(cell.get("source", ""))
            cells.append({"id": cell.get("id"), "number": number, "lines": {kept[0], kept[-1]} if kept else set(),
                          "first": kept[0] if kept else ""})
    return cells


def unique_names(paths):
    """File stems, made unique (ignoring case) with -2, -3...: one CSV row and feedback file each."""
    stems = [Path(path).stem for path in paths]
    taken = {stem.lower() for stem in stems}
    names, used = [], set()
    for stem in stems:
        name, count = stem, 1
        # A suffixed name must not be another submission's own stem ("alice", "alice", "alice-2").
        while name.lower() in used or (name != stem and name.lower() in taken):
            count += 1
            name = f"{stem}-{count}"
        used.add(name.lower())
        names.append(name)
    return names


def read_submission(path):
    """The submission as a notebook, or (None, reason)."""
    import nbformat

    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        return None, f"could not read the file ({error.strerror})"
    if size > MAX_NOTEBOOK_BYTES:
        return None, f"the file is {size / 2**20:.1f} MB; notebooks above {MAX_NOTEBOOK_BYTES // 2**20} MB are not graded"
    try:
        text = path.read_text(encoding="utf-8")
        notebook = nbformat.reads(text, as_version=4)
    except Exception as error:  # nbformat raises many kinds
        return None, f"not a Jupyter notebook ({type(error).__name__}: {one_line(error, 200)})"
    if not isinstance(notebook.get("cells"), list):
        return None, "not a Jupyter notebook (no list of cells)"
    for number, cell in enumerate(notebook.cells, start=1):
        if not isinstance(cell, dict):
            return None, f"not a Jupyter notebook (cell {number} is a {type(cell).__name__}, not a cell)"
        source = cell.get("source", "")  # nbformat has joined a list of lines (and refused other lists)
        if not isinstance(source, str):
            return None, f"the notebook is damaged: the text of cell {number} is a {type(source).__name__}, not text"
        if not isinstance(cell.get("metadata"), dict):
            cell["metadata"] = {}
        tags = cell["metadata"].get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            cell["metadata"]["tags"] = []  # damaged tags are ignored rather than failing the run
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return notebook, ""
