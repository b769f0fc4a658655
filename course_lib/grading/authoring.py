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

A student notebook is never replaced when it holds changes that `assign`
did not write (students work in `assignments/` of their clone, and `assign`
is in everyone's `course-lib --help`). Each generated notebook records the
digest of what a student can change (`content_digest`) in its metadata,
`metadata.course_lib.student_digest`; `generate` refuses to replace a
notebook whose content no longer has that digest, unless `force=True`
(`course-lib assign --force`). A notebook written before the digest existed
is replaced only when it is what its current solution, or the solution
committed in git, gives.
"""

import copy
import hashlib
import json
import os
import re
import subprocess
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
METADATA_KEY = "course_lib"  # the notebook metadata written by course_lib: {"student_digest": "sha256:..."}
DIGEST_FIELD = "student_digest"


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


def read_solution(solution_path):
    """The solution notebook at `solution_path`, read by nbformat and checked against the notebook schema.

    Raises:
        ValueError: naming the path, when the file is not a valid notebook (nbformat's own errors do not
            name it, and some are a TypeError: `{"cells": 5}`).
    """
    try:
        solution = nbformat.read(solution_path, as_version=4)
        nbformat.validate(solution)
    except OSError:
        raise  # a missing or unreadable file: its message names the path
    except Exception as error:  # nbformat raises many kinds
        lines = str(error).strip().splitlines() or [""]
        raise ValueError(f"The solution notebook {solution_path} is not a valid Jupyter notebook "
                         f"({type(error).__name__}: {lines[0][:200]}). Received: {solution_path}") from error
    return solution


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
    student.metadata[METADATA_KEY] = {DIGEST_FIELD: content_digest(student)}
    return student, removed


def content_digest(notebook):
    """The digest of what a student can change in a notebook: `"sha256:<hex>"`.

    It covers each cell's type, source, outputs and attachments, in order (so
    running a cell, adding, deleting or editing one all change it), but not
    the set-up cell's source nor any metadata: `python tools/course_map.py`
    rewrites those when `course.toml` changes, and a notebook so refreshed is
    still the one `assign` wrote.
    """
    setup = course_repository.setup_cell(notebook)
    parts = [
        [cell.get("cell_type"), "" if cell is setup else _source(cell), cell.get("outputs", []),
         cell.get("attachments", {})]
        for cell in notebook.cells
    ]
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorded_digest(notebook):
    """The digest `assign` recorded in a student notebook's metadata, or None (a notebook from before it did)."""
    record = notebook.metadata.get(METADATA_KEY)
    return record.get(DIGEST_FIELD) if isinstance(record, dict) else None


def _committed_solution(solution_path):
    """The solution notebook as committed in git (HEAD), read by nbformat; None without git or such a commit."""
    solution_path = Path(solution_path).resolve()
    try:
        shown = subprocess.run(
            ["git", "-C", str(solution_path.parent), "show", f"HEAD:./{solution_path.name}"],
            capture_output=True, text=True, timeout=60, check=False,
        )
        return nbformat.reads(shown.stdout, as_version=4) if shown.returncode == 0 else None
    except Exception:  # no git, not a repository, an unreadable commit: there is simply no committed solution
        return None


def _legacy_is_generated(digest, solution_path, root):
    """Whether a notebook without a recorded digest is what `assign` gives from its solution, current or committed.

    Only those two can be told apart from a student's edits; whoever changed
    the solution since the committed student notebook was generated (the
    usual way to come here) finds it matching the committed solution.
    """
    solutions = [read_solution(solution_path), _committed_solution(solution_path)]
    for solution in solutions:
        try:
            if solution is not None and content_digest(make_student_notebook(solution, root)[0]) == digest:
                return True
        except ValueError:  # a committed solution with a malformed region matches nothing
            continue
    return False


def unsaved_changes(solution_path, target_path=None, root=None):
    """Why replacing the student notebook could lose work: a short sentence, or None when nothing would be lost.

    Nothing is lost when there is no notebook yet, when it is still what
    `assign` wrote (its content has the digest recorded in it), or when it is
    already what `assign` would write now. A notebook without a recorded
    digest (generated before `assign` recorded one) counts as unchanged only
    when its solution, current or committed in git, gives it. The set-up cell
    is left out (`content_digest`): a hand edit there is not seen, since the
    notebook does not record which set-up cell it was written with.
    """
    target_path = Path(target_path) if target_path else student_path(solution_path)
    if not target_path.exists():
        return None
    if not target_path.is_file():
        return "it is not a file"
    try:
        current = nbformat.reads(target_path.read_text(), as_version=4)
    except Exception:  # nbformat raises many kinds; an unreadable file may still be someone's work
        return "it is not a readable notebook, so it cannot be told from a student's work"
    digest = content_digest(current)
    if digest == content_digest(make_student_notebook(read_solution(solution_path), root)[0]):
        return None
    recorded = recorded_digest(current)
    if recorded is not None:
        return None if digest == recorded else "it was changed since `course-lib assign` wrote it"
    if _legacy_is_generated(digest, solution_path, root):
        return None
    return ("it records no digest (written before `course-lib assign` recorded one) and is not what its solution "
            "gives, now or as committed, so it may hold edits")


