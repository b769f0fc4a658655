"""The grader on a batch of crafted A1 submissions: faults and wrong parts.

One batch (graded once, with two workers) holds the solution twice, the
untouched student notebook, every fault of the grading requirements and the
wrong answers of A1; each test below reads its row.
"""

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from course_lib.grading import faults, grader, harvest, isolation, reports, running, scoring, submissions
from course_lib.grading.spec import REPOSITORY_ROOT, allclose, exact, load_assignment
from private_copy import skip_module_unless_private_copy
from student_runs import assert_runs_until_its_first_exercise

skip_module_unless_private_copy()  # grades solutions and faults made from them with the hidden tests

SOLUTION = REPOSITORY_ROOT / "solutions" / "A1_bahdanau_attention.ipynb"
STUDENT = REPOSITORY_ROOT / "assignments" / "A1_bahdanau_attention.ipynb"
FULL = 10.0

# submission -> questions that must lose all their points (every other question full).
EXPECTED_LOSSES = {
    "solution": set(),
    "solution-again": set(),
    "softmax-wrong-axis": {"softmax"},
    "mask-ignored": {"mask"},
    "tanh-missing": {"score"},
    "keys-recomputed": {"steps"},
    "keys-every-step": {"steps"},
    "infinite-loop": set(),
    "ignores-interrupt": set(),
    "raises-on-import": set(),
    "syntax-error": {"softmax"},
    "deleted-cell": {"context"},
    "renamed-function": {"mask"},
    "sys-exit": set(),
    "os-exit": set(),
    "prints-megabytes": set(),
    "fills-memory": set(),
    "writes-files": set(),
    "patches-everything": {"softmax"},
}
ZERO = ["untouched", "not-a-notebook", "truncated-json", "no-cells", "forges-results", "forges-run-report"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    out = tmp_path_factory.mktemp("results")
    csv_path, feedback_dir = out / "grades.csv", out / "feedback"
    targets = {"csv": str(csv_path), "feedback": str(feedback_dir)}
    paths = []
    for name in list(EXPECTED_LOSSES) + ZERO:
        path = folder / f"{name}.ipynb"
        if name.startswith("solution"):
            path.write_bytes(SOLUTION.read_bytes())
        elif name == "untouched":
            path.write_bytes(STUDENT.read_bytes())
        else:
            path.write_text(faults.make("A1", name, SOLUTION, targets))
        paths.append(path)
    lines = []
    started = time.monotonic()
    results = grader.grade(
        "A1", paths, out=csv_path, feedback_dir=feedback_dir, jobs=2,
        cell_timeout=8, memory_mb=2048, progress=lines.append,
    )
    seconds = time.monotonic() - started
    time.sleep(1.5)  # a writer left behind by a submission would strike now
    return {
        "results": {r.name: r for r in results}, "csv": csv_path, "feedback": feedback_dir,
        "lines": lines, "seconds": seconds, "assignment": load_assignment("A1"),
    }


def test_every_submission_gets_a_row_and_progress(batch):
    rows = list(csv.DictReader(batch["csv"].open()))
    assert [r["submission"] for r in rows] == list(EXPECTED_LOSSES) + ZERO
    assert rows[0]["max_total"] == "10"
    assert set(rows[0]) >= {"keys", "score", "mask", "softmax", "context", "steps", "shapes", "params", "total"}
    assert sum(line.startswith("[") for line in batch["lines"]) == len(rows)
    assert "graded" in batch["lines"][-1]


@pytest.mark.parametrize("name", list(EXPECTED_LOSSES))
def test_points_lost_are_exactly_those_of_the_broken_part(batch, name):
    result = batch["results"][name]
    assignment = batch["assignment"]
    for question in assignment.questions:
        wanted = 0.0 if question.id in EXPECTED_LOSSES[name] else assignment.points(question.id)
        assert result.questions[question.id] == wanted, (name, question.id, result.questions, result.notes)
    lost = sum(assignment.points(q) for q in EXPECTED_LOSSES[name])
    assert result.total == FULL - lost


@pytest.mark.parametrize("name", ZERO)
def test_untouched_broken_and_forged_submissions_score_zero(batch, name):
    assert batch["results"][name].total == 0.0


def test_the_untouched_notebook_runs_until_its_first_exercise(batch):
    assert_runs_until_its_first_exercise(batch["results"]["untouched"].cells)


def test_same_submission_twice_same_score(batch):
    first, second = batch["results"]["solution"], batch["results"]["solution-again"]
    assert first.total == second.total == FULL
    assert [(t.name, t.earned) for t in first.tests] == [(t.name, t.earned) for t in second.tests]


@pytest.mark.parametrize(
    "name, reason",
    [
        ("infinite-loop", "stopped at the time limit"),
        ("ignores-interrupt", "did not stop when interrupted"),
        ("raises-on-import", "ModuleNotFoundError"),
        ("syntax-error", "SyntaxError"),
        ("deleted-cell", "missing or were renamed"),
        ("renamed-function", "`apply_mask` is not defined"),
        ("sys-exit", "SystemExit"),
        ("os-exit", "stopped the kernel"),
        ("prints-megabytes", "printed too much output"),
        ("not-a-notebook", "not a Jupyter notebook"),
        ("forges-run-report", "report was not in its usual form"),
        ("keys-every-step", "`project_keys` was called 5 time(s) instead of 1"),
        ("truncated-json", "not a Jupyter notebook"),
        ("untouched", "not implemented yet"),
        ("softmax-wrong-axis", "values differ from the reference"),
    ],
)
def test_feedback_gives_the_reason(batch, name, reason):
    text = (batch["feedback"] / f"{name}.md").read_text()
    assert reason in text, text


def test_fills_memory_is_stopped_by_the_limit(batch):
    notes = " ".join(batch["results"]["fills-memory"].notes)
    assert "MemoryError" in notes or "stopped the kernel" in notes or "time limit" in notes, notes


def test_writes_to_grades_and_feedback_are_overwritten(batch):
    rows = list(csv.DictReader(batch["csv"].open()))
    assert "cheater" not in batch["csv"].read_text()
    assert [r["total"] for r in rows if r["submission"] == "writes-files"] == ["10"]
    assert (batch["feedback"] / "writes-files.md").read_text().startswith("# A1")
    assert any("did not write appeared" in line for line in batch["lines"])


def test_patching_numpy_assert_checks_and_keras_gains_nothing(batch):
    cheat, honest = batch["results"]["patches-everything"], batch["results"]["softmax-wrong-axis"]
    assert cheat.total == honest.total < FULL
    assert batch["results"]["forges-results"].total == 0.0


def _numbers(value):
    """The numbers in an expected value: an array, or tuples and dicts of them (e.g. A1's shapes check)."""
    if isinstance(value, dict):
        value = tuple(value.values())
    if isinstance(value, (tuple, list)) and not np.isscalar(value):
        parts = [_numbers(part) for part in value]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


def test_feedback_names_tests_but_hides_expected_values(batch):
    assignment = batch["assignment"]
    inputs, expected = submissions.hidden_inputs(assignment)
    for name in ("softmax-wrong-axis", "mask-ignored", "tanh-missing", "keys-recomputed"):
        text = (batch["feedback"] / f"{name}.md").read_text()
        failed = [t for t in batch["results"][name].tests if not t.earned]
        assert failed
        for test in failed:
            assert test.name in text
            for value in _numbers(expected[test.name])[:20]:
                shown = f"{value:.4g}"
                if len(shown.lstrip("-")) >= 5:  # "0.3127", never "1" or "0.5" (points)
                    assert shown not in text, (name, test.name, value)
        assert "1e+09" not in text and "-1000000000" not in text


def test_comparisons_report_shapes_and_differences_only():
    compare = allclose(names=("contexts", "weights"))
    ok, reason = compare((np.zeros((2, 3)), np.ones(4)), (np.zeros((2, 3)), np.ones((2, 2))), {})
    assert not ok and reason == "weights: wrong shape (4,), expected (2, 2)"
    ok, reason = allclose()(np.array([1.0, 2.5]), np.array([1.0, 2.0]), {})
    assert not ok and "1 of 2 entries" in reason and "2.0" not in reason
    assert allclose()(np.array([np.nan]), np.array([1.0]), {})[1] == "result: contains NaN or infinity"
    assert allclose()(2.5, 2.0, {})[1] == "result: differs from the reference"
    assert exact(set)(["b", "a"], {"a", "b"}, {})[0]
    assert not exact()("c", "b", {})[0]
    # A list answer says how many entries are wrong, never the expected ones.
    assert exact()([1, 2, 4, 5], [1, 2, 3, 4], {}) == (False, "result: wrong at 2 of 4 entries")
    assert exact()([1, 2], [1, 2, 3], {}) == (False, "result: expected 3 entries, got 2")


def test_results_from_the_kernel_are_decoded_without_running_code():
    assert harvest.decode({"__array__": [[1, 2]], "shape": [1, 2], "kind": "i"}).tolist() == [[1, 2]]
    assert harvest.decode({"__seq__": [1, {"__float__": "nan"}], "tuple": True})[0] == 1
    assert harvest.decode({"__array__": [1, 2, 3], "shape": [2, 2], "kind": "f"}) == {"__unencodable__": "malformed array"}
    assert harvest.decode({"__reduce__": "os.system"}) == {"__reduce__": "os.system"}


@pytest.fixture(scope="module")
def a2_batch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("a2")
    solution = REPOSITORY_ROOT / "solutions" / "A2_attentional_decoder.ipynb"
    paths = []
    for name in A2_LOSSES:
        path = folder / f"{name}.ipynb"
        path.write_text(faults.make("A2", name, solution))
        paths.append(path)
    results = grader.grade("A2", paths, jobs=2, progress=lambda line: None)
    return {r.name: r for r in results}


A2_LOSSES = {"calls-library-step": {"step"}, "attends-with-new-state": {"step"},
             "unlocks-library-decoder": {"step", "forcing"},
             "ignores-mask": {"step"}}  # every step test holds a padded row (it once scored 1 of the 3 points)


@pytest.mark.parametrize("name", list(A2_LOSSES))
def test_a2_wrong_or_library_step_loses_exactly_its_parts(a2_batch, name):
    result = a2_batch[name]
    wanted = {"inputs": 1.0, "step": 3.0, "forcing": 2.0}
    wanted.update({question: 0.0 for question in A2_LOSSES[name]})
    assert result.questions == wanted, (result.questions, result.notes)
    if name not in ("attends-with-new-state", "ignores-mask"):  # the library's methods stay locked, however a submission unlocks them
        lost = [t for t in result.tests if t.question in A2_LOSSES[name]]
        assert all("not available here" in t.reason for t in lost), [t.reason for t in lost]


def test_a3_answers_handed_to_the_library_score_zero_and_only_there(tmp_path):
    """A submission whose word accuracy, top-k accuracy and edit distance call the library's own (three ways,
    visible checks deleted) loses exactly those three parts, in a real kernel with the hidden tests' setup."""
    solution = REPOSITORY_ROOT / "solutions" / "A3_transliteration.ipynb"
    path = tmp_path / "calls-library-metrics.ipynb"
    path.write_text(faults.make("A3", "calls-library-metrics", solution))
    (result,) = grader.grade("A3", [path], jobs=1, progress=lambda line: None)
    assert result.questions == {"accuracy": 0.0, "top_k": 0.0, "distance": 0.0, "beam": 2.0, "length": 1.0}, result.notes
    lost = [t for t in result.tests if t.question in ("accuracy", "top_k", "distance")]
    assert lost and all("the course's own version" in t.reason for t in lost), [t.reason for t in lost]


def test_a2_fault_keys_projected_in_the_step_leaves_out_the_memorys_keys():
    """The fault's submission (graded in-process by tests/test_grading_checks.py) differs only there."""
    solution = REPOSITORY_ROOT / "solutions" / "A2_attentional_decoder.ipynb"
    right, wrong = solution.read_text(), faults.make("A2", "keys-projected-in-step", solution)
    assert 'projected_keys=memory[\\"keys\\"]' in right and 'projected_keys=memory[\\"keys\\"]' not in wrong


def test_runner_limits_per_notebook_memory_and_files(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20,"
                                  " resource.getrlimit(resource.RLIMIT_FSIZE)[0] // 2**20)"),
        nbformat.v4.new_code_cell("open('big.bin', 'wb').write(b'0' * (10 * 2**20))"),
        nbformat.v4.new_code_cell("# grading: skip\nraise RuntimeError('skipped cells must not run')"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(3)"),  # ends well inside the 8 s, even on a loaded machine
        nbformat.v4.new_code_cell("time.sleep(10)"),  # cannot end inside it
        nbformat.v4.new_code_cell("print('never reached')"),
    ]
    path = tmp_path / "limits.ipynb"
    nbformat.write(notebook, path)
    report = running.run_notebook(path, cell_timeout=30, notebook_timeout=8, skip_tags=("skip-grading",),
                                 memory_mb=3000, file_mb=8)
    cells = {int(k): v for k, v in report["cells"].items()}
    assert cells[0]["output"].split() == ["3000", "8"]
    assert cells[1]["status"] == "error" and cells[1]["error"]["ename"] == "OSError"
    assert 2 not in cells and report["skipped_by_tag"] == [2]
    assert cells[3]["status"] == "ok"
    assert cells[4]["status"] in ("timeout", "not-run")
    assert cells[5] == {"status": "not-run", "reason": "notebook time limit reached"}


def _kernel_session(tmp_path, monkeypatch, failing_starts, how="dies"):
    """A `KernelSession` whose first `failing_starts` kernels cannot start: with
    `how="dies"` their Python has no standard library (as a kernel whose port was
    taken); with `how="silent"` they stay alive and never answer (a
    `sitecustomize` that sleeps), as one kernel did in a CI run."""
    from jupyter_client import KernelManager
    from jupyter_client.blocking import BlockingKernelClient

    from course_lib.grading import runner

    starts = []
    start_kernel, wait_for_ready = KernelManager.start_kernel, BlockingKernelClient.wait_for_ready
    sleeper = tmp_path / "sleeper"
    sleeper.mkdir(exist_ok=True)
    (sleeper / "sitecustomize.py").write_text("import time\ntime.sleep(600)\n")

    def start(manager, **kwargs):
        starts.append(len(starts) < failing_starts)
        if starts[-1]:
            changed = {"PYTHONHOME": str(tmp_path / "no-python-here")} if how == "dies" else {"PYTHONPATH": str(sleeper)}
            kwargs["env"] = dict(kwargs["env"], **changed)
        return start_kernel(manager, **kwargs)

    def wait(client, timeout=None):  # a silent kernel is given up after 3 s, a healthy one gets the usual time
        return wait_for_ready(client, timeout=3 if starts[-1] else timeout)

    monkeypatch.setattr(KernelManager, "start_kernel", start)
    monkeypatch.setattr(BlockingKernelClient, "wait_for_ready", wait)
    spec_root = runner._kernel_spec_dir(tmp_path / "spec", memory_mb=2048, file_mb=8)
    return (lambda: runner.KernelSession(tmp_path, spec_root, dict(os.environ), 10_000, 5)), starts


@pytest.mark.parametrize("how", ["dies", "silent"])
def test_a_kernel_that_fails_before_any_code_runs_is_started_again(tmp_path, monkeypatch, how):
    from course_lib.grading import runner

    make, starts = _kernel_session(tmp_path, monkeypatch, runner.KERNEL_START_ATTEMPTS - 1, how)
    session = make()
    try:
        result = session.run("print(6 * 7)", 30)
    finally:
        session.close()
    assert result["status"] == "ok" and result["output"].strip() == "42"
    assert len(starts) == runner.KERNEL_START_ATTEMPTS

    if how == "dies":  # giving up is the same whichever way the starts fail
        make, starts = _kernel_session(tmp_path, monkeypatch, runner.KERNEL_START_ATTEMPTS, how)
        with pytest.raises(runner.KernelStartError, match="died"):
            make()
        assert len(starts) == runner.KERNEL_START_ATTEMPTS


def test_kernels_talk_over_unix_sockets_in_the_private_folder(tmp_path):
    # TCP ports chosen by one runner could be taken by a kernel that a parallel runner started.
    from course_lib.grading import runner

    spec_root = runner._kernel_spec_dir(tmp_path / "private", memory_mb=2048, file_mb=8)
    session = runner.KernelSession(tmp_path, spec_root, dict(os.environ), 10_000, 5)
    try:
        info = session.manager.get_connection_info()
        sockets = sorted(path.name for path in session.socket_dir.iterdir())
        result = session.run("print(6 * 7)", 30)
    finally:
        session.close()
    assert info["transport"] == "ipc", info
    short = len(str(spec_root)) + 30 < runner.SOCKET_PATH_ROOM  # else the temporary folder, as here under pytest
    assert (session.socket_dir.parent == spec_root) == short, session.socket_dir
    assert len(sockets) == 5 and all(name.startswith("kernel1-") for name in sockets), sockets
    assert result["output"].strip() == "42"
    assert not session.socket_dir.exists()


def test_a_kernel_that_never_starts_leaves_the_submission_not_graded():
    # 16 MB of address space lets Python start but not import ipykernel (which needed 48-100 MB on
    # Python 3.11 and 3.12; 150 MB, used here before, let the kernel start on 3.12 three times in four and
    # then fail at the submission's `import numpy`): no code of the submission runs, so it must not get
    # 0 points as if it had failed the tests.
    lines = []
    [result] = grader.grade("A1", [SOLUTION], memory_mb=16, cell_timeout=8, progress=lines.append)
    assert result.status == "not graded: the kernel did not start; regrade it", result.status
    assert any(note.startswith(running.KERNEL_NOT_STARTED) for note in result.notes), result.notes
    assert any(line.startswith("WARNING:") and "did not start" in line for line in lines), lines


def test_submission_names_never_collide():
    # Two "alice" in different folders and a third student's "alice-2" must
    # give three different CSV rows and feedback files (also on a file system
    # that ignores case, where "Bob.md" and "bob.md" are the same file).
    paths = ["x1/alice.ipynb", "x2/alice.ipynb", "x3/alice-2.ipynb", "Bob.ipynb", "bob.ipynb"]
    names = submissions.unique_names(paths)
    assert len({name.lower() for name in names}) == len(paths), names
    assert names[0] == "alice" and names[2] == "alice-2" and names[3] == "Bob"


def test_a_hidden_test_that_kills_the_kernel_costs_only_that_test(tmp_path):
    # softmax and attention_parameter_count end the kernel, but only when the
    # hidden tests call them on some inputs (the visible checks pass): the
    # other 14 hidden tests must still be run and scored.
    import nbformat

    notebook = nbformat.read(SOLUTION, as_version=4)
    kill = 'import os, sys\n    if sys._getframe(1).f_code.co_filename == "<hidden test>" and {}:\n        os._exit(1)\n'
    patches = {
        "    shifted = scores - np.max": "    " + kill.format("np.ndim(scores) == 3"),
        "    return units * query_dim + units": "    " + kill.format("units == 256"),
    }
    for old, new in patches.items():
        cell = next(c for c in notebook.cells if old in c.source)
        cell.source = cell.source.replace(old, new + old, 1)
    path = tmp_path / "dies-in-hidden-tests.ipynb"
    nbformat.write(notebook, path)
    [result] = grader.grade("A1", [path], cell_timeout=20, progress=lambda line: None)
    failed = {t.name: t.reason for t in result.tests if not t.earned}
    assert set(failed) == {"softmax: 3-D scores with large values",
                           "params: 1024-d state, 2048-d values, 256 units"}, (failed, result.notes)
    assert all("kernel died" in reason for reason in failed.values()), failed
    assert result.total == FULL - 1.5 and result.status == "graded"


def test_missing_cells_note_survives_notebooks_saved_without_cell_ids():
    # A notebook saved without cell ids (nbformat 4.0-4.4, e.g. re-created or
    # saved by an older tool) is read with new random ids: a complete
    # submission must not be told that its cells are missing, and a deleted
    # cell must be named so that the student can find it.
    import json

    import nbformat

    handed_out = submissions.handed_out_cells(load_assignment("A1"))
    raw = json.loads(SOLUTION.read_text())
    raw["nbformat_minor"] = 0
    for cell in raw["cells"]:
        cell.pop("id", None)
    notebook = nbformat.reads(json.dumps(raw), as_version=4)
    assert not [n for n in scoring.run_notes({"cells": {}}, notebook, handed_out) if "missing" in n]
    notebook.cells = [c for c in notebook.cells if "def context_vector(" not in c.source]
    [note] = [n for n in scoring.run_notes({"cells": {}}, notebook, handed_out) if "missing" in n]
    assert note.startswith("1 code cell(s)") and "cell 15 (`def context_vector(weights, values):`)" in note, note


def _processes_with(marker):
    """Pids of the processes whose command line holds the argument `marker`."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if marker.encode() in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


# Forks and exits without end (for 30 s), so that it has a new pid by the time a scan of /proc
# signals it; with "setsid", a new process group too. Each hop is counted in the file argv[1].
HOPPER = """
import os, sys, time
end = time.time() + 30
hops = 0
while time.time() < end:
    if os.fork():
        os._exit(0)
    hops += 1
    if hops % 20 == 1:
        open(sys.argv[1], "a").write(".")
    if sys.argv[2] == "setsid":
        os.setsid()
"""


def test_processes_left_by_a_notebook_are_killed_even_without_its_environment_or_a_fixed_pid(tmp_path):
    # A process started in a new session with an environment of its own no
    # longer carries the grading token; it must be killed all the same. So must
    # one that changes its pid all the time (a review's escaped a single scan of
    # /proc and zeroed the next submission's results).
    import nbformat

    marker = "1234.5678"
    hops = {mode: tmp_path / f"hops-{mode}" for mode in ("group", "setsid")}
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen(['sleep', '{marker}'], env={{}}, start_new_session=True)\n"
        f"subprocess.Popen(['sh', '-c', 'sleep {marker} &'], env={{}}, start_new_session=True)\n"
        + "".join(f"subprocess.Popen([sys.executable, '-c', {HOPPER!r}, {str(path)!r}, {mode!r}, '{marker}'], "
                  "env={}, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
                  for mode, path in hops.items())
        # until both hoppers have hopped (a fixed second was too short for them on a loaded CI machine)
        + f"while not all(os.path.exists(path) for path in {[str(path) for path in hops.values()]!r}): time.sleep(0.1)\n"
        + "time.sleep(0.5)"
    )]
    path = tmp_path / "leaves-processes.ipynb"
    nbformat.write(notebook, path)
    try:
        report = running.run_notebook(path, cell_timeout=20, notebook_timeout=40)
        assert report["cells"]["0"]["status"] == "ok", report
        counted = {mode: path.read_text() for mode, path in hops.items()}
        assert all(counted.values()), counted  # the hoppers did run
        time.sleep(1)
        assert {mode: path.read_text() for mode, path in hops.items()} == counted  # and hop no more
        assert not _processes_with(marker)
    finally:
        for _ in range(200):  # repeatedly: a hopper that survived has a new pid at every scan
            for pid in _processes_with(marker):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass


MISSED_BY_TWO_SCANS = """
import os, subprocess, sys
from course_lib.grading.runner import kill_until_gone
child = subprocess.Popen(["sleep", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
scans = iter([[], []])  # two scans that miss the child, as two reads of /proc racing a fork can
gone = kill_until_gone(lambda: next(scans, [child.pid] if os.path.exists(f"/proc/{child.pid}") else []),
                       seconds=5, reap=True)
try:
    os.kill(child.pid, 0)
    print(gone, "left running")
except ProcessLookupError:
    print(gone, "killed")
"""


def test_the_runner_stops_killing_only_when_it_has_no_child_left():
    # Two empty scans of /proc are not proof: a process that forks while /proc is being read can be
    # missed by both (a CI run's hopper survived them). The runner, a subreaper, waits until it has
    # no child left, which is exact. Here the scans miss the child twice and find it the third time.
    finished = subprocess.run([sys.executable, "-c", MISSED_BY_TWO_SCANS], capture_output=True, text=True,
                              timeout=60)
    assert finished.stdout.split() == ["True", "killed"], finished.stdout + finished.stderr


FINDS_ITS_OWN = """
import os, subprocess, sys
from course_lib.grading.runner import Descendants, _become_subreaper, kill_until_gone
_become_subreaper()
find = Descendants()
find()  # the processes below are new to the next scan, which reads only new pids
child = subprocess.Popen(["sleep", "60"])
leaves_one = subprocess.Popen(["sh", "-c", "sleep 61 > /dev/null & echo $!"], stdout=subprocess.PIPE, text=True)
orphan = int(leaves_one.stdout.readline())
leaves_one.wait()  # the shell is gone: its sleep is an orphan, reparented to this subreaper
found = find()
stranger = int(sys.argv[1])
print(child.pid in found, orphan in found, stranger in found, os.getpid() in found)
print(kill_until_gone(find, seconds=5, reap=True), os.path.exists(f"/proc/{child.pid}"), os.path.exists(f"/proc/{orphan}"))
"""


def test_the_runner_finds_its_children_and_orphans_and_nothing_else():
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        finished = subprocess.run([sys.executable, "-c", FINDS_ITS_OWN, str(stranger.pid)], capture_output=True,
                                  text=True, timeout=60)
        assert finished.stdout.split() == ["True", "True", "False", "False", "True", "False", "False"], \
            finished.stdout + finished.stderr
        assert stranger.poll() is None  # not killed
    finally:
        stranger.kill()
        stranger.wait()


@pytest.mark.parametrize("limit", [{"cell_timeout": 0}, {"notebook_timeout": -5}, {"memory_mb": 0}])
def test_a_zero_or_negative_limit_is_refused_not_replaced_by_the_default(limit):
    # `--timeout 0` used to fall back silently to the assignment's 30 s.
    name, value = next(iter(limit.items()))
    with pytest.raises(ValueError, match=f"Received: .*{name}={value}"):
        grader.grade("A1", [SOLUTION], progress=lambda line: None, **limit)


def test_whole_numbers_and_numbers_are_not_read_out_of_text_or_truncated():
    assert exact(int)(57, 57, {})[0] and exact(int)(np.int64(57), 57, {})[0] and exact(int)(57.0, 57, {})[0]
    for wrong in (57.9, "57", True):
        ok, reason = exact(int)(wrong, 57 if wrong is not True else 1, {})
        assert not ok and reason.startswith("result: expected a whole number"), (wrong, reason)
    for text in ("0.5", ["0.5"], np.array(["0.5"])):
        ok, reason = allclose()(text, [0.5] if not isinstance(text, str) else 0.5, {})
        assert not ok and "expected numbers" in reason, (text, reason)


def test_error_messages_in_feedback_are_one_clean_line():
    message = "Exception encountered when calling X.call().\n\n\x1b[1mbuild the step yourself\x1b[0m\n\nArguments:\n  * args"
    assert submissions.one_line(message, 300) == "Exception encountered when calling X.call(). build the step yourself Arguments: * args"
    assert submissions.one_line("a" * 50, 10) == "a" * 9 + "\u2026"


def test_feedback_names_a_failing_cell_by_what_it_defines_or_its_first_line():
    # Colab shows no cell numbers: "cell 5" alone cannot be found.
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("# Part 1\ndef softmax(scores)\n    return scores\n\n\ndef apply_mask(scores, mask):\n    pass"),
        nbformat.v4.new_code_cell("# a visible check\n\nchecks.check_softmax(softmax)"),
        nbformat.v4.new_code_cell("# only a comment"),
    ]
    report = {"cells": {
        "1": {"status": "error", "error": {"ename": "SyntaxError", "evalue": "expected ':'"}},
        "2": {"status": "timeout"},
        "3": {"status": "died"},
    }}
    notes = scoring.run_notes(report, notebook, None)
    assert notes[0] == "cell 2 (defines `softmax`, `apply_mask`) raised SyntaxError: expected ':'"
    assert notes[1] == "cell 3 (`checks.check_softmax(softmax)`) was stopped at the time limit (interrupted)"
    assert notes[2].startswith("cell 4 stopped the kernel")
    result = scoring.SubmissionResult("s", "s.ipynb", "graded", {}, 0, 10, notes=notes)
    assert "markdown (text) cells included" in reports.feedback_text(load_assignment("A1"), result)


def test_grade_help_shows_the_defaults():
    import argparse

    root = argparse.ArgumentParser(prog="course-lib")
    grader.register_cli(type("Commands", (), {"root": root.add_subparsers()})())
    text = " ".join(root._subparsers._group_actions[0].choices["grade"].format_help().split())
    assert "(default: fast)" in text and "(default: 1)" in text
    assert "cell_timeout, notebook_timeout and memory_mb of the Assignment in hidden_tests/<id>.py" in text, text


# -- second review of the grader (2 Dec 2026) --------------------------------------------------


def _run_harvest(tmp_path, student_code, calls):
    """Runs the harvest cell in a plain Python process after `student_code`, as a kernel would."""
    payload = {"setup": "", "references": {}, "tests": [
        {"name": name, "call": call, "inputs": {}, "substitute": [], "timeout": 0.5} for name, call in calls]}
    results_path = tmp_path / "results.json"
    script = tmp_path / "kernel.py"
    script.write_text(student_code + "\n" + harvest.kernel_code(payload, results_path, HARVEST_KEY))
    finished = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60)
    results, _ = harvest.read_results(results_path, HARVEST_KEY)
    return finished.returncode, results


HARVEST_KEY = "the key of one run"


RETRY_LOOP = """
import time
def slow():
    while True:
        try:
            time.sleep(0.1)
        except {caught}:
            pass
def quick():
    return 42
"""


def test_a_call_that_catches_exception_cannot_swallow_its_time_limit(tmp_path):
    code, results = _run_harvest(tmp_path, RETRY_LOOP.format(caught="Exception"),
                                 [("slow", "student.slow()"), ("quick", "student.quick()")])
    assert code == 0
    assert results["slow"] == {"status": "timeout"}
    assert results["quick"]["status"] == "ok"  # the tests after it still run


def test_a_call_that_swallows_every_stop_is_recorded_as_timed_out_and_ends_the_kernel(tmp_path):
    code, results = _run_harvest(tmp_path, RETRY_LOOP.format(caught="BaseException"),
                                 [("slow", "student.slow()"), ("quick", "student.quick()")])
    assert code != 0  # the runner restarts a dead kernel and the harvest resumes after "slow"
    assert results == {"slow": {"status": "timeout"}}


def test_damaged_cells_are_refused_or_ignored_with_a_plain_reason(tmp_path):
    import json

    cells = [{"cell_type": "code", "id": "c1", "source": "x = 1", "metadata": {"tags": 5}, "outputs": [],
              "execution_count": None}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "tags.ipynb"
    path.write_text(json.dumps(notebook))
    read, reason = submissions.read_submission(path)
    assert reason == "" and read.cells[0]["metadata"]["tags"] == []  # damaged tags are ignored
    cells[0].update(source=5, metadata={})
    path.write_text(json.dumps(notebook))
    read, reason = submissions.read_submission(path)
    assert read is None and reason == "the notebook is damaged: the text of cell 1 is a int, not text"


def test_a_malformed_run_report_is_refused():
    good = {"cells": {"3": {"status": "error", "error": {"ename": "ValueError", "evalue": "no"}}}, "notes": ["n"],
            "harvest": None}
    assert running.well_formed_report(good)
    for bad in ({"cells": {"x": {}}}, {"cells": {"3": "ok"}}, {"cells": {}, "notes": "text"},
                {"cells": {"3": {"error": {"ename": 1}}}}, [], {"cells": {}, "harvest": 3}):
        assert not running.well_formed_report(bad), bad


def test_the_submission_during_which_the_hidden_tests_changed_is_named(tmp_path):
    import nbformat

    tests_dir = tmp_path / "hidden"
    tests_dir.mkdir()
    hidden = tests_dir / "A1.py"
    hidden.write_text((REPOSITORY_ROOT / "hidden_tests" / "A1.py").read_text())
    notebook = nbformat.read(SOLUTION, as_version=4)
    notebook.cells.insert(3, nbformat.v4.new_code_cell(f"open({str(hidden)!r}, 'a').write('# edited\\n')"))
    editor, honest = tmp_path / "editor.ipynb", tmp_path / "honest.ipynb"
    nbformat.write(notebook, editor)
    honest.write_bytes(SOLUTION.read_bytes())
    lines = []
    results = grader.grade("A1", [editor, honest], tests_dir=tests_dir, jobs=1, cell_timeout=8, memory_mb=2048,
                           progress=lines.append)
    by_name = {result.name: result for result in results}
    assert any("files changed while this submission ran: this grade is provisional" in note
               for note in by_name["editor"].notes)
    assert not any("check them and regrade" in note for note in by_name["editor"].notes)  # the staff's line
    assert not any("files changed" in note for note in by_name["honest"].notes)
    assert [line for line in lines if line.startswith("WARNING")] == [
        "WARNING: editor: the grader's or the hidden tests' files changed while this submission ran; "
        "check them and regrade"]


# -- third review of the grader (2 Dec 2026) ---------------------------------------------------


def test_a_notebook_cannot_leave_start_up_files_or_settings_for_later_kernels(tmp_path, monkeypatch):
    # A review's submission wrote an IPython start-up file into the home the kernels shared with the
    # grader; it then ran in every later kernel (and in the instructor's own IPython). The grader's
    # home here is a temporary one, so that the test cannot poison the real one.
    import nbformat

    home = tmp_path / "instructor"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("IPYTHONDIR", str(home / ".ipython"))
    names = ("HOME", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "MPLCONFIGDIR", "KERAS_HOME")
    poison, later = nbformat.v4.new_notebook(), nbformat.v4.new_notebook()
    poison.cells = [
        nbformat.v4.new_code_cell(
            "import os, sys\n"
            "open(os.path.join(get_ipython().profile_dir.startup_dir, '00-helper.py'), 'w').write('POISONED = 1')\n"
            f"print(sys.flags.no_user_site, *[os.environ.get(name, '-') for name in {names!r}])"),
        nbformat.v4.new_code_cell(  # matplotlib and Keras work with their settings in the private home
            "import keras, matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('plot.png')\n"
            "print(float(keras.ops.sum(keras.ops.ones(3))))"),
    ]
    later.cells = [nbformat.v4.new_code_cell("print('POISONED' in globals())")]
    for notebook, name in ((poison, "poison"), (later, "later")):
        nbformat.write(notebook, tmp_path / f"{name}.ipynb")
    report = running.run_notebook(tmp_path / "poison.ipynb", cell_timeout=60, notebook_timeout=120)
    assert running.run_notebook(tmp_path / "later.ipynb")["cells"]["0"]["output"].strip() == "False"
    assert not list(home.rglob("00-helper.py"))
    cells = report["cells"]
    assert [cells[index]["status"] for index in ("0", "1")] == ["ok", "ok"], report
    no_user_site, *folders = cells["0"]["output"].split()
    assert no_user_site == "1" and cells["1"]["output"].strip() == "3.0"
    private = Path(folders[0])
    assert all(Path(folder).is_relative_to(private) for folder in folders) and not private.is_relative_to(home)
    assert not private.exists()  # removed with the submission's other files


def test_packages_in_the_users_site_packages_are_named_before_grading(monkeypatch):
    # The kernels run with PYTHONNOUSERSITE=1: a `pip install --user` of the grader's packages would
    # leave every kernel without them, and every submission with zero.
    import numpy

    monkeypatch.setattr(isolation.site, "getusersitepackages", lambda: str(Path(numpy.__file__).parents[1]))
    for start in (lambda: grader.grade("A1", [SOLUTION], progress=lambda line: None),
                  lambda: running.run_notebook(SOLUTION)):
        with pytest.raises(RuntimeError, match="do not see the user's site-packages .* numpy"):
            start()


def test_the_hidden_tests_neither_resume_from_nor_are_judged_by_results_they_did_not_sign(tmp_path):
    # A process left behind by one submission wrote the next one's results file before its hidden
    # tests began, and they resumed from it (a review zeroed a correct submission that way).
    import json

    forged = {"quick": {"status": "error", "type": "NotImplementedError", "message": ""}}
    results_path = tmp_path / "results.json"
    results_path.write_text(json.dumps(forged))
    code, results = _run_harvest(tmp_path, RETRY_LOOP.format(caught="Exception"), [("quick", "student.quick()")])
    assert code == 0 and results["quick"]["status"] == "ok", results
    signed = json.loads(results_path.read_text())
    for replaced in (forged, {**signed, "results": json.dumps(forged)}):  # a copied signature does not fit
        results_path.write_text(json.dumps(replaced))
        assert harvest.read_results(results_path, HARVEST_KEY) == (
            None, "the results file was not the one the hidden tests wrote (something else replaced it)")


def test_the_hidden_inputs_are_not_in_a_file_a_notebook_can_read():
    payload = {"setup": "", "references": {"secret_reference": "def secret_reference(): pass"}, "tests": []}
    code = harvest.kernel_code(payload, "/x/results.json", HARVEST_KEY)
    assert "inputs.pkl" not in code and "secret_reference" not in code  # inside, pickled
    import inspect

    for module in (grader, submissions, isolation, running, scoring, reports):
        assert "inputs.pkl" not in inspect.getsource(module), module.__name__


def test_a_submission_that_makes_the_outputs_unwritable_does_not_cost_the_batch(tmp_path):
    # A review's submission replaced the CSV with a folder: the batch stopped with "Is a directory",
    # and the CSV and every feedback file were lost.
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    submissions = []
    for name in ("first", "second"):
        submissions.append(tmp_path / f"{name}.ipynb")
        submissions[-1].write_text("not a notebook")
    lines = []

    def progress(line):  # runs just before the grader writes the first submission's row
        if line.startswith("[1/2]"):
            out.unlink(missing_ok=True)
            out.mkdir()
            feedback.write_text("a file where the feedback folder was")
        lines.append(line)

    results = grader.grade("A1", submissions, out=out, feedback_dir=feedback, progress=progress)
    assert [result.name for result in results] == ["first", "second"]
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert warnings[0].startswith("WARNING: first: the CSV could not be written"), warnings
    [csv_file] = tmp_path.glob("grades-*.csv")
    assert not list(tmp_path.glob("*.tmp"))
    [feedback_folder] = [p for p in tmp_path.glob("feedback-*") if p.is_dir()]
    assert [row["submission"] for row in csv.DictReader(csv_file.open())] == ["first", "second"]
    assert sorted(p.name for p in feedback_folder.iterdir()) == [reports.FEEDBACK_MARKER, "first.md", "second.md"]
    assert any(f"it is in {csv_file}" in line and "while first was graded" in line for line in warnings), warnings
    assert any(f"it is in {feedback_folder}" in line for line in warnings), warnings


def test_grading_into_an_existing_csv_keeps_the_earlier_grades(tmp_path):
    # `grade --out grades.csv` replaced an earlier batch's grades without a word.
    out = tmp_path / "grades.csv"
    earlier = "submission,softmax,total,max_total,status,file\nearlier,2,9,10,graded,earlier.ipynb\n"
    out.write_text(earlier)
    submission = tmp_path / "late.ipynb"
    submission.write_text("not a notebook")
    lines = []
    grader.grade("A1", [submission], out=out, progress=lines.append)
    [kept] = tmp_path.glob("grades-*.csv")
    assert kept.read_text() == earlier
    assert [row["submission"] for row in csv.DictReader(out.open())] == ["late"]
    assert any(line == f"{out} held earlier grades: kept as {kept}" for line in lines), lines


def test_every_file_of_course_lib_and_the_hidden_tests_is_fingerprinted(tmp_path):
    # Edits to course_lib/grading/checks/ (which kernels import) went unnoticed: only grading/*.py was checked.
    files = grader.protected_files()
    for wanted in ("course_lib/grading/checks/a2_decoder.py", "course_lib/layers/bahdanau_attention.py",
                   "course_lib/grading/grader.py", "hidden_tests/A2.py"):
        assert REPOSITORY_ROOT / wanted in files, wanted
    tests = tmp_path / "hidden"
    (tests / "more").mkdir(parents=True)
    (tests / "A1.py").write_text("x = 1\n")
    before = grader._fingerprint(grader.protected_files(tests))
    (tests / "more" / "helper.py").write_text("y = 2\n")  # a new file counts too
    assert grader._fingerprint(grader.protected_files(tests)) != before


def test_regrading_keeps_the_earlier_feedback_beside_the_earlier_grades(tmp_path, capsys):
    # Grading alice three times kept the earlier CSVs but rewrote feedback/alice.md each time, so the
    # kept CSVs had lost their feedback.
    from course_lib.cli import main

    alice, out, feedback = tmp_path / "alice.ipynb", tmp_path / "g" / "grades.csv", tmp_path / "g" / "fb"
    alice.write_text("not a notebook")
    command = ["grade", "A1", str(alice), "--out", str(out), "--feedback", str(feedback)]
    for batch in range(3):
        assert main(command) == 0
        with open(feedback / "alice.md", "a") as handle:
            handle.write(f"sent to alice after batch {batch}\n")  # what the instructor did with it
    err = capsys.readouterr().err
    kept_csvs = sorted(out.parent.glob("grades-*.csv"))
    kept_feedback = sorted(p for p in out.parent.glob("fb-*") if p.is_dir())
    assert len(kept_csvs) == 2 and len(kept_feedback) == 2, (kept_csvs, kept_feedback)  # also within one second
    notes = sorted((folder / "alice.md").read_text().splitlines()[-1] for folder in kept_feedback)
    assert notes == ["sent to alice after batch 0", "sent to alice after batch 1"]
    assert (feedback / "alice.md").read_text().startswith("# A1")
    for folder in kept_feedback:
        assert f"{feedback} held earlier feedback: kept as {folder}" in err, err
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    assert "time-stamped folder" in " ".join(capsys.readouterr().out.split())


def test_a_feedback_folder_that_would_move_submissions_or_is_a_file_is_refused(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    bob = submissions / "bob.ipynb"
    bob.write_text("not a notebook")
    with pytest.raises(ValueError, match=f"The feedback folder {submissions} holds {bob}.*Received: --feedback"):
        grader.grade("A1", [bob], feedback_dir=submissions, progress=lambda line: None)
    assert bob.is_file() and sorted(tmp_path.iterdir()) == [submissions]
    a_file = tmp_path / "feedback.md"
    a_file.write_text("notes")
    with pytest.raises(ValueError, match=f"--feedback must be a folder, and {a_file} is a file"):
        grader.grade("A1", [bob], feedback_dir=a_file, progress=lambda line: None)
    # An empty folder holding nothing to keep is used as it is.
    empty = tmp_path / "empty"
    empty.mkdir()
    grader.grade("A1", [bob], feedback_dir=empty, progress=lambda line: None)
    assert sorted(p.name for p in empty.iterdir()) == ["bob.md", reports.FEEDBACK_MARKER]
    assert not list(tmp_path.glob("empty-*"))


def test_a_kernel_that_is_given_up_on_is_stopped_before_the_next_start(tmp_path, monkeypatch):
    # A silent kernel left running beside its replacement holds its memory (and the sandbox's limit)
    # until the runner ends.
    from jupyter_client import KernelManager

    make, starts = _kernel_session(tmp_path, monkeypatch, 1, "silent")
    managers, start_kernel = [], KernelManager.start_kernel  # the start `_kernel_session` patched

    def recording(manager, **kwargs):
        managers.append(manager)
        return start_kernel(manager, **kwargs)

    monkeypatch.setattr(KernelManager, "start_kernel", recording)
    session = make()
    try:
        assert len(managers) == 2 and session.manager is managers[1]
        assert not managers[0].is_alive()
    finally:
        session.close()
        managers[0].shutdown_kernel(now=True)


def test_a_restart_does_not_give_the_notebook_its_time_again(tmp_path):
    # The notebook's time counts from its first kernel's first answer: a cell that ends the kernel must
    # not buy the rerun (and each later one) a whole new notebook_timeout.
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("import time\ntime.sleep(4)"),
        nbformat.v4.new_code_cell("import os\nos._exit(1)"),
        nbformat.v4.new_code_cell("print('reached')"),
    ]
    path = tmp_path / "dies.ipynb"
    nbformat.write(notebook, path)
    report = running.run_notebook(path, cell_timeout=30, notebook_timeout=8, memory_mb=3000)
    cells = {int(k): v for k, v in report["cells"].items()}
    assert report["restarts"] == 1 and cells[1]["status"] == "died", report
    assert cells[2] == {"status": "not-run", "reason": "notebook time limit reached"}, report


def test_a_kernel_start_that_is_given_up_leaves_no_socket_folder(tmp_path, monkeypatch):
    # The sockets' folder may be in the shared temporary folder (a long private path): it must go with the kernel.
    from course_lib.grading import runner

    made, socket_folder = [], runner.socket_folder
    monkeypatch.setattr(runner, "socket_folder", lambda root: made.append(socket_folder(root)) or made[-1])
    make, starts = _kernel_session(tmp_path, monkeypatch, runner.KERNEL_START_ATTEMPTS, "dies")
    with pytest.raises(runner.KernelStartError):
        make()
    assert len(made) == 1 and not made[0].exists(), made


def test_grading_skip_comments_are_run_when_skip_grading_is_not_asked_for(tmp_path):
    # run_notebook(skip_tags=()) runs a notebook whole (its training cells too): `# grading: skip` only
    # counts with the "skip-grading" tag's rule, as the grader asks for it.
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("# grading: skip\nprint('ran')")]
    path = tmp_path / "whole.ipynb"
    nbformat.write(notebook, path)
    report = running.run_notebook(path, cell_timeout=30, notebook_timeout=60, memory_mb=3000)
    assert report["skipped_by_tag"] == [] and report["cells"]["0"]["output"].strip() == "ran", report
    report = running.run_notebook(path, cell_timeout=30, notebook_timeout=60, memory_mb=3000,
                                  skip_tags=("skip-grading",))
    assert report["skipped_by_tag"] == [0] and report["cells"] == {}, report


def test_kept_copies_of_one_second_never_replace_each_other(tmp_path, monkeypatch):
    monkeypatch.setattr(reports.time, "strftime", lambda form: "20261204-080000")
    out = tmp_path / "grades.csv"
    for kept in ("grades-20261204-080000.csv", "grades-20261204-080000-2.csv"):
        (tmp_path / kept).write_text(kept)
    assert reports.time_stamped(out) == tmp_path / "grades-20261204-080000-3.csv"


def test_a_feedback_folder_holding_submissions_deeper_down_or_the_current_folder_is_refused(tmp_path, monkeypatch):
    feedback = tmp_path / "feedback"
    (feedback / "week1").mkdir(parents=True)
    bob = feedback / "week1" / "bob.ipynb"
    bob.write_text("not a notebook")
    with pytest.raises(ValueError, match=f"The feedback folder {feedback} holds {bob}"):
        reports.check_feedback_folder(feedback, [bob])
    monkeypatch.chdir(feedback / "week1")
    with pytest.raises(ValueError, match="holds the current folder"):
        reports.check_feedback_folder(feedback, [])


def test_an_output_that_cannot_be_written_beside_its_target_goes_to_a_new_temporary_folder(tmp_path):
    lines, written = [], []

    def write(path):
        if tmp_path in Path(path).parents:
            raise PermissionError(13, "Permission denied", str(path))
        Path(path).write_text("grades")
        written.append(Path(path))

    target = tmp_path / "grades.csv"
    where = reports.write_somewhere("CSV", target, write, lines.append)
    assert written == [where] and where.read_text() == "grades" and tmp_path not in where.parents
    assert where.name.startswith("grades-") and f"it is in {where} instead" in lines[0], lines
    import shutil

    shutil.rmtree(where.parent)


def test_damaged_tags_in_a_list_are_ignored_too(tmp_path):
    # A tag that is no string (a list is unhashable) would stop the runner in `code_cells`.
    import json

    cell = {"cell_type": "code", "id": "c1", "source": "x = 1", "metadata": {"tags": [["a"], 5]}, "outputs": [],
            "execution_count": None}
    path = tmp_path / "tags.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    read, reason = submissions.read_submission(path)
    assert reason == "" and read.cells[0]["metadata"]["tags"] == []


def test_a_handed_out_cell_is_known_by_its_first_and_last_lines_without_the_stubs():
    assert submissions.kept_lines("def f(x):\n    # YOUR CODE HERE\n\n    raise NotImplementedError()\n") == ["def f(x):"]
    cells = [c for c in submissions.handed_out_cells(load_assignment("A1")) if c["lines"]]
    assert cells and all(line.strip() and not line.startswith(submissions.STUB_LINES) for c in cells for line in c["lines"])
    assert any(len(c["lines"]) == 2 for c in cells)  # the last line counts as well as the first


def test_a_notebook_above_the_size_limit_is_not_read(tmp_path):
    path = tmp_path / "huge.ipynb"
    with open(path, "wb") as handle:
        handle.truncate(submissions.MAX_NOTEBOOK_BYTES + 1)
    notebook, reason = submissions.read_submission(path)
    assert notebook is None and reason == "the file is 20.0 MB; notebooks above 20 MB are not graded"


def test_hidden_tests_that_did_not_run_say_why(monkeypatch):
    assignment = load_assignment("A1")
    inputs, expected = submissions.hidden_inputs(assignment)
    first = assignment.tests[0]
    never = scoring.score_tests(assignment, expected, inputs, None)
    assert {o.reason for o in never} == {"not run (the notebook did not reach the hidden tests)"}
    stopped = scoring.score_tests(assignment, expected, inputs,
                                  {first.name: {"status": "error", "type": "ValueError", "message": "no"}})
    assert stopped[0].reason == "raised ValueError: no" and stopped[0].earned == 0
    # A long message (a submission that read the reference source in the kernel, say) is cut short.
    long = scoring.score_tests(assignment, expected, inputs,
                               {first.name: {"status": "error", "type": "ValueError", "message": "def x():" * 50}})
    assert long[0].reason.startswith("raised ValueError: def x():")
    assert len(long[0].reason) == len("raised ValueError: ") + scoring.HIDDEN_ERROR_CHARACTERS <= 190
    [missing, *_] = scoring.score_tests(assignment, expected, inputs, {first.name: {"status": "missing", "name": "f"}})
    assert missing.reason == ("`f` is not defined in the notebook (not answered yet, or its cell failed, was deleted, "
                              "or the name was changed)") and missing.earned == 0
    assert {o.reason for o in stopped[1:]} == {"not run (the hidden tests stopped before this one; see the notes below)"}
    # A comparison that fails on a malformed answer costs that test, not the batch.
    monkeypatch.setattr(first, "compare", lambda got, wanted, inputs: {}["no such key"])
    [broken, *_] = scoring.score_tests(assignment, expected, inputs, {first.name: {"status": "ok", "value": 1}})
    assert broken.earned == 0 and broken.reason == "the answer could not be checked (KeyError)"


def test_run_notes_say_each_thing_once_and_survive_a_cell_number_past_the_end():
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print('x' * 10**7)")]
    report = {"cells": {"0": {"status": "output-limit", "truncated": True}, "1": {"status": "timeout"}}}
    notes = scoring.run_notes(report, notebook, None)  # cell 1 is past the end (a report the notebook rewrote)
    assert notes == ["cell 1 (`print('x' * 10**7)`) printed too much output and was interrupted",
                     "cell 2 was stopped at the time limit (interrupted)"], notes


def test_a_notebook_that_kills_its_runner_is_named(tmp_path):
    # The runner's exit by a signal is told apart from its own failure: a process the notebook started
    # may have outlived it.
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")]
    path = tmp_path / "kills-runner.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(RuntimeError, match="the notebook runner was killed before it finished"):
        running.run_notebook(path, cell_timeout=30, notebook_timeout=60, memory_mb=3000)


def test_a_submission_whose_kernel_keeps_dying_is_told_the_hidden_tests_did_not_run(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(f"import os\nos._exit({n})") for n in (1, 2, 3)]  # one per start
    path = tmp_path / "dies.ipynb"
    nbformat.write(notebook, path)
    [result] = grader.grade("A1", [path], cell_timeout=20, progress=lambda line: None)
    assert result.total == 0 and "the kernel kept dying; the hidden tests were not run" in result.notes, result.notes
    assert "no results were produced (the kernel did not reach the hidden tests)" in result.notes, result.notes


def test_a_file_name_that_looks_like_a_formula_stays_text_in_the_csv(tmp_path):
    """A submission named `=HYPERLINK(...).ipynb` would become a formula when the CSV is opened in a spreadsheet."""
    submission = tmp_path / "=HYPERLINK(1).ipynb"
    submission.write_text("not a notebook")
    out = tmp_path / "grades.csv"
    grader.grade("A1", [submission], out=out, progress=lambda line: None)
    [row] = csv.DictReader(out.open())
    assert row["submission"] == "'=HYPERLINK(1)"  # the path column starts with / and stays as it is
    assert row["file"].endswith("=HYPERLINK(1).ipynb")
    assert reports.spreadsheet_text("-1+2") == "'-1+2" and reports.spreadsheet_text("anna") == "anna"


def test_an_apply_mask_that_writes_into_the_scores_loses_the_unchanged_scores_test():
    """The docstring and the visible check ask for a new array; a version writing into `scores` scored 10/10."""
    from types import SimpleNamespace

    assignment = load_assignment("A1")
    [test] = [t for t in assignment.tests if t.name == "mask: a new array, the scores passed in left unchanged"]

    def in_place(scores, mask):
        scores[~np.asarray(mask, bool)] = -1e9
        return scores

    def new_array(scores, mask):
        return np.where(mask, scores, -1e9)

    def untouched(scores, mask):  # leaves the scores alone, and masks nothing
        return scores

    for apply_mask, passes in ((in_place, False), (new_array, True), (untouched, False)):
        inputs = test.inputs(np.random.default_rng(0))
        namespace = {"np": np}
        exec(assignment.kernel_setup, namespace)  # noqa: S102  (the `_grader_*` helpers the call uses)
        got = eval(test.call, {**namespace, "student": SimpleNamespace(apply_mask=apply_mask), "inputs": inputs})  # noqa: S307
        assert (test.compare or allclose())(got, test.expected(inputs), inputs)[0] is passes, apply_mask
    assert sum(t.points for t in assignment.tests if t.question == "mask") == pytest.approx(1.0)
