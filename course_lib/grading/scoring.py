"""Scores one run: points per hidden test, and notes on the run for the feedback.

`score_tests` compares the hidden tests' results with the expected values;
`run_notes` and `cell_label` say, cell by cell, what went wrong where a
student can find it; `summarize` makes the `SubmissionResult`.
"""

import re
from dataclasses import dataclass, field

from course_lib.grading import harvest
from course_lib.grading.submissions import kept_lines, one_line

# Longest error message from a hidden test's call that the feedback shows (docs/instructors.md, "Limits").
HIDDEN_ERROR_CHARACTERS = 160


@dataclass
class TestOutcome:
    name: str
    question: str
    points: float
    earned: float
    reason: str = ""


@dataclass
class SubmissionResult:
    name: str
    path: str
    status: str
    questions: dict
    total: float
    max_total: float
    tests: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    cells: list = field(default_factory=list)


def score_tests(assignment, expected, inputs, results):
    outcomes = []
    for test in assignment.tests:
        outcome = (results or {}).get(test.name)
        earned, reason = 0.0, ""
        if not isinstance(outcome, dict) and results:
            reason = "not run (the hidden tests stopped before this one; see the notes below)"
        elif not isinstance(outcome, dict):
            reason = "not run (the notebook did not reach the hidden tests)"
        elif outcome.get("status") in ("running", "died"):
            reason = "the kernel died or was stopped during this call (for example os._exit, a crash or memory exhausted)"
        elif outcome.get("status") == "missing":
            reason = (
                f"`{outcome.get('name')}` is not defined in the notebook "
                "(not answered yet, or its cell failed, was deleted, or the name was changed)"
            )
        elif outcome.get("status") == "timeout":
            reason = f"the call did not finish within {test.timeout:g} s"
        elif outcome.get("status") == "error":
            kind = outcome.get("type", "Exception")
            if kind == "NotImplementedError":
                reason = "not implemented yet (raised NotImplementedError)"
            else:
                # Cut short: while a hidden test runs, the reference source of the parts it substitutes is in
                # the kernel's memory, and an error message is the one text a submission can send back.
                reason = f"raised {kind}: {one_line(outcome.get('message', ''), HIDDEN_ERROR_CHARACTERS)}"
        elif outcome.get("status") == "ok":
            got = harvest.decode(outcome.get("value"))
            try:
                calls = outcome.get("calls") if isinstance(outcome.get("calls"), dict) else {}
                passed, reason = test.judge(got, expected[test.name], inputs[test.name], calls)
            except Exception as error:  # a malformed answer must not stop the batch
                passed, reason = False, f"the answer could not be checked ({type(error).__name__})"
            if passed:
                earned, reason = float(test.points), ""
        else:
            reason = "the hidden test produced no readable result"
        outcomes.append(TestOutcome(test.name, test.question, float(test.points), earned, reason))
    return outcomes


DEFINITION = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)", re.M)


def cell_label(notebook, index):
    """How the feedback names cell `index` (0-based, markdown cells included) so that a student can find it.

    Colab shows no cell numbers: the number is followed by the functions (or
    classes) the cell defines, or else by its first line that is not a comment,
    e.g. "cell 5 (defines `softmax`)" or "cell 7 (`checks.check_softmax(softmax)`)".
    """
    label = f"cell {index + 1}"
    cells = getattr(notebook, "cells", None) or []
    if not 0 <= index < len(cells):
        return label
    source = cells[index].source  # a string: the submission was read by nbformat
    names = list(dict.fromkeys(DEFINITION.findall(source)))
    if names:
        shown = ", ".join(f"`{name}`" for name in names[:4]) + (", ..." if len(names) > 4 else "")
        return f"{label} (defines {shown})"
    for line in source.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            line = line.replace("`", "'")
            return f"{label} (`{line if len(line) <= 60 else line[:59].rstrip() + '…'}`)"
    return label


def run_notes(report, notebook, handed_out):
    """Human-readable notes about the run, for the feedback file."""
    notes = []
    if report is None:
        return notes
    code_cells = [(i, c) for i, c in enumerate(notebook.cells) if c.get("cell_type") == "code"]
    if handed_out is not None:
        ids = {c.get("id") for _, c in code_cells}
        submitted = {line for _, c in code_cells for line in kept_lines(c.get("source", ""))}
        missing = [cell for cell in handed_out if cell["id"] not in ids and not cell["lines"] & submitted]
        if missing:
            notes.append(
                f"{len(missing)} code cell(s) of the handed-out notebook are missing or were renamed: "
                + ", ".join(f"cell {cell['number']} (`{cell['first'][:60]}`)" for cell in missing[:8])
            )
    for index, cell in sorted(report.get("cells", {}).items(), key=lambda kv: int(kv[0])):
        status = cell.get("status")
        label = cell_label(notebook, int(index))
        if status == "error" and cell.get("error"):
            error = cell["error"]
            notes.append(f"{label} raised {error['ename']}: {one_line(error['evalue'], 400)}")
        elif status == "timeout":
            notes.append(f"{label} was stopped at the time limit (interrupted)")
        elif status == "unresponsive":
            notes.append(f"{label} did not stop when interrupted; the kernel was restarted without it")
        elif status == "died":
            notes.append(f"{label} stopped the kernel (for example `os._exit` or memory exhausted); the notebook was rerun without it")
        elif status == "output-limit":
            notes.append(f"{label} printed too much output and was interrupted")
        elif status == "not-run" and cell.get("reason") == "notebook time limit reached":
            notes.append(f"{label} was not run: the notebook time limit was reached")
        if cell.get("truncated") and status != "output-limit":
            notes.append(f"{label}: output was truncated")
    if report.get("harvest") and report["harvest"].get("status") not in ("ok", None):
        notes.append(f"the hidden tests ended with status {report['harvest']['status']!r}")
    notes.extend(report.get("notes", []))
    return notes


def cell_statuses(report):
    """[(cell index, status, exception name)] in notebook order."""
    if not report:
        return []
    return [
        (int(index), cell.get("status"), (cell.get("error") or {}).get("ename"))
        for index, cell in sorted(report.get("cells", {}).items(), key=lambda kv: int(kv[0]))
    ]


def summarize(assignment, name, path, outcomes, status, notes, seconds):
    questions = {q.id: 0.0 for q in assignment.questions}
    for outcome in outcomes:
        questions[outcome.question] += outcome.earned
    total = round(sum(questions.values()), 4)
    return SubmissionResult(
        name=name, path=str(path), status=status,
        questions={k: round(v, 4) for k, v in questions.items()},
        total=total, max_total=assignment.points(), tests=outcomes, notes=notes,
        seconds=round(seconds, 2),
    )
