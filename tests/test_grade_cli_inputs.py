"""`course-lib grade`'s inputs and outputs: what it refuses before grading, and what it moves aside.

Review of 5 Dec 2026: `--feedback DIR` moved any folder that was not empty aside as "earlier feedback"
(a run folder, or the course's own `notebooks/` given by mistake); a submission path that did not exist
became a zero in the CSV with exit status 0; `--jobs 0` and `--memory-mb 0` failed only inside `grade`,
with a message naming keyword arguments rather than the flags. The submissions here are not notebooks,
so no kernel starts: each test takes about a second.
"""

import csv
import json

import pytest

from course_lib.cli import main
from course_lib.grading import grader, reports
from private_copy import needs_private_copy

GRADES_HEADER = "submission,softmax,mask,score,context,steps,total,max_total,status,file\n"


@pytest.fixture
def junk(tmp_path):
    """A submitted file that is not a notebook: graded at once, zero with a reason."""
    path = tmp_path / "junk.ipynb"
    path.write_text("not json")
    return path


def _contents(folder):
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else None) for p in folder.rglob("*"))


@needs_private_copy
def test_a_folder_the_grader_did_not_write_is_refused_not_moved(tmp_path, junk, capsys):
    # `--feedback revcopy` moved a reversal run to revcopy-<time>/ as "earlier feedback".
    run = tmp_path / "revcopy"
    (run / "plots").mkdir(parents=True)
    (run / "model.keras").write_bytes(b"weights")
    (run / "course_run.json").write_text('{"task": "reversal"}')
    (run / "plots" / "heat.png").write_bytes(b"png")
    before = _contents(run)
    out = tmp_path / "grades.csv"
    assert main(["grade", "A1", str(junk), "--out", str(out), "--feedback", str(run)]) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("course-lib: error:")]
    assert f"The feedback folder {run} holds course_run.json, model.keras, plots/, which course-lib grade did not write" in line
    assert f"Received: --feedback {run}" in line and "[1/1]" not in err  # refused before grading
    assert _contents(run) == before and not list(tmp_path.glob("revcopy-*")) and not out.exists()


@needs_private_copy
def test_the_grader_marks_its_feedback_folders_and_moves_only_those_aside(tmp_path, junk, capsys):
    feedback = tmp_path / "fb"
    command = ["grade", "A1", str(junk), "--feedback", str(feedback)]
    assert main(command) == 0
    marker = json.loads((feedback / reports.FEEDBACK_MARKER).read_text())
    assert marker == {"written_by": "course-lib grade", "assignment": "A1"}
    (feedback / "notes-for-alice.txt").write_text("mine")  # added by the instructor: moves with its folder
    assert main(command) == 0
    err = capsys.readouterr().err
    [kept] = tmp_path.glob("fb-*")
    assert f"{feedback} held earlier feedback: kept as {kept}" in err
    assert sorted(p.name for p in kept.iterdir()) == [reports.FEEDBACK_MARKER, "junk.md", "notes-for-alice.txt"]
    assert sorted(p.name for p in feedback.iterdir()) == [reports.FEEDBACK_MARKER, "junk.md"]
    assert "did not write appeared" not in err, err  # the marker is the grader's own file


@needs_private_copy
def test_a_feedback_folder_from_before_the_marker_is_moved_only_when_it_holds_nothing_but_the_graders_files(
        tmp_path, junk):
    old = tmp_path / "old"
    old.mkdir()
    (old / "alice.md").write_text("# A1 (A1_bahdanau_attention): feedback for alice.ipynb\n\nScore: 3 / 10\n")
    (old / ".bob.md.tmp").write_text("# A1 (A1_bahdanau_attention): feedb")  # a write that was stopped
    (old / "grades.csv").write_text(GRADES_HEADER + "alice,1,1,1,0,0,3,10,graded,alice.ipynb\n")
    lines = []
    grader.grade("A1", [junk], feedback_dir=old, progress=lines.append)
    [kept] = tmp_path.glob("old-*")
    assert sorted(p.name for p in kept.iterdir()) == [".bob.md.tmp", "alice.md", "grades.csv"]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "alice.md").write_text("# A1 (A1_bahdanau_attention): feedback for alice.ipynb\n")
    (notes / "plan.md").write_text("# Week 3\n")  # Markdown, but no feedback file
    with pytest.raises(ValueError, match=f"The feedback folder {notes} holds plan.md, which course-lib grade"):
        grader.grade("A1", [junk], feedback_dir=notes, progress=lines.append)
    assert sorted(p.name for p in notes.iterdir()) == ["alice.md", "plan.md"] and not list(tmp_path.glob("notes-*"))