def check_replaceable(solution_path, target_path=None, root=None):
    """Raises ValueError, naming the notebook and why, when replacing it could lose work (`unsaved_changes`)."""
    target_path = Path(target_path) if target_path else student_path(solution_path)
    reason = unsaved_changes(solution_path, target_path, root)
    if reason:
        raise ValueError(
            f"Refusing to replace {target_path}: {reason}. It may hold a student's work: move it aside, or "
            f"pass --force (`force=True`) to replace it. Received: {solution_path} -> {target_path}"
        )


def student_path(solution_path):
    """The student notebook of `solution_path`: `assignments/` beside its `solutions/` folder.

    The path is made absolute first: from inside `solutions/`, `A1_....ipynb` has `.` as its parent's
    parent, and the student notebook went to `solutions/assignments/`. Links are not followed, so a
    `solutions/` linked in from elsewhere still has the repository's `assignments/` beside it.
    """
    solution_path = Path(os.path.abspath(solution_path))
    return solution_path.parent.parent / "assignments" / solution_path.name


def render(notebook):
    return nbformat.writes(notebook) + "\n"


def generate(solution_path, target_path=None, root=None, force=False):
    """Writes the student notebook; returns its path. `root` holds `course.toml` (default: this repository).

    Raises ValueError, and writes nothing, when the notebook there holds
    changes `assign` did not write (`check_replaceable`), unless `force`.
    """
    student, _ = make_student_notebook(read_solution(solution_path), root)
    nbformat.validate(student)
    target_path = Path(target_path) if target_path else student_path(solution_path)
    if not force:
        check_replaceable(solution_path, target_path, root)
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
    student, _ = make_student_notebook(read_solution(solution_path), root)
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
    for path in paths:  # all of them before any is written, so that the error names the file
        read_solution(path)
    if not args.check and not args.force:
        _refuse_edited(paths)
    stale = []
    for path in paths:
        if args.check:
            reasons = stale_reasons(path)
            if reasons:
                stale.append(path)
                print(f"out of date: {student_path(path)}: {'; '.join(reasons)} (run `course-lib assign {path}`)",
                      file=sys.stderr)
        else:
            print(f"wrote {generate(path, force=args.force)}")
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


def _refuse_edited(paths):
    """Raises ValueError naming every student notebook that holds changes, before any is written.

    All are checked first so that `assign --all` writes all of them or none,
    and the message lists every notebook at risk at once.
    """
    refused = [(student_path(path), unsaved_changes(path)) for path in paths]
    refused = [(target, reason) for target, reason in refused if reason]
    if refused:
        listed = ", ".join(f"{target} ({reason})" for target, reason in refused)
        raise ValueError(
            f"Refusing to replace {listed}: a student's work may be there, so no notebook was written. Move it "
            f"aside, or pass --force to replace it (its edits are lost). "
            f"Received: {' '.join(str(path) for path in paths)}"
        )


def register_cli(commands):
    parser = commands.root.add_parser(
        "assign", help="generate the student notebooks (assignments/) from the solutions (solutions/)",
        description="Replaces the marked solution code with stubs, clears outputs and writes the Colab set-up "
                    "cell from course.toml. After editing course.toml, `python tools/course_map.py` refreshes the "
                    "set-up cells of notebooks/, solutions/ and assignments/ as well. A student notebook that was "
                    "changed since assign wrote it (cells edited, added, deleted or run) is never replaced: the "
                    "command writes nothing and exits with status 2, naming it, unless --force.",
    )
    parser.add_argument("solutions", nargs="*", help="solution notebooks (default: all of solutions/)")
    parser.add_argument("--all", action="store_true", help="every notebook in solutions/")
    parser.add_argument("--check", action="store_true", help="only check that assignments/ is up to date (with solutions/ and course.toml)")
    parser.add_argument("--links", action="store_true", help="print the Colab link of each student notebook")
    parser.add_argument("--force", action="store_true",
                        help="replace student notebooks even when they were changed since assign wrote them "
                             "(their edits are lost)")
    parser.set_defaults(handler=_assign_command)


__all__ = ["check_replaceable", "content_digest", "generate", "is_up_to_date", "make_student_notebook",
           "stale_reasons", "strip_regions", "unsaved_changes"]
