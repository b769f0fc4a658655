"""Writes a batch's results: the CSV of grades and one Markdown feedback file per submission.

Each file is written to a temporary one and moved into place; when a target
cannot be written (a submission can make it unwritable), `write_somewhere`
writes the output beside it, time-stamped, or in a new temporary folder.
"""

import csv
import os
import re
import tempfile
import time
from pathlib import Path


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
                [result.name, *[number(result.questions[q]) for q in question_ids],
                 number(result.total), number(result.max_total), result.status, result.path]
            )
    _move(temporary, path)


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
    for result in results:
        target = directory / f"{result.name}.md"
        temporary = directory / f".{result.name}.md.tmp"
        temporary.write_text(feedback_text(assignment, result))
        _move(temporary, target)


def time_stamped(path):
    """`grades.csv` -> `grades-20261202-153000.csv` beside it (a folder the same way)."""
    path = Path(path)
    return path.with_name(f"{path.stem}-{time.strftime('%Y%m%d-%H%M%S')}{path.suffix}")


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
