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
"""

import csv
import hashlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course_lib.grading import harvest
from course_lib.grading.runner import ANSI, kill_until_gone
from course_lib.tasks.arguments import output_file, output_folder, positive_float
from course_lib.grading.spec import REPOSITORY_ROOT, load_assignment

MAX_NOTEBOOK_BYTES = 20 * 2**20
SKIP_TAGS = ("skip-grading",)
TOKEN_VARIABLE = "COURSE_GRADING_TOKEN"


def one_line(text, limit):
    """An error message as one line of a Markdown list: no colour codes, no line breaks, at most `limit` characters."""
    text = " ".join(ANSI.sub("", str(text)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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


# -- preparing the batch ---------------------------------------------------------


def hidden_inputs(assignment):
    """Inputs and expected values of every test, computed in this process."""
    inputs, expected = {}, {}
    for test in assignment.tests:
        rng = np.random.default_rng(test.seed(assignment.id))
        inputs[test.name] = test.inputs(rng)
        expected[test.name] = test.expected(inputs[test.name])
    return inputs, expected


STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError")


def _kept_lines(source):
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
            kept = _kept_lines(cell.get("source", ""))
            cells.append({"id": cell.get("id"), "number": number, "lines": {kept[0], kept[-1]} if kept else set(),
                          "first": kept[0] if kept else ""})
    return cells


def _unique_names(paths):
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


# -- running one submission -------------------------------------------------------


def marked_processes(token):
    """Pids of the processes started for one submission that still carry its token in their environment."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_marked_processes(token):
    """Kills every process started for one submission that carries its token, until none is left.

    Returns:
        True when none is left (`runner.kill_until_gone`).
    """
    return kill_until_gone(lambda: marked_processes(token))


# Where a submission's processes keep their settings and caches: inside its own temporary folder,
# never the grader's home, where an IPython start-up file or a matplotlib or Keras setting left
# by one submission would run in every later kernel (and in the instructor's own IPython).
PRIVATE_HOME = {
    "HOME": ".", "IPYTHONDIR": ".ipython", "JUPYTER_CONFIG_DIR": ".jupyter",
    "JUPYTER_DATA_DIR": ".local/share/jupyter", "MPLCONFIGDIR": ".config/matplotlib", "KERAS_HOME": ".keras",
    "XDG_CONFIG_HOME": ".config", "XDG_CACHE_HOME": ".cache", "XDG_DATA_HOME": ".local/share",
}

RUNNER_KILLED = ("the notebook runner was killed before it finished (by the submission?): a process the submission "
                 "started may have outlived it and disturbed the submissions graded after it")


def private_home(folder):
    """The environment that gives a submission's processes their own home inside `folder`.

    Args:
        folder: a new, empty folder that is removed with the submission's other files.

    Returns:
        A dict of environment variables: `PRIVATE_HOME`'s folders (made here) and
        `PYTHONNOUSERSITE=1` (nothing is loaded from, or can be added to, the user's site-packages).
    """
    environment = {"PYTHONNOUSERSITE": "1"}
    for name, relative in PRIVATE_HOME.items():
        path = Path(folder) / relative
        path.mkdir(parents=True, exist_ok=True)
        environment[name] = str(path)
    return environment


