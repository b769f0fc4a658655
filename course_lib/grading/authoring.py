"""Student notebooks generated from the solution notebooks.

Each assignment is written once, as the complete notebook in `solutions/`.
`course-lib assign` writes the student version to `assignments/`:

* in a code cell, the lines between `# BEGIN SOLUTION` and `# END SOLUTION`
  become a stub, at the same indentation,

      # YOUR CODE HERE
      raise NotImplementedError("<hint>")

  where the hint is the text of a `# HINT: ...` line inside the region (or a
  generic one);
* a whole cell whose first line is `# SOLUTION CELL` (or that carries the tag
  `solution`) becomes such a stub; a markdown cell so marked becomes
  "YOUR ANSWER HERE";
* a cell tagged `instructor-only` is dropped;
* outputs and execution counts are cleared; cell ids are kept, so the grader
  can tell which handed-out cells a submission deleted;
* the Colab set-up cell (the first code cell, `# Set-up: on Colab ...`) is
  written from `course.toml`, so the students of a fork install the fork's
  `course_lib` (see `course_lib/course_repository.py`).

`course-lib assign --check` exits with status 1 when a student notebook is
out of date with its solution or with `course.toml`, or when a solution's
own set-up cell is (then run `python tools/course_map.py`).
"""

import copy
import re
import sys
from pathlib import Path

import nbformat

from course_lib import course_repository
from course_lib.grading.spec import REPOSITORY_ROOT

BEGIN = re.compile(r"^(?P<indent>\s*)#\s*BEGIN SOLUTION\b", re.I)
END = re.compile(r"^\s*#\s*END SOLUTION\b", re.I)
HINT = re.compile(r"^\s*#\s*HINT:\s*(?P<hint>.+?)\s*$", re.I)
CELL_MARKER = re.compile(r"^\s*#\s*SOLUTION CELL\b(?::\s*(?P<hint>.*))?", re.I)
DEFAULT_HINT = "replace this line with your code"
ANSWER_PLACEHOLDER = "*YOUR ANSWER HERE* (double-click to edit)"


def _source(cell):
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _stub(indent, hint):
    hint = hint.replace('"', "'")
    return [f"{indent}# YOUR CODE HERE", f'{indent}raise NotImplementedError("{hint}")']


def strip_regions(source, where="cell"):
    """Replaces each BEGIN/END SOLUTION region of `source` with a stub.

    Returns `(new_source, removed_lines)`.
    """
    output, removed = [], []
    region, indent, hint = None, "", None
    for number, line in enumerate(source.splitlines(), start=1):
        begin = BEGIN.match(line)
        if region is None:
            if END.match(line):
                raise ValueError(f"{where}: `# END SOLUTION` without a BEGIN. Received: line {number}: {line!r}")
            if begin:
                region, indent, hint = number, begin.group("indent"), None
            else:
                output.append(line)
            continue
        if begin:
            raise ValueError(f"{where}: nested `# BEGIN SOLUTION` at line {number} (region opened at line {region}).")
        if END.match(line):
            output.extend(_stub(indent, hint or DEFAULT_HINT))
            region = None
            continue
        hint_match = HINT.match(line)
        if hint_match and hint is None:
            hint = hint_match.group("hint")
            continue
        removed.append(line)
    if region is not None:
        raise ValueError(f"{where}: `# BEGIN SOLUTION` at line {region} has no `# END SOLUTION`.")
    return "\n".join(output), removed


def is_solution_cell(cell):
    tags = cell.get("metadata", {}).get("tags", []) or []
    first = _source(cell).lstrip().splitlines()[:1]
    return "solution" in tags or bool(first and CELL_MARKER.match(first[0]))


def student_cell(cell, where):
    """The student version of one cell, or None to drop it; also the removed lines."""
    tags = cell.get("metadata", {}).get("tags", []) or []
    if "instructor-only" in tags:
        return None, _source(cell).splitlines()
    new = copy.deepcopy(cell)
    removed = []
    if new.get("metadata", {}).get("tags"):
        new["metadata"]["tags"] = [t for t in tags if t != "solution"]
        if not new["metadata"]["tags"]:
            del new["metadata"]["tags"]
    source = _source(cell)
    if is_solution_cell(cell):
        lines = source.lstrip().splitlines()
        marker = CELL_MARKER.match(lines[0]) if lines else None
        hint = (marker.group("hint") if marker else None) or None
        body = lines[1:] if marker else lines
        for line in body:
            hint_match = HINT.match(line)
            if hint_match and hint is None:
                hint = hint_match.group("hint")
            else:
                removed.append(line)
        if cell.get("cell_type") == "markdown":
            new["source"] = ANSWER_PLACEHOLDER
        else:
            new["source"] = "\n".join(_stub("", hint or DEFAULT_HINT))
    elif cell.get("cell_type") == "code":
        new["source"], removed = strip_regions(source, where)
    if new.get("cell_type") == "code":
        new["outputs"] = []
        new["execution_count"] = None
    return new, removed