@needs_private_copy
def test_an_out_path_that_is_not_an_earlier_csv_of_grades_is_refused_not_moved(tmp_path, junk):
    # `--out` moved any existing file aside as "earlier grades" (a notebook, notes), and `grade(out=folder)` a folder.
    notes = tmp_path / "notes.txt"
    notes.write_text("hi\n")
    with pytest.raises(ValueError, match=f"The CSV path {notes} is a file whose first line is 'hi', not a CSV of grades"):
        grader.grade("A1", [junk], out=notes, progress=lambda line: None)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("a")
    with pytest.raises(ValueError, match=f"The CSV path {folder} is a folder"):
        grader.grade("A1", [junk], out=folder, progress=lambda line: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "junk.ipynb", "notes.txt"]
    # An earlier CSV that a spreadsheet saved with a byte-order mark and a column of its own is still ours.
    out = tmp_path / "grades.csv"
    out.write_text("\ufeff" + GRADES_HEADER.strip() + ",comment\nalice,1,1,1,0,0,3,10,graded,alice.ipynb,late\n")
    grader.grade("A1", [junk], out=out, progress=lambda line: None)
    [kept] = tmp_path.glob("grades-*.csv")
    assert kept.read_text().endswith(",late\n") and [r["submission"] for r in csv.DictReader(out.open())] == ["junk"]


@needs_private_copy
def test_a_csv_inside_the_feedback_folder_is_not_reported_as_a_stray(tmp_path, junk, capsys):
    feedback = tmp_path / "fb"
    assert main(["grade", "A1", str(junk), "--out", str(feedback / "grades.csv"), "--feedback", str(feedback)]) == 0
    assert "did not write appeared" not in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_submission_path_that_is_not_a_file_is_refused_before_grading(tmp_path, junk, capsys, kind):
    # `course-lib grade A1 /nope.ipynb` printed `0/10 (not graded: could not read the file ...)` and exited 0.
    wrong = tmp_path / ("nope.ipynb" if kind == "missing" else "submissions")
    if kind == "folder":
        wrong.mkdir()
    out = tmp_path / "grades.csv"
    assert main(["grade", "A1", str(junk), str(wrong), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("course-lib: error:")]
    expected = f"No such submission: {wrong}" if kind == "missing" else f"A folder, not a notebook: {wrong}"
    assert expected in line and "nothing was graded" in line and "[1/" not in err
    assert not out.exists()


@needs_private_copy
def test_a_file_that_is_there_but_not_a_notebook_still_scores_zero_with_a_reason(junk, capsys):
    # A student can hand in a broken file: that is a grade (zero, and why), not a usage error.
    assert main(["grade", "A1", str(junk)]) == 0
    assert capsys.readouterr().out.startswith("junk,0,10,not graded: not a Jupyter notebook")


@pytest.mark.parametrize("flag, value", [("--jobs", "0"), ("--jobs", "-2"), ("--memory-mb", "0"), ("--memory-mb", "1.5")])
def test_a_count_below_one_is_a_usage_error_naming_its_flag(junk, capsys, flag, value):
    # `--memory-mb 0` said `Received: cell_timeout=None, notebook_timeout=None, memory_mb=0`.
    with pytest.raises(SystemExit) as stop:
        main(["grade", "A1", str(junk), flag, value])
    assert stop.value.code == 2
    assert f"argument {flag}: expected a positive integer, received '{value}'" in capsys.readouterr().err


# -- review of 6 Dec 2026 ---------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--timeout", "--notebook-timeout"])
def test_a_time_limit_over_a_week_is_a_usage_error_naming_its_flag(tmp_path, junk, capsys, flag):
    # `--notebook-timeout 3000000` overflowed the wait for the runner ("OverflowError: timeout is too large"):
    # every submission scored 0, "hidden tests not run", and the command exited 0.
    out = tmp_path / "grades.csv"
    with pytest.raises(SystemExit) as stop:
        main(["grade", "A1", str(junk), flag, "3000000", "--out", str(out)])
    assert stop.value.code == 2
    assert f"argument {flag}: expected at most 604800 seconds (one week), received '3000000'" in capsys.readouterr().err
    assert not out.exists()


@needs_private_copy
def test_grade_refuses_a_time_limit_over_a_week(junk):
    for limits in ({"notebook_timeout": 3_000_000}, {"cell_timeout": float("nan")}):
        with pytest.raises(ValueError, match=r"Timeouts must be positive and at most 604800 s \(one week\).*Received"):
            grader.grade("A1", [junk], progress=lambda line: None, **limits)


@pytest.mark.parametrize(
    "body, message",
    [
        ('raise RuntimeError("not finished")', "RuntimeError: not finished (raised at line 2)"),
        ("1 / 0", "ZeroDivisionError: division by zero (raised at line 2)"),
        ("import no_such_module_here", "ModuleNotFoundError: No module named 'no_such_module_here' (raised at line 2)"),
    ],
)
def test_a_hidden_test_file_that_fails_to_load_is_an_error_naming_it(tmp_path, junk, capsys, body, message):
    # `course-lib grade bad.py sub.ipynb` printed the file's traceback.
    bad = tmp_path / "bad.py"
    bad.write_text(f"import math\n{body}\n")
    assert main(["grade", str(bad), str(junk)]) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("course-lib: error:")]
    assert f"The hidden tests {bad} could not be loaded: {message}. Fix the file. Received: {bad}" in line
    assert "Traceback" not in err


