"""Grades a batch of submitted notebooks against an assignment's hidden tests.

    course-lib grade A1 submissions/*.ipynb --out grades.csv --feedback feedback/ --jobs 2

For each submission, in its own kernel (see `runner.py`), the notebook runs
top to bottom with errors allowed; then the hidden tests call the student's
functions on inputs the grader generated, and the values come back as data.
The grader computes the expected values itself and compares. The CSV (the
rows finished so far) and each submission's feedback file are written as each
submission finishes, and all of them again once the whole batch is done (so a
submission that writes to those files while it runs is overwritten; one that
makes them unwritable sends the results to a new, time-stamped file instead).

A submission that is not a notebook, loops, dies, prints without end or
fills memory gets a reason and the points it earned; the batch goes on.

This module is the batch and its command line; the parts are their own modules:
`submissions.py` (reading the notebooks, the hidden inputs), `running.py` (one run
through `runner.py`), `isolation.py` (a submission's processes and home),
`scoring.py` (points and notes) and `reports.py` (the CSV and the feedback files).
"""

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course_lib.grading import harvest
from course_lib.grading.isolation import check_installation
from course_lib.grading.reports import (
    FEEDBACK_MARKER,
    check_csv_target,
    check_feedback_folder,
    keep_aside,
    listing,
    number,
    write_csv,
    write_feedback,
    write_somewhere,
)
from course_lib.grading.running import KERNEL_NOT_STARTED, RUNNER_KILLED, run_submission
from course_lib.grading.scoring import cell_statuses, run_notes, score_tests, summarize
from course_lib.grading.spec import REPOSITORY_ROOT, load_assignment
from course_lib.grading.submissions import handed_out_cells, hidden_inputs, one_line, read_submission, unique_names
from course_lib.tasks.arguments import output_file, output_folder, positive_float, positive_int

# The longest time limit taken, in seconds. Far longer ones overflow the waits they become (the pipe's poll
# counts milliseconds in a C int): `--notebook-timeout 3000000` failed every submission, with exit status 0.
MAX_TIMEOUT = 7 * 24 * 3600  # one week


def protected_files(tests_dir=None):
    """The files whose change during a batch is reported: every `.py` of `course_lib` and of the hidden tests.

    Args:
        tests_dir: the hidden tests' folder (default `hidden_tests/`).

    Returns:
        The paths, sorted; looked up again after every submission, so that a new file counts too.
    """
    tests = Path(tests_dir) if tests_dir else REPOSITORY_ROOT / "hidden_tests"
    return sorted(Path(__file__).resolve().parents[1].rglob("*.py")) + sorted(tests.rglob("*.py"))


def _fingerprint(paths):
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path).encode() + b"\0")
        try:
            digest.update(Path(path).read_bytes())
        except OSError:
            digest.update(b"<missing>")
    return digest.hexdigest()