def make_student_notebook(solution, root=None):
    """Returns `(student_notebook, removed_lines)` for a solution notebook.

    The set-up cell is built from `<root>/course.toml` (default: this
    repository's).
    """
    student = copy.deepcopy(solution)
    cells, removed = [], []
    for index, cell in enumerate(solution.cells):
        new, lost = student_cell(cell, f"cell {index + 1}")
        removed.extend(lost)
        if new is not None:
            cells.append(new)
    student.cells = cells
    student.metadata.pop("widgets", None)
    course_repository.write_setup_cell(student, course_repository.setup_cell_source(root or REPOSITORY_ROOT))
    return student, removed


def student_path(solution_path):
    solution_path = Path(solution_path)
    return solution_path.parent.parent / "assignments" / solution_path.name


def render(notebook):
    return nbformat.writes(notebook) + "\n"


def generate(solution_path, target_path=None, root=None):
    """Writes the student notebook; returns its path. `root` holds `course.toml` (default: this repository)."""
    solution = nbformat.read(solution_path, as_version=4)
    student, _ = make_student_notebook(solution, root)
    nbformat.validate(student)
    target_path = Path(target_path) if target_path else student_path(solution_path)
    target_path.parent.mkdir(parents=True, exist_ok=True)
    target_path.write_text(render(student))
    return target_path


def is_up_to_date(solution_path, target_path=None, root=None):
    """Whether the student notebook is exactly what `generate` would write now."""
    return not stale_reasons(solution_path, target_path, root)


def stale_reasons(solution_path, target_path=None, root=None):
    """Why the student notebook is out of date: a list of short sentences, empty when it is up to date."""
    root = root or REPOSITORY_ROOT
    target_path = Path(target_path) if target_path else student_path(solution_path)
    if not target_path.is_file():
        return ["it does not exist"]
    solution = nbformat.read(solution_path, as_version=4)
    student, _ = make_student_notebook(solution, root)
    text = target_path.read_text()
    if text == render(student):
        return []
    try:
        current = nbformat.reads(text, as_version=4)
    except Exception:  # nbformat raises many kinds; an unreadable notebook is simply out of date
        return ["it is not a readable notebook"]
    reasons = []
    if course_repository.write_setup_cell(current, course_repository.setup_cell_source(root)):
        reasons.append(f"its set-up cell does not install {course_repository.install_target(root)} (course.toml)")
    if render(current) != render(student):
        reasons.append("it differs from what its solution gives")
    return reasons


def solution_notebooks(root=REPOSITORY_ROOT):
    return sorted((Path(root) / "solutions").glob("*.ipynb"))


def colab_links(paths, root=REPOSITORY_ROOT):
    """Colab links of the student notebooks, from `course.toml`'s repository and branch."""
    repository = course_repository.read(root)
    return {Path(p).stem: repository.colab_url(f"assignments/{Path(p).name}") for p in paths}


def _assign_command(args):
    paths = [Path(p) for p in args.solutions]
    if args.all or not paths:
        paths = solution_notebooks()
    if not paths:
        raise FileNotFoundError("No solution notebooks found (solutions/*.ipynb).")
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:  # before --links too, which printed a link for a notebook that does not exist
        raise FileNotFoundError(f"No such solution notebook: {', '.join(missing)}")
    if args.links:
        for name, link in colab_links(paths).items():
            print(f"{name}: {link}")
        return 0
    stale = []
    for path in paths:
        if args.check:
            reasons = stale_reasons(path)
            if reasons:
                stale.append(path)
                print(f"out of date: {student_path(path)}: {'; '.join(reasons)} (run `course-lib assign {path}`)",
                      file=sys.stderr)
        else:
            print(f"wrote {generate(path)}")
    if args.check:
        own = course_repository.stale_setup_cells(paths, REPOSITORY_ROOT)
        for path in own:
            print(f"note: the set-up cell of {path} does not install {course_repository.install_target(REPOSITORY_ROOT)} "
                  f"(course.toml): run `{course_repository.REFRESH_COMMAND}`", file=sys.stderr)
        if stale:
            return 1
        print(f"{len(paths)} student notebook(s) up to date")
    elif course_repository.stale_setup_cells(paths, REPOSITORY_ROOT):
        print(f"note: some solution notebooks' set-up cells differ from course.toml (the student versions were "
              f"written from course.toml): run `{course_repository.REFRESH_COMMAND}`", file=sys.stderr)
    return 0


def register_cli(commands):
    parser = commands.root.add_parser(
        "assign", help="generate the student notebooks (assignments/) from the solutions (solutions/)",
        description="Replaces the marked solution code with stubs, clears outputs and writes the Colab set-up "
                    "cell from course.toml. After editing course.toml, `python tools/course_map.py` refreshes the "
                    "set-up cells of notebooks/, solutions/ and assignments/ as well.",
    )
    parser.add_argument("solutions", nargs="*", help="solution notebooks (default: all of solutions/)")
    parser.add_argument("--all", action="store_true", help="every notebook in solutions/")
    parser.add_argument("--check", action="store_true", help="only check that assignments/ is up to date (with solutions/ and course.toml)")
    parser.add_argument("--links", action="store_true", help="print the Colab link of each student notebook")
    parser.set_defaults(handler=_assign_command)


__all__ = ["generate", "is_up_to_date", "make_student_notebook", "stale_reasons", "strip_regions"]