def test_a_hidden_test_file_whose_assignment_is_not_an_assignment_is_an_error_naming_it(tmp_path, junk, capsys):
    # `ASSIGNMENT = 5` failed with a traceback (AttributeError: 'int' object has no attribute 'id').
    bad = tmp_path / "bad.py"
    bad.write_text("ASSIGNMENT = 5\n")
    assert main(["grade", str(bad), str(junk)]) == 2
    err = capsys.readouterr().err
    assert (f"course-lib: error: {bad} must define ASSIGNMENT as an Assignment (from course_lib.grading.spec). "
            "Received: ASSIGNMENT = 5 (of type int)") in err
    assert "Traceback" not in err


@needs_private_copy
def test_the_same_path_for_the_grades_and_the_feedback_is_refused_before_grading(tmp_path, junk, capsys):
    # `--out both --feedback both` graded, then found the CSV's path taken by the feedback folder.
    both = tmp_path / "both"
    assert main(["grade", "A1", str(junk), "--out", str(both), "--feedback", str(both)]) == 2
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("course-lib: error:")]
    assert f"The CSV path {both} is the feedback folder too" in line
    assert f"Received: --out {both} --feedback {both}" in line and "[1/1]" not in err
    with pytest.raises(ValueError, match=f"The CSV path {both} is a folder above the feedback folder too"):
        grader.grade("A1", [junk], out=both, feedback_dir=both / "fb", progress=lambda line: None)
    assert not both.exists()


def test_an_out_path_that_is_a_link_is_refused_as_a_link(tmp_path):
    # A link to an earlier CSV of grades was refused as "a file whose first line is 'submission,...', not a
    # CSV of grades".
    grades = tmp_path / "grades.csv"
    grades.write_text(GRADES_HEADER + "alice,1,1,1,0,0,3,10,graded,alice.ipynb\n")
    link = tmp_path / "glink.csv"
    link.symlink_to(grades)
    with pytest.raises(ValueError) as refused:
        reports.check_csv_target(link)
    message = str(refused.value)
    assert f"The CSV path {link} is a symbolic link (to {grades})" in message and f"Received: --out {link}" in message
    assert "submission," not in message and "not a CSV of grades" not in message


@needs_private_copy
def test_a_submission_given_twice_under_two_paths_is_graded_once(tmp_path, junk, capsys, monkeypatch):
    # `grade A1 a/sub.ipynb ./a/sub.ipynb` graded the file twice, as two students (`sub` and `sub-2`).
    sub = tmp_path / "a" / "sub.ipynb"
    sub.parent.mkdir()
    sub.write_text("not json")
    monkeypatch.chdir(tmp_path)
    assert main(["grade", "A1", "a/sub.ipynb", "./a/sub.ipynb", str(sub), str(junk)]) == 0
    captured = capsys.readouterr()
    assert [line.split(",")[0] for line in captured.out.splitlines()] == ["sub", "junk"]
    assert f"note: left out ./a/sub.ipynb, {sub}: the same file as a submission given before it" in captured.err
    # Two students' names that link to one stored file are two submissions: students are known by the name.
    for name in ("alice.ipynb", "bob.ipynb"):
        (tmp_path / name).symlink_to(sub)
    assert main(["grade", "A1", "alice.ipynb", "bob.ipynb"]) == 0
    captured = capsys.readouterr()
    assert [line.split(",")[0] for line in captured.out.splitlines()] == ["alice", "bob"] and "left out" not in captured.err
