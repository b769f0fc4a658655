"""Executes one notebook in its own kernel, under limits, and reports each cell.

The grader starts this module as a subprocess per submission, and writes the
job to its standard input (`-`; a file name works too):

    python -s -m course_lib.grading.runner - < job.json

The job says which notebook to run, in which working directory, with which
limits, and which extra cell (the hidden-test harvest) to run at the end; it
is never written to a file, since the harvest holds the hidden inputs and the
key that signs the results. The report (`result_path`) lists every code cell
with its status (`ok`, `error`, `timeout`, `died`, `unresponsive`,
`output-limit`, `skipped`), the exception's name and message, and notes for
the feedback.

Limits:
* per cell (`cell_timeout`): the kernel is interrupted; if it does not
  answer the interrupt within `grace` seconds it is killed, restarted, and
  the notebook is run again from the top without that cell;
* per notebook (`notebook_timeout`): later cells are skipped and the
  harvest still runs;
* cells tagged `skip-grading`, or whose first line is `# grading: skip`
  (training runs, plots), are not run;
* output: at most `output_limit` characters are kept per cell; a cell that
  keeps printing past 20 times that is interrupted;
* memory and file size: set on the kernel by `course_lib.grading.sandbox`.

A kernel that dies (for example `os._exit`, or memory exhausted) is restarted
the same way, without the cell that killed it, at most `max_restarts` times.

At the end every process below the runner is killed (`kill_until_gone`), also
one that left the kernel's session: the runner is a subreaper, so orphans
become its children.
"""

import json
import os
import queue
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _kernel_spec_dir(root, memory_mb, file_mb):
    root = Path(root)
    spec_dir = root / "kernels" / "course-grader"
    spec_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable, "-m", "course_lib.grading.sandbox",
        "--memory-mb", str(int(memory_mb)), "--file-mb", str(int(file_mb)), "--",
        sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
        "--HistoryManager.enabled=False",
    ]
    (spec_dir / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "course grader", "language": "python"})
    )
    return root


class CellResult(dict):
    pass


KERNEL_START_ATTEMPTS = 3
KERNEL_READY_SECONDS = 60  # a kernel answers in about 1 s on an idle 2-core machine
SOCKET_PATH_ROOM = 90  # a Unix socket's path holds at most 107 bytes; the kernel adds "-ipc-<n>"


class KernelStartError(RuntimeError):
    """No kernel answered in `KERNEL_START_ATTEMPTS` starts. None of the submission's code
    had run, so the fault is the machine's or the limits' (e.g. a memory limit too small
    for Python), never the submission's: the runner reports it and the grader does not grade."""


def socket_folder(spec_root):
    """Where a kernel's Unix sockets go: a fresh folder in `spec_root` (the job's private folder,
    removed with it) when its path is short enough, else a fresh folder in the temporary folder."""
    for base in (Path(spec_root), Path(tempfile.gettempdir()), Path("/tmp")):
        if base.is_dir() and len(str(base)) + 30 < SOCKET_PATH_ROOM:
            return Path(tempfile.mkdtemp(prefix="sockets-", dir=base))
    raise RuntimeError(f"no folder with a path short enough for the kernel's sockets; tried {spec_root} "
                       f"and {tempfile.gettempdir()}")


