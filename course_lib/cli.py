"""The `course-lib` command line.

Verbs come from the task and grading modules: each module under
`course_lib/tasks/` or `course_lib/grading/` that defines
`register_cli(commands)` adds its own sub-commands, so this file never lists
them. `commands.root` takes new top-level verbs (`reversal`, `translate`,
`grade`...); `commands.train` and `commands.evaluate` take one entry per task
(`course-lib train translation ...`).
"""

import argparse
import importlib
import os
import pkgutil
import select
import signal
import sys
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from course_lib.tasks.arguments import release_unused_claims

COMMAND_PACKAGES = ("course_lib.tasks", "course_lib.grading")


@dataclass
class Commands:
    root: argparse._SubParsersAction
    train: argparse._SubParsersAction
    evaluate: argparse._SubParsersAction


def _command_modules():
    for package_name in COMMAND_PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            module = importlib.import_module(f"{package_name}.{info.name}")
            if hasattr(module, "register_cli"):
                yield module


def build_parser():
    parser = argparse.ArgumentParser(
        prog="course-lib",
        description="Encoder-decoder networks and attention: experiments, training and grading.",
    )
    root = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    train = root.add_parser("train", help="train a model for a task").add_subparsers(
        dest="task", metavar="TASK", required=True
    )
    evaluate = root.add_parser("evaluate", help="evaluate a trained model").add_subparsers(
        dest="task", metavar="TASK", required=True
    )
    commands = Commands(root=root, train=train, evaluate=evaluate)
    for module in _command_modules():
        module.register_cli(commands)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _plain_warnings(), _terminate_as_interrupt():
            result = args.handler(args)
        sys.stdout.flush()  # a reader that went away shows up here, not as a traceback at exit
    except (ValueError, OSError) as error:  # bad input, a missing file, a path that cannot be written
        if isinstance(error, BrokenPipeError) and _stdout_reader_gone():
            # `course-lib assign --links | head -1`: stop quietly, as Unix tools do
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nothing left to flush at exit
            os.close(devnull)
            result = 1
        else:  # (a pipe of the command's own, to a kernel say, is an error like any other)
            print(f"course-lib: error: {error}", file=sys.stderr)
            result = 2
    except KeyboardInterrupt as interrupt:  # Ctrl-C or SIGTERM: say what is kept, not a traceback from TensorFlow
        release_unused_claims()
        stopped = "terminated (SIGTERM)" if isinstance(interrupt, Terminated) else "interrupted"
        print(f"course-lib: {stopped}. A translation or transliteration run keeps its last saved epoch and "
              "resumes from it when the same command is run again; other commands save nothing until they "
              "finish.", file=sys.stderr)
        return 128 + signal.SIGTERM if isinstance(interrupt, Terminated) else 130
    except BaseException:  # an unexpected error
        release_unused_claims()
        raise
    if result:  # a failed command leaves no empty run folder behind
        release_unused_claims()
    return int(result or 0)


PACKAGE_FOLDER = Path(__file__).resolve().parent  # course_lib/


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the command receives SIGTERM (`kill`, a job scheduler's time limit)."""


@contextmanager
def _terminate_as_interrupt():
    """Makes SIGTERM stop a command the way Ctrl-C does, while the command runs.

    Left to Python's default, SIGTERM ended the process at once: a run folder
    claimed a moment before kept only its marker, and no message said what was
    kept. Now it raises `Terminated` (a `KeyboardInterrupt`) between two Python
    steps, so the same clean-up runs and the same message is printed. Signal
    handlers can only be set from the main thread; elsewhere nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_terminate(signal_number, frame):
        raise Terminated(signal_number)

    previous = signal.signal(signal.SIGTERM, on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _plain_warnings():
    """Prints course_lib's own warnings as one line each, `course-lib: warning: ...`, while a command runs.

    Python's default format adds the file, the line number and the source line
    of the `warnings.warn` call (`.../captioning/data.py:76: UserWarning: ...`
    and then the code), which says nothing to someone running the command.
    Other libraries' warnings keep their usual format; warnings that are
    recorded rather than printed (pytest's) are not changed.
    """
    original = warnings.formatwarning

    def formatwarning(message, category, filename, lineno, line=None):
        if issubclass(category, UserWarning) and _in_course_lib(filename):
            return f"course-lib: warning: {message}\n"
        return original(message, category, filename, lineno, line)

    warnings.formatwarning = formatwarning
    try:
        yield
    finally:
        if warnings.formatwarning is formatwarning:  # not if something else replaced it meanwhile
            warnings.formatwarning = original


def _in_course_lib(filename):
    try:
        return Path(filename).resolve().is_relative_to(PACKAGE_FOLDER)
    except (OSError, ValueError, TypeError):
        return False


def _stdout_reader_gone():
    """Whether standard output is a pipe whose reader has gone away (`poll` reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), or a stdout without a file (pytest)
        return False


if __name__ == "__main__":
    raise SystemExit(main())