def check_installation():
    """Raises RuntimeError when a package the kernels need lives in the user's site-packages.

    The kernels run with `PYTHONNOUSERSITE=1` (see `private_home`), so a `pip install --user` of the
    grader's packages would leave every kernel without them and every submission with zero.
    """
    user_site = Path(site.getusersitepackages())
    stranded = []
    for name in ("course_lib", "ipykernel", "jupyter_client", "nbformat", "numpy", "keras"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and user_site in Path(spec.origin).resolve().parents:
            stranded.append(name)
    if stranded:
        raise RuntimeError(
            f"The grading kernels do not see the user's site-packages ({user_site}), which holds "
            f"{', '.join(stranded)}: install them in a virtual environment or the system Python instead."
        )


def run_submission(notebook, batch_dir, settings, payload):
    """Runs one notebook in a fresh working directory; returns (report, results, notes).

    Args:
        notebook: the submission, as `read_submission` returns it.
        batch_dir: the folder for this batch's temporary files.
        settings: the limits and profile (see `grade`).
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
    hard_limit = settings["notebook_timeout"] + settings["harvest_timeout"] + 90
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


# -- scoring ------------------------------------------------------------------------


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
                "(its cell failed, was deleted, or the name was changed)"
            )
        elif outcome.get("status") == "timeout":
            reason = f"the call did not finish within {test.timeout:g} s"
        elif outcome.get("status") == "error":
            kind = outcome.get("type", "Exception")
            if kind == "NotImplementedError":
                reason = "not implemented yet (raised NotImplementedError)"
            else:
                reason = f"raised {kind}: {one_line(outcome.get('message', ''), 300)}"
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
        submitted = {line for _, c in code_cells for line in _kept_lines(c.get("source", ""))}
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


# -- writing the results -------------------------------------------------------


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
                [result.name, *[_number(result.questions[q]) for q in question_ids],
                 _number(result.total), _number(result.max_total), result.status, result.path]
            )
    _move(temporary, path)


def _move(temporary, path):
    """Puts a finished file in its place; the temporary one does not stay behind when that fails."""
    try:
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def _number(value):
    return f"{value:g}"


def feedback_text(assignment, result):
    lines = [
        f"# {assignment.id} ({assignment.notebook}): feedback for {Path(result.path).name}",
        "",
        f"Score: {_number(result.total)} / {_number(result.max_total)}   (status: {result.status})",
        "",
        "## Points per question",
        "",
    ]
    titles = {q.id: q.title for q in assignment.questions}
    for question_id, points in result.questions.items():
        title = f" ({titles[question_id]})" if titles[question_id] else ""
        lines.append(f"- {question_id}{title}: {_number(points)} / {_number(assignment.points(question_id))}")
    lines += ["", "## Hidden tests", ""]
    if not result.tests:
        lines.append("- none were run")
    for outcome in result.tests:
        mark = "PASS" if outcome.earned else "FAIL"
        line = f"- [{mark}] {outcome.name} ({_number(outcome.earned)}/{_number(outcome.points)})"
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


# -- the batch ----------------------------------------------------------------------


def well_formed_report(report):
    """Whether the runner's report has the form `run_notes` and `cell_statuses` read.

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
    return report.get("harvest") is None or isinstance(report["harvest"], dict)


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


def _time_stamped(path):
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
    stamped = _time_stamped(target)
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
        submissions: notebook paths.
        out: CSV path (written after each submission, and at the end; see `write_somewhere`).
        feedback_dir: folder for one `<submission>.md` per submission.
        cell_timeout, notebook_timeout: seconds (defaults from the assignment).
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
    submissions = [Path(p) for p in submissions]
    if not submissions:
        raise ValueError("No submissions given. Received: an empty list")
    assignment = load_assignment(assignment_name, tests_dir)
    check_installation()
    progress = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    settings = {
        "cell_timeout": float(assignment.cell_timeout if cell_timeout is None else cell_timeout),
        "notebook_timeout": float(assignment.notebook_timeout if notebook_timeout is None else notebook_timeout),
        "harvest_timeout": float(min(600, 30 + sum(t.timeout for t in assignment.tests))),
        "output_limit": int(output_limit),
        "memory_mb": int(assignment.memory_mb if memory_mb is None else memory_mb),
        "file_mb": int(file_mb),
        "profile": profile,
    }
    if settings["cell_timeout"] <= 0 or settings["notebook_timeout"] <= 0 or settings["memory_mb"] <= 0:
        raise ValueError(
            "Timeouts and the memory limit must be positive. Received: "
            f"cell_timeout={cell_timeout}, notebook_timeout={notebook_timeout}, memory_mb={memory_mb}"
        )
    if out and Path(out).is_file():  # an earlier batch's grades are kept, never silently replaced
        kept = _time_stamped(out)
        os.replace(out, kept)
        progress(f"{out} held earlier grades: kept as {kept}")
    inputs, expected = hidden_inputs(assignment)
    handed_out = handed_out_cells(assignment)
    payload = harvest.payload(assignment, inputs)  # sent inside the hidden-test code, never written to a file
    fingerprint = [_fingerprint(protected_files(tests_dir))]
    names = _unique_names(submissions)
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
                result.notes.append(warning)
                progress(f"WARNING: {name}: {warning}")
            if RUNNER_KILLED in result.notes:
                progress(f"WARNING: {name}: {RUNNER_KILLED}")
            results[index] = result
            done[0] += 1
            progress(
                f"[{done[0]}/{len(submissions)}] {name}: {_number(result.total)}/{_number(result.max_total)}"
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
        ours = {f"{result.name}.md" for result in results}
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
            print(f"{result.name},{_number(result.total)},{_number(result.max_total)},{result.status}")
    return 0


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
                             "(an existing one is kept as a time-stamped copy)")
    parser.add_argument("--feedback", type=output_folder, help="folder for one feedback file per submission")
    parser.add_argument("--timeout", type=positive_float, metavar="S",
                        help="seconds per cell (default: the assignment's, see below)")
    parser.add_argument("--notebook-timeout", type=positive_float, metavar="S",
                        help="seconds per notebook (default: the assignment's, see below)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="submissions graded at the same time (default: 1)")
    parser.add_argument("--tests", metavar="DIR", help="folder with the hidden tests (default: hidden_tests/ of the repository)")
    parser.add_argument("--profile", default="fast", choices=("fast", "full"),
                        help="COURSE_PROFILE in the kernels (default: fast)")
    parser.add_argument("--memory-mb", type=int, metavar="MB",
                        help="address-space limit of each process of a kernel, in MB (default: the assignment's, "
                             "see below)")
    parser.set_defaults(handler=_grade_command)