class KernelSession:
    """A kernel with a blocking client, and one `run(code, timeout)` method.

    The kernel talks to this client over Unix sockets in a folder of its own,
    not over TCP ports: ports are chosen by jupyter_client and bound by the
    kernel a moment later, so kernels started in parallel (`grade --jobs 2`)
    could take each other's ports.

    A kernel that dies, or does not answer, before its first request is
    answered is started again (up to `KERNEL_START_ATTEMPTS` times, waiting
    `KERNEL_READY_SECONDS` for each): no submitted code has run yet, so the
    cause is the machine. Without the retry the submission would score 0
    for nothing it did (a CI run lost one submission's points to a kernel
    that was alive and silent for 120 s).
    """

    def __init__(self, workdir, spec_root, env, output_limit, grace):
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager

        self.output_limit = output_limit
        self.grace = grace
        self.socket_dir = socket_folder(spec_root)
        spec_manager = KernelSpecManager(kernel_dirs=[str(spec_root / "kernels")])
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            self.manager = KernelManager(kernel_name="course-grader", kernel_spec_manager=spec_manager,
                                         transport="ipc", ip=str(self.socket_dir / f"kernel{attempt}"))
            self.manager.start_kernel(cwd=str(workdir), env=env)
            self.client = self.manager.client()
            self.client.start_channels()
            try:
                self.client.wait_for_ready(timeout=KERNEL_READY_SECONDS)
                return
            except RuntimeError as error:  # "Kernel died before replying to kernel_info", or no reply in time
                if attempt == KERNEL_START_ATTEMPTS:
                    self.close()
                    raise KernelStartError(f"no kernel answered in {attempt} starts: {error}") from error
                self._stop_kernel()

    def run(self, code, timeout):
        """Runs `code`; returns a dict with status, outputs and error."""
        started = time.monotonic()
        message_id = self.client.execute(code, store_history=True, allow_stdin=False, stop_on_error=False)
        deadline = started + max(timeout, 0.5)
        interrupted = None
        kept, seen, truncated = [], 0, False
        error = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                if interrupted is None:
                    interrupted = "timeout"
                    self._interrupt()
                    deadline = now + self.grace
                    continue
                return self._result("unresponsive", error, kept, truncated, started, interrupted)
            try:
                message = self.client.get_iopub_msg(timeout=min(1.0, deadline - now))
            except queue.Empty:
                if not self.manager.is_alive():
                    return self._result("died", error, kept, truncated, started, interrupted)
                continue
            if message["parent_header"].get("msg_id") != message_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "status" and content.get("execution_state") == "idle":
                break
            text = None
            if kind == "stream":
                text = content.get("text", "")
            elif kind in ("execute_result", "display_data"):
                text = content.get("data", {}).get("text/plain", "")
            elif kind == "error":
                error = {
                    "ename": content.get("ename", ""),
                    "evalue": content.get("evalue", "")[:1000],
                    "traceback": ANSI.sub("", "\n".join(content.get("traceback", [])))[-4000:],
                }
            if text:
                seen += len(text)
                room = self.output_limit - sum(len(t) for t in kept)
                if room > 0:
                    kept.append(text[:room])
                if seen > self.output_limit:
                    truncated = True
                if seen > 20 * self.output_limit and interrupted is None:
                    interrupted = "output-limit"
                    self._interrupt()
                    deadline = time.monotonic() + self.grace
        status = interrupted or ("error" if error else "ok")
        return self._result(status, error, kept, truncated, started, interrupted)

    def _interrupt(self):
        try:
            self.manager.interrupt_kernel()
        except Exception:  # a dead kernel cannot be interrupted
            pass

    @staticmethod
    def _result(status, error, kept, truncated, started, interrupted):
        return CellResult(
            status=status,
            error=error,
            output="".join(kept),
            truncated=truncated,
            seconds=round(time.monotonic() - started, 3),
        )

    def close(self):
        self._stop_kernel()
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def _stop_kernel(self):
        try:
            self.client.stop_channels()
        except Exception:
            pass
        pid = None
        try:
            pid = self.manager.provisioner.process.pid
        except AttributeError:
            pass
        try:
            self.manager.shutdown_kernel(now=True)
        except Exception:
            pass
        if pid:
            for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    kill()
                except (ProcessLookupError, PermissionError, OSError):
                    pass


