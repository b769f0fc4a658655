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
