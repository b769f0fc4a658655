"""Runs one submitted notebook: starts `runner.py` for it, under limits, and reads back what it reports.

`run_submission` runs a notebook (and the hidden tests' harvest) in a fresh
folder and returns the runner's report, the hidden tests' results and notes;
`run_notebook` runs one without hidden tests (for the assignments' own tests).
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from course_lib.grading import harvest
from course_lib.grading.isolation import TOKEN_VARIABLE, check_installation, kill_marked_processes, private_home
from course_lib.grading.runner import KERNEL_READY_SECONDS, KERNEL_START_ATTEMPTS
from course_lib.grading.scoring import cell_statuses
from course_lib.grading.submissions import read_submission

SKIP_TAGS = ("skip-grading",)

KERNEL_NOT_STARTED = ("the kernel did not start, before any of the submission's code ran (the machine's fault, "
                      "or a memory limit too small for Python); the submission is not graded: regrade it")
RUNNER_KILLED = ("the notebook runner was killed before it finished (by the submission?): a process the submission "
                 "started may have outlived it and disturbed the submissions graded after it")


def well_formed_report(report):
    """Whether the runner's report has the form `scoring.run_notes` and `scoring.cell_statuses` read.

    The report is a file in the submission's folder, so the submission's own
    code can overwrite it; a malformed one must not stop the batch.
    """
    if not isinstance(report, dict) or not isinstance(report.get("cells", {}), dict):
        return False
    for index, cell in report.get("cells", {}).items():
        if not (isinstance(index, str) and index.isdigit() and isinstance(cell, dict)):
            return False
        error = cell.get("error")
        if error is not None and not (
            isinstance(error, dict) and all(isinstance(error.get(key), str) for key in ("ename", "evalue"))
        ):
            return False
    notes = report.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(note, str) for note in notes):
        return False
    if not isinstance(report.get("kernel_start_failed", ""), str):
        return False
    return report.get("harvest") is None or isinstance(report["harvest"], dict)



def run_submission(notebook, batch_dir, settings, payload):
    """Runs one notebook in a fresh working directory; returns (report, results, notes).

    Args:
        notebook: the submission, as `read_submission` returns it.
        batch_dir: the folder for this batch's temporary files.
        settings: the limits and profile (see `grader.grade`).
        payload: the hidden tests' `harvest.payload`, or None to run the notebook only.
    """
    import nbformat

    job_dir = Path(tempfile.mkdtemp(prefix="submission-", dir=batch_dir))
    workdir, private = job_dir / "work", job_dir / "private"
    workdir.mkdir()
    private.mkdir()
    notebook_path = private / "submission.ipynb"
    nbformat.write(notebook, notebook_path)
    results_path = private / "results.json"
    report_path = private / "run.json"
    token, key = secrets.token_hex(12), secrets.token_hex(16)
    job = {
        "notebook": str(notebook_path),
        "workdir": str(workdir),
        "private_dir": str(private),
        "result_path": str(report_path),
        "results_path": str(results_path),
        "cell_timeout": settings["cell_timeout"],
        "notebook_timeout": settings["notebook_timeout"],
        "harvest_timeout": settings["harvest_timeout"],
        "output_limit": settings["output_limit"],
        "memory_mb": settings["memory_mb"],
        "file_mb": settings["file_mb"],
        "skip_tags": list(settings.get("skip_tags", SKIP_TAGS)),
        "harvest_code": harvest.kernel_code(payload, results_path, key) if payload else None,
        "stop_on_error": settings.get("stop_on_error", False),
        "env": {
            "COURSE_PROFILE": settings["profile"],
            "MPLBACKEND": "Agg",
            "TF_CPP_MIN_LOG_LEVEL": "3",
            "PYTHONHASHSEED": "0",
            "COURSE_GRADING": "1",
        },
    }
    environment = dict(os.environ)
    environment.update(private_home(job_dir / "home"))
    environment[TOKEN_VARIABLE] = token
    # The notebook's time counts from its kernel's first answer; the starts before it have their own.
    hard_limit = (settings["notebook_timeout"] + settings["harvest_timeout"] + 90
                  + KERNEL_START_ATTEMPTS * KERNEL_READY_SECONDS)
    notes = []
    # The job goes through a pipe, not a file: its harvest code holds the hidden inputs and the results' key.
    process = subprocess.Popen(
        [sys.executable, "-s", "-m", "course_lib.grading.runner", "-"],
        env=environment, cwd=str(workdir), start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _, stderr = process.communicate(json.dumps(job).encode(), timeout=hard_limit)
    except subprocess.TimeoutExpired:
        notes.append(f"stopped after the hard time limit of {hard_limit:.0f} s")
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        kill_marked_processes(token)
        try:  # a process left in another session may still hold the pipe open
            _, stderr = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            stderr = b""
    else:
        if process.returncode < 0:  # a signal, and not ours
            notes.append(RUNNER_KILLED)
    kill_marked_processes(token)
    report = None
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError):
        tail = (stderr or b"").decode(errors="replace").strip().splitlines()[-3:]
        notes.append("the notebook runner did not finish" + (f": {' / '.join(tail)}" if tail else ""))
    if report is not None and not well_formed_report(report):
        report = None
        notes.append("the notebook runner's report was not in its usual form (a submission can write to it); "
                     "the notes on the run are left out")
    if report is not None and report.get("kernel_start_failed"):
        notes.append(f"{KERNEL_NOT_STARTED} ({report['kernel_start_failed'][:300]})")
    results, reason = (None, "no hidden tests were run")
    if payload:
        results, reason = harvest.read_results(results_path, key)
    if results is None and payload:
        notes.append(reason)
    shutil.rmtree(job_dir, ignore_errors=True)
    return report, results, notes


def run_notebook(path, cell_timeout=120, notebook_timeout=600, stop_on_error=False, skip_tags=(),
                 profile="fast", memory_mb=8192, file_mb=256):
    """Runs a notebook in a sandboxed kernel without hidden tests; returns the runner's report.

    With `stop_on_error=True` execution stops at the first failing cell, the
    way a student meets the first unfinished exercise.
    """
    check_installation()
    notebook, reason = read_submission(path)
    if notebook is None:
        raise ValueError(f"{path}: {reason}")
    settings = {
        "cell_timeout": cell_timeout, "notebook_timeout": notebook_timeout, "harvest_timeout": 0,
        "output_limit": 100_000, "memory_mb": memory_mb, "file_mb": file_mb, "profile": profile,
        "stop_on_error": stop_on_error, "skip_tags": list(skip_tags),
    }
    batch_dir = Path(tempfile.mkdtemp(prefix="course-run-"))
    try:
        report, _, notes = run_submission(notebook, batch_dir, settings, None)
    finally:
        shutil.rmtree(batch_dir, ignore_errors=True)
    if report is None:
        raise RuntimeError(f"{path}: the notebook runner failed: {notes}")
    report["statuses"] = cell_statuses(report)
    return report
