"""Writes a batch's results: the CSV of grades and one Markdown feedback file per submission.

Each file is written to a temporary one and moved into place. An earlier
batch's CSV or feedback folder is first moved aside to a time-stamped path
beside it (`keep_aside`), so regrading never replaces them; only the
grader's own output is moved: every feedback folder it writes holds
`FEEDBACK_MARKER`, and a path holding anything else is refused before
grading (`check_csv_target`, `check_feedback_folder`). When a target
cannot be written (a submission can make it unwritable), `write_somewhere`
writes the output beside it, time-stamped, or in a new temporary folder.
"""

import csv
import json
import os
import re
import tempfile
import time
from pathlib import Path


FEEDBACK_MARKER = "course_feedback.json"  # in every feedback folder the grader writes: its earlier output
CSV_COLUMNS = ("submission", "total", "max_total", "status", "file")  # in every CSV of grades it writes
FEEDBACK_TITLE = re.compile(r"# \S+ \(.*\): feedback for ")  # the first line of every feedback file


def write_csv(assignment, results, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", newline="") as handle:
        writer = csv.writer(handle)
        question_ids = [q.id for q in assignment.questions]
        writer.writerow(["submission", *question_ids, "total", "max_total", "status", "file"])
        for result in results:
            writer.writerow(
                [spreadsheet_text(result.name), *[number(result.questions[q]) for q in question_ids],
                 number(result.total), number(result.max_total), result.status, spreadsheet_text(result.path)]
            )
    _move(temporary, path)


def spreadsheet_text(value):
    """`value` as text a spreadsheet shows, never runs: a leading `'` before `=`, `+`, `-` or `@`.

    The submission's name and path come from the student's file name; `=HYPERLINK(...).ipynb` would
    otherwise become a formula when the instructor opens the CSV in Excel or Sheets.
    """
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _move(temporary, path):
    """Puts a finished file in its place; the temporary one does not stay behind when that fails."""
    try:
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def number(value):
    return f"{value:g}"


def feedback_text(assignment, result):
    lines = [
        f"# {assignment.id} ({assignment.notebook}): feedback for {Path(result.path).name}",
        "",
        f"Score: {number(result.total)} / {number(result.max_total)}   (status: {result.status})",
        "",
        "## Points per question",
        "",
    ]
    titles = {q.id: q.title for q in assignment.questions}
    for question_id, points in result.questions.items():
        title = f" ({titles[question_id]})" if titles[question_id] else ""
        lines.append(f"- {question_id}{title}: {number(points)} / {number(assignment.points(question_id))}")
    lines += ["", "## Hidden tests", ""]
    if not result.tests:
        lines.append("- none were run")
    for outcome in result.tests:
        mark = "PASS" if outcome.earned else "FAIL"
        line = f"- [{mark}] {outcome.name} ({number(outcome.earned)}/{number(outcome.points)})"
        if outcome.reason:
            line += f": {outcome.reason}"
        lines.append(line)
    lines += ["", "## Running the notebook", ""]
    if any(re.search(r"\bcell \d+", note) for note in result.notes):
        lines += ["Cells are counted from the top of the notebook, markdown (text) cells included.", ""]
    lines += [f"- {note}" for note in result.notes] or ["- every cell ran without an error"]
    lines.append("")
    return "\n".join(lines)


def write_feedback(assignment, results, directory):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / FEEDBACK_MARKER
    if not marker.is_file():  # (written again when a submission deleted it)
        marker.write_text(json.dumps({"written_by": "course-lib grade", "assignment": assignment.id}) + "\n")
    for result in results:
        target = directory / f"{result.name}.md"
        temporary = directory / f".{result.name}.md.tmp"
        temporary.write_text(feedback_text(assignment, result))
        _move(temporary, target)


def time_stamped(path):
    """`grades.csv` -> `grades-20261202-153000.csv` beside it (a folder the same way).

    The name returned is not taken: when it is (two batches in the same
    second), `-2`, `-3`... follows the time, so an earlier kept copy is never
    replaced by a later one.
    """
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, count = path.with_name(f"{path.stem}-{stamp}{path.suffix}"), 1
    while candidate.exists() or candidate.is_symlink():
        count += 1
        candidate = path.with_name(f"{path.stem}-{stamp}-{count}{path.suffix}")
    return candidate


def keep_aside(path, kind, progress):
    """Moves an earlier batch's output at `path` (the CSV, or a feedback folder that is not empty) to a
    new time-stamped path beside it, and says so with `progress`.

    Regrading writes the same names again; without this, the earlier grades
    or feedback would be silently replaced. Check `path` first with
    `check_csv_target` or `check_feedback_folder`: this moves whatever is there.

    Args:
        path: the output asked for (`--out` or `--feedback`).
        kind: what it holds, for the progress line ("grades", "feedback").
        progress: callable(str) for the line.

    Returns:
        The path it was moved to, or None when there was nothing to keep.
    """
    path = Path(path)
    if not (path.is_file() or (path.is_dir() and any(path.iterdir()))):
        return None
    kept = time_stamped(path)
    os.rename(path, kept)
    progress(f"{path} held earlier {kind}: kept as {kept}")
    return kept


def _first_line(path):
    """The first line of the file `path` (at most 4,096 characters, without its line break), or None."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
            return handle.readline(4096).rstrip("\r\n")
    except OSError:
        return None


def is_grades_csv(path):
    """Whether `path` is a file whose first row is the header of a CSV of grades the grader writes
    (`submission`, then the questions, `total`, `max_total`, `status` and `file`; kept when a
    spreadsheet added columns after them or a byte-order mark)."""
    path = Path(path)
    if path.is_symlink() or not path.is_file():
        return False
    line = _first_line(path)
    try:
        header = next(csv.reader([line])) if line else []
    except csv.Error:
        return False
    return header[:1] == ["submission"] and set(CSV_COLUMNS) <= set(header)


def _grader_file(path):
    """Whether `path`, in a feedback folder from before `FEEDBACK_MARKER`, is a file the grader writes there:
    a feedback file (`<submission>.md`, known by its first line), one's temporary (`.<submission>.md.tmp`),
    or a CSV of grades (`--out` inside the folder, and its kept copies)."""
    if path.is_symlink() or not path.is_file():
        return False
    if path.name.startswith(".") and path.name.endswith(".md.tmp"):
        return True
    if path.suffix == ".md":
        return bool(FEEDBACK_TITLE.match(_first_line(path) or ""))
    return path.suffix == ".csv" and is_grades_csv(path)


def listing(names, limit=5):
    """`names` in their order, joined by commas, the first `limit` of them and how many more."""
    names = list(names)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_csv_target(path):
    """Refuses an `--out` path that holds something other than a CSV of grades the grader wrote.

    `keep_aside` moves an earlier batch's CSV out of the way; anything else there (a notebook, notes,
    a folder given by mistake, a symbolic link) is refused rather than moved. A new path is fine.

    Raises:
        ValueError: naming the path and what it holds.
    """
    path = Path(path)
    if not (path.exists() or path.is_symlink()) or is_grades_csv(path):
        return
    if path.is_symlink():
        # Whatever it points to: `keep_aside` would move the link, not the file, and the message said that
        # a link to an earlier CSV was "not a CSV of grades" while quoting its header.
        raise ValueError(
            f"The CSV path {path} is a symbolic link (to {os.readlink(path)}); a link is neither moved aside nor "
            "written through, so it is left as it is. Give a new path for the grades, or the path of the file it "
            f"points to. Received: --out {path}"
        )
    if path.is_dir():
        held = "is a folder"
    else:
        line = _first_line(path)
        held = "is an empty file" if line == "" else f"is a file whose first line is {(line or '')[:80]!r}"
    raise ValueError(
        f"The CSV path {path} {held}, not a CSV of grades that course-lib grade wrote (its first row starts with "
        "'submission'); only an earlier batch's grades are moved aside, so nothing else there is moved or replaced. "
        f"Give a new path for the grades. Received: --out {path}"
    )


def check_feedback_folder(directory, submissions):
    """Refuses a `--feedback` path that `keep_aside` cannot move safely: a file; a folder holding a
    submission or the current folder (they would move with it); or a folder that is not an earlier
    batch's feedback: one without `FEEDBACK_MARKER` that holds anything but files the grader writes
    (for folders written before the marker). A new or empty folder is fine.

    Raises:
        ValueError: naming the folder and what it holds.
    """
    folder = Path(directory).resolve()
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--feedback must be a folder, and {directory} is a file. Received: --feedback {directory}")
    if not folder.is_dir() or not any(folder.iterdir()):
        return  # nothing there to move aside
    inside = [str(p) for p in submissions if folder in Path(p).resolve().parents]
    if Path.cwd().resolve() == folder or folder in Path.cwd().resolve().parents:
        inside.insert(0, f"the current folder {Path.cwd()}")
    if inside:
        raise ValueError(
            f"The feedback folder {directory} holds {', '.join(inside[:3])}{', ...' if len(inside) > 3 else ''}; "
            "an earlier batch's feedback there is moved aside before grading, and these would move with it. "
            f"Give a feedback folder of its own. Received: --feedback {directory}"
        )
    if (folder / FEEDBACK_MARKER).is_file():
        return  # the grader's own: moved aside whole
    foreign = [p.name + ("/" if p.is_dir() and not p.is_symlink() else "")
               for p in folder.iterdir() if not _grader_file(p)]
    if foreign:
        raise ValueError(
            f"The feedback folder {directory} holds {listing(sorted(foreign))}, which course-lib grade did not write "
            f"(its feedback folders hold {FEEDBACK_MARKER}); only an earlier batch's feedback is moved aside "
            f"before grading, so this folder is left as it is. Give a new or empty folder for the feedback. "
            f"Received: --feedback {directory}"
        )


def write_somewhere(kind, target, write, progress, since=""):
    """Writes an output to `target`, else to a new time-stamped path beside it, else in a new temporary folder.

    A submission runs as the grader's user and can make `target` unwritable (replace the CSV
    with a folder, say); the batch's results must still land somewhere, and the instructor be told where.

    Args:
        kind: what is written, for the warning ("CSV", "feedback").
        target: the path asked for.
        write: callable(path) that writes the output there.
        progress: callable(str) for the warning.
        since: words saying when `target` stopped being writable, for the warning.

    Returns:
        The path written.
    """
    try:
        write(target)
        return target
    except OSError as error:
        problem = error
    stamped = time_stamped(target)
    for folder in (lambda: stamped.parent, lambda: Path(tempfile.mkdtemp(prefix="course-lib-grade-"))):
        candidate = folder() / stamped.name
        try:
            write(candidate)
        except OSError:
            continue
        progress(f"WARNING: the {kind} could not be written to {target} ({problem}){since}; "
                 f"it is in {candidate} instead")
        return candidate
    raise problem