def grade(
    assignment_name,
    submissions,
    out=None,
    feedback_dir=None,
    cell_timeout=None,
    notebook_timeout=None,
    jobs=1,
    tests_dir=None,
    profile="fast",
    memory_mb=None,
    output_limit=100_000,
    file_mb=64,
    progress=None,
):
    """Grades `submissions` (paths); returns a list of `SubmissionResult`.

    Args:
        assignment_name: `A1`, `A1_bahdanau_attention` or a hidden-test file.
        submissions: notebook paths; each must exist and be a file (ValueError naming those that are not,
            before anything is graded). A file that is not a notebook is graded: zero, with the reason.
            A file given again (under another path) is graded once, under its first path.
        out: CSV path (written after each submission, and at the end; see `write_somewhere`). An earlier
            batch's CSV there is first moved to a time-stamped name beside it; anything else there, or the
            path of `feedback_dir` (or a folder above it), is refused (ValueError).
        feedback_dir: folder for one `<submission>.md` per submission, and `FEEDBACK_MARKER`. An earlier
            batch's feedback folder is first moved, whole, to a time-stamped name beside it; a folder that
            is not one and is not empty, or that holds a submission or the current folder (which would
            move with it), is refused (ValueError).
        cell_timeout, notebook_timeout: seconds (defaults from the assignment), at most `MAX_TIMEOUT`.
        jobs: submissions graded at the same time.
        tests_dir: folder of the hidden tests (default `hidden_tests/`).
        profile: `COURSE_PROFILE` in the student kernels.
        memory_mb: address-space limit of each process of a kernel (each process it starts gets its own).
        output_limit: characters of output kept per cell.
        file_mb: largest file a kernel may write.
        progress: callable(str) for progress lines (default: stderr).
    """
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1. Received: jobs={jobs}")
    given = [str(p) for p in submissions]  # as typed, for the note on a file given twice
    submissions = [Path(p) for p in given]
    if not submissions:
        raise ValueError("No submissions given. Received: an empty list")
    # A mistyped path (or a shell pattern that matched nothing) would become a zero in the CSV.
    missing = [str(p) for p in submissions if not p.exists()]
    folders = [str(p) for p in submissions if p.is_dir()]
    if missing or folders:
        problems = [f"no such submission: {listing(missing)}"] if missing else []
        if folders:
            problems.append(f"a folder, not a notebook: {listing(folders)} (give the notebooks in it)")
        message = "; ".join(problems)
        raise ValueError(f"{message[0].upper()}{message[1:]}. Check the paths; nothing was graded.")
    assignment = load_assignment(assignment_name, tests_dir)
    check_installation()
    progress = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    # One file named twice (`a/sub.ipynb ./a/sub.ipynb`, or a pattern that overlaps another) would be
    # graded twice, as two students: the first name is kept.
    # By the path's text made absolute, links not followed: two students' names that link to one stored file
    # are two submissions (students are known by the name).
    first_named = {}
    for path in submissions:
        first_named.setdefault(os.path.abspath(path), path)
    repeats = [text for text, path in zip(given, submissions) if first_named[os.path.abspath(path)] is not path]
    if repeats:
        progress(f"note: left out {listing(repeats)}: the same file as a submission given before it (graded once)")
        submissions = list(first_named.values())
    settings = {
        "cell_timeout": float(assignment.cell_timeout if cell_timeout is None else cell_timeout),
        "notebook_timeout": float(assignment.notebook_timeout if notebook_timeout is None else notebook_timeout),
        "harvest_timeout": float(min(600, 30 + sum(t.timeout for t in assignment.tests))),
        "output_limit": int(output_limit),
        "memory_mb": int(assignment.memory_mb if memory_mb is None else memory_mb),
        "file_mb": int(file_mb),
        "profile": profile,
    }
    timeouts = (settings["cell_timeout"], settings["notebook_timeout"])
    if not all(0 < seconds <= MAX_TIMEOUT for seconds in timeouts) or settings["memory_mb"] <= 0:  # (NaN too)
        raise ValueError(
            f"Timeouts must be positive and at most {MAX_TIMEOUT} s (one week), and the memory limit positive. "
            f"Received: cell_timeout={cell_timeout}, notebook_timeout={notebook_timeout}, memory_mb={memory_mb}"
        )
    if out and feedback_dir:
        csv_path, folder = Path(out).resolve(), Path(feedback_dir).resolve()
        if csv_path == folder or csv_path in folder.parents:  # one path cannot be the file and (hold) the folder
            where = "the feedback folder" if csv_path == folder else "a folder above the feedback folder"
            raise ValueError(
                f"The CSV path {out} is {where} too: the grades are one file and the feedback a folder of files, "
                "so they need paths of their own (the CSV may go inside the feedback folder). "
                f"Received: --out {out} --feedback {feedback_dir}"
            )
    # Only the grader's own earlier output is moved aside; anything else there is refused before any move.
    if feedback_dir:
        check_feedback_folder(feedback_dir, submissions)
    if out:
        check_csv_target(out)
    # An earlier batch's feedback and grades are kept, never silently replaced, so a kept CSV keeps its
    # feedback beside it. The folder goes first: a CSV inside it moves with it.
    if feedback_dir:
        keep_aside(feedback_dir, "feedback", progress)
    if out:
        keep_aside(out, "grades", progress)
    inputs, expected = hidden_inputs(assignment)
    handed_out = handed_out_cells(assignment)
    payload = harvest.payload(assignment, inputs)  # sent inside the hidden-test code, never written to a file
    fingerprint = [_fingerprint(protected_files(tests_dir))]
    names = unique_names(submissions)
    batch_dir = Path(tempfile.mkdtemp(prefix="course-grading-"))
    unwritable = {}  # "CSV" or "feedback" -> the submission after which it could not be written
    results = [None] * len(submissions)
    done = [0]
    lock = threading.Lock()
    started = time.monotonic()
    wall_started = time.time() - 1

    def grade_submission(path, name, begin):
        notebook, reason = read_submission(path)
        if notebook is None:
            return summarize(assignment, name, path, score_tests(assignment, expected, inputs, None),
                             f"not graded: {reason}", [reason], time.monotonic() - begin)
        try:
            report, harvested, notes = run_submission(notebook, batch_dir, settings, payload)
        except Exception as error:  # one submission must never stop the batch
            report, harvested, notes = None, None, [f"grading failed: {type(error).__name__}: {error}"]
        outcomes = score_tests(assignment, expected, inputs, harvested)
        notes = run_notes(report, notebook, handed_out) + notes
        status = "graded" if harvested is not None else "graded: hidden tests not run"
        if harvested is not None and any(not isinstance(harvested.get(t.name), dict) for t in assignment.tests):
            status = "graded: some hidden tests not run"
        if report is not None and report.get("kernel_start_failed"):
            status = "not graded: the kernel did not start; regrade it"
        result = summarize(assignment, name, path, outcomes, status, notes, time.monotonic() - begin)
        result.cells = cell_statuses(report)
        return result

    def grade_one(index):
        path, name = submissions[index], names[index]
        begin = time.monotonic()
        try:
            result = grade_submission(path, name, begin)
        except Exception as error:  # whatever went wrong, the batch goes on
            reason = f"grading failed: {type(error).__name__}: {one_line(error, 200)}"
            result = summarize(assignment, name, path, score_tests(assignment, expected, inputs, None),
                               f"not graded: {reason}", [reason], time.monotonic() - begin)
        with lock:
            now = _fingerprint(protected_files(tests_dir))
            if now != fingerprint[0]:
                # Kernels run as the grader's user: one can edit the grader's or the hidden tests'
                # files, and every later submission's runner would load the edited ones.
                fingerprint[0] = now
                warning = ("the grader's or the hidden tests' files changed while this submission "
                           f"ran{' (or one graded beside it)' if jobs > 1 else ''}; check them and regrade")
                # the feedback goes to the student as it is: tell them what it means for them, not what to do
                result.notes.append("the grader's or the hidden tests' files changed while this submission ran: "
                                    "this grade is provisional until the course staff regrade it")
                progress(f"WARNING: {name}: {warning}")
            for warning in (RUNNER_KILLED, KERNEL_NOT_STARTED):
                if any(note.startswith(warning) for note in result.notes):
                    progress(f"WARNING: {name}: {warning}")
            results[index] = result
            done[0] += 1
            progress(
                f"[{done[0]}/{len(submissions)}] {name}: {number(result.total)}/{number(result.max_total)}"
                f" ({result.status}, {result.seconds:.1f} s)"
            )
            # Written as the batch goes, so a batch that is stopped keeps what it finished.
            finished = [r for r in results if r is not None]
            writes = {"CSV": (out, lambda: write_csv(assignment, finished, out)),
                      "feedback": (feedback_dir, lambda: write_feedback(assignment, [result], feedback_dir))}
            for kind, (target, write) in writes.items():
                try:
                    if target:
                        write()
                except OSError as error:  # a submission can make the outputs unwritable; the batch goes on
                    if kind not in unwritable:
                        unwritable[kind] = name
                        progress(f"WARNING: {name}: the {kind} could not be written to {target} ({error}); "
                                 "grading goes on, and the results are written at the end")

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(grade_one, range(len(submissions))))
    finally:
        shutil.rmtree(batch_dir, ignore_errors=True)

    def since(kind):
        if kind not in unwritable:
            return ""
        beside = " or one graded beside it" if jobs > 1 else ""
        return f" (it stopped being writable while {unwritable[kind]}{beside} was graded)"

    if out:
        write_somewhere("CSV", out, lambda path: write_csv(assignment, results, path), progress, since("CSV"))
    if feedback_dir:
        written = write_somewhere("feedback", feedback_dir, lambda path: write_feedback(assignment, results, path),
                                  progress, since("feedback"))
        ours = {f"{result.name}.md" for result in results} | {FEEDBACK_MARKER}
        if out and Path(out).resolve().parent == Path(written).resolve():
            ours.add(Path(out).name)  # the CSV asked for inside the feedback folder
        strays = [p.name for p in Path(written).iterdir()
                  if p.name not in ours and p.stat().st_mtime >= wall_started]
        if strays:
            progress(f"WARNING: files the grader did not write appeared in {written} during grading "
                     f"(written by a submission?): {', '.join(sorted(strays)[:10])}")
    progress(f"graded {len(results)} submission(s) of {assignment.id} in {time.monotonic() - started:.1f} s")
    return results