def code_cells(notebook, skip_tags):
    """(index, cell) of the code cells to run, and the indices skipped by tag."""
    run, skipped = [], []
    for index, cell in enumerate(notebook.cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if not isinstance(source, str):
            source = "".join(source)
        if not source.strip():
            continue
        tags = set(cell.get("metadata", {}).get("tags", []) or [])
        first_line = source.lstrip().splitlines()[0].strip().lower()
        marked = "skip-grading" in skip_tags and first_line.replace(" ", "") == "#grading:skip"
        if tags & set(skip_tags) or marked:
            skipped.append(index)
            continue
        run.append((index, source))
    return run, skipped


def execute(job):
    """Runs the job's notebook; returns the report dict."""
    started = time.monotonic()
    notebook_deadline = None  # counted from the moment the first kernel is ready
    notebook = nbformat.read(job["notebook"], as_version=4)
    cells, skipped = code_cells(notebook, job.get("skip_tags", []))
    spec_root = _kernel_spec_dir(job["private_dir"], job["memory_mb"], job["file_mb"])
    env = dict(os.environ)
    env.update(job.get("env", {}))
    report = {"cells": {}, "notes": [], "restarts": 0, "harvest": None, "skipped_by_tag": skipped}
    fatal = {}
    session = None
    for attempt in range(job.get("max_restarts", 2) + 1):
        restart_needed = False
        session = KernelSession(job["workdir"], spec_root, env, job["output_limit"], job.get("grace", 5))
        if notebook_deadline is None:
            notebook_deadline = time.monotonic() + job["notebook_timeout"]
        report["cells"] = {}
        for index, source in cells:
            if index in fatal:
                report["cells"][index] = fatal[index]
                continue
            remaining = notebook_deadline - time.monotonic()
            if remaining <= 1:
                report["cells"][index] = {"status": "not-run", "reason": "notebook time limit reached"}
                continue
            result = session.run(source, min(job["cell_timeout"], remaining))
            report["cells"][index] = dict(result)
            if result["status"] in ("died", "unresponsive"):
                fatal[index] = dict(result)
                restart_needed = True
                break
            if job.get("stop_on_error") and result["status"] != "ok":
                break
        if not restart_needed:
            break
        session.close()
        session = None
        report["restarts"] += 1
        if attempt == job.get("max_restarts", 2):
            report["notes"].append("the kernel kept dying; the hidden tests were not run")
    if session is not None and job.get("harvest_code"):
        # Whatever the notebook left at the results' path is not the harvest's (which also checks the signature).
        Path(job["results_path"]).unlink(missing_ok=True)
        # A hidden-test call that kills the kernel (os._exit, a crash, memory)
        # costs that test only: the harvest saves its results after every test,
        # so the kernel is restarted, the notebook rerun (without its fatal
        # cells) and the harvest resumed, all within the harvest's time.
        harvest_deadline = time.monotonic() + job["harvest_timeout"]
        for harvest_attempt in range(job.get("max_restarts", 2) + 1):
            harvest = session.run(job["harvest_code"], max(harvest_deadline - time.monotonic(), 1))
            report["harvest"] = {k: harvest[k] for k in ("status", "error", "seconds")}
            if harvest["status"] != "died" or harvest_attempt == job.get("max_restarts", 2):
                break
            if harvest_deadline - time.monotonic() < 10:
                break
            report["notes"].append("the kernel died during the hidden tests; it was restarted to run the remaining ones")
            session.close()
            session = KernelSession(job["workdir"], spec_root, env, job["output_limit"], job.get("grace", 5))
            report["restarts"] += 1
            for index, source in cells:
                remaining = harvest_deadline - time.monotonic()
                if index in fatal or remaining <= 1:
                    continue
                if session.run(source, min(job["cell_timeout"], remaining))["status"] in ("died", "unresponsive"):
                    break
    if session is not None:
        session.close()
    report["seconds"] = round(time.monotonic() - started, 3)
    return report


def _become_subreaper():
    """Orphans of the kernel (a process started in a new session, or with an
    environment of its own) become this process's children, not init's."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _parent_of(pid):
    """The parent pid from /proc/<pid>/stat, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class Descendants:
    """Finds every process below this one, zombies included (a zombie still names its process group).

    Called again and again while the runner kills, so it must be quicker than a process that forks
    and exits in a loop (about 1,100 such hops a second on CI's machine): reading every process's
    /proc/<pid>/stat took 2.5 ms, so each scan found a pid that had already hopped on. A pid's place
    is read once, when it first appears (a process below this one stays below it: its orphans come
    to the nearest subreaper, this one), and the whole table again every `refresh_seconds`.
    """

    def __init__(self, refresh_seconds=1.0):
        self.refresh_seconds = refresh_seconds
        self.own = os.getpid()
        self.known = {}  # pid -> whether it is below this process
        self.refreshed = 0.0

    def __call__(self):
        if time.monotonic() - self.refreshed > self.refresh_seconds:  # a pid reused for another process
            self.known, self.refreshed = {}, time.monotonic()
        try:
            listed = {int(name) for name in os.listdir("/proc") if name.isdigit()}
        except OSError:
            return set()
        self.known = {pid: below for pid, below in self.known.items() if pid in listed}
        parents = {pid: _parent_of(pid) for pid in listed - self.known.keys()}

        def below(pid):
            if pid in self.known:
                return self.known[pid]
            parent = parents.get(pid)
            if parent is None:
                return None  # gone, or its parent went while /proc was read: read again next time
            if parent == self.own:
                result = True
            elif parent in self.known or parent in parents:
                parents[pid] = None  # a loop guard: pids are reused
                result = below(parent)
            else:
                result = False  # its parent is no process listed here: not one of ours (ours are reparented to us)
            if result is not None:
                self.known[pid] = result
            return result

        for pid in sorted(parents):
            below(pid)
        return {pid for pid, is_below in self.known.items() if is_below}


def _reap_children():
    """Collects this process's exited children, so that a scan no longer finds them.

    Returns:
        Whether any child is left, running or exited since. For a subreaper this is exact where a scan
        of /proc is not: every process below it has an ancestor that is its child.
    """
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        return False
    return True


def kill_until_gone(find, seconds=10.0, reap=False):
    """Kills the processes that `find()` returns, and their process groups, until two scans in a row find none.

    One scan is not enough: a process that forks and exits in a loop has a new pid by the time
    it is signalled (a review's submission escaped that way and zeroed the next submission). The
    exited ones stay as zombies until reaped, and `killpg` on their group stops the live member at
    once; one that also changes its group at every fork is caught by a later scan. Two empty
    scans can still both miss such a process (it forked while /proc was being read: a CI run's
    did), so the runner, a subreaper, also waits until it has no child left at all.

    Args:
        find: a callable returning the pids to kill.
        seconds: how long to keep trying.
        reap: whether to collect exited children after each round and go on while any child is
            left (only the runner, a subreaper, whose children are all the notebook's).

    Returns:
        True when two scans in a row found nothing (and, with `reap`, no child was left); False when
        processes were still found after `seconds`.
    """
    own_group, quiet, deadline = os.getpgrp(), 0, time.monotonic() + seconds
    while quiet < 2:
        if time.monotonic() > deadline:
            return False
        pids = find()
        quiet = 0 if pids else quiet + 1
        for pid in pids:
            try:
                group = os.getpgid(pid)
                if group != own_group:
                    os.killpg(group, signal.SIGKILL)
                os.kill(pid, signal.SIGKILL)
            except OSError:  # gone already
                pass
        if reap and _reap_children():
            quiet = 0  # a child is left that the scans missed (it forked while /proc was read)
        if not pids:
            time.sleep(0.05)
    return True


STRAGGLERS = "processes that the notebook started were still running after 10 s of killing them"


def read_job(argument):
    """The job: JSON from standard input (`-`) or from a file."""
    return json.load(sys.stdin) if argument == "-" else json.loads(Path(argument).read_text())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        raise SystemExit("usage: python -m course_lib.grading.runner - < JOB.json   (or: ... runner JOB.json)")
    job = read_job(argv[0])
    _become_subreaper()
    try:
        report = execute(job)
    except KernelStartError as error:
        report = {"cells": {}, "notes": [], "restarts": 0, "harvest": None, "kernel_start_failed": str(error)}
    finally:
        gone = kill_until_gone(Descendants(), reap=True)
    if not gone:
        report["notes"].append(STRAGGLERS)
    result_path = Path(job["result_path"])
    temporary = result_path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, default=str))
    temporary.replace(result_path)


if __name__ == "__main__":
    main()