# -- command line ------------------------------------------------------------------


def _grade_command(args):
    results = grade(
        args.assignment, args.submissions, out=args.out, feedback_dir=args.feedback,
        cell_timeout=args.timeout, notebook_timeout=args.notebook_timeout, jobs=args.jobs,
        tests_dir=args.tests, profile=args.profile, memory_mb=args.memory_mb,
    )
    if not args.out:
        for result in results:
            print(f"{result.name},{number(result.total)},{number(result.max_total)},{result.status}")
    return 0


def timeout_seconds(text):
    """An `argparse` type for `--timeout` and `--notebook-timeout`: a positive number of seconds, at most
    `MAX_TIMEOUT` (one week)."""
    value = positive_float(text)
    if value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_TIMEOUT} seconds (one week), received {text!r}")
    return value


def register_cli(commands):
    parser = commands.root.add_parser(
        "grade", help="grade submitted notebooks against an assignment's hidden tests",
        description="Runs each submission in its own kernel, then scores it with the hidden tests.",
        epilog="The per-assignment defaults of --timeout, --notebook-timeout and --memory-mb are the "
               "cell_timeout, notebook_timeout and memory_mb of the Assignment in hidden_tests/<id>.py.",
    )
    parser.add_argument("assignment", help="A1, A1_bahdanau_attention, ... or a hidden-test .py file")
    parser.add_argument("submissions", nargs="+", help="submitted .ipynb files")
    parser.add_argument("--out", type=output_file(),
                        help="CSV file: one row per submission, points per question and total "
                             "(an earlier batch's is kept as a time-stamped copy; any other existing file is "
                             "refused)")
    parser.add_argument("--feedback", type=output_folder,
                        help="folder for one feedback file per submission (an earlier batch's is kept, moved "
                             "whole to a time-stamped folder beside it; any other folder that is not empty is "
                             "refused)")
    parser.add_argument("--timeout", type=timeout_seconds, metavar="S",
                        help=f"seconds per cell, at most {MAX_TIMEOUT} (one week; default: the assignment's, "
                             "see below)")
    parser.add_argument("--notebook-timeout", type=timeout_seconds, metavar="S",
                        help=f"seconds per notebook, at most {MAX_TIMEOUT} (one week; default: the assignment's, "
                             "see below)")
    parser.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                        help="submissions graded at the same time (default: 1)")
    parser.add_argument("--tests", metavar="DIR", help="folder with the hidden tests (default: hidden_tests/ of the repository)")
    parser.add_argument("--profile", default="fast", choices=("fast", "full"),
                        help="COURSE_PROFILE in the kernels (default: fast)")
    parser.add_argument("--memory-mb", type=positive_int, metavar="MB",
                        help="address-space limit of each process of a kernel, in MB (default: the assignment's, "
                             "see below)")
    parser.set_defaults(handler=_grade_command)
