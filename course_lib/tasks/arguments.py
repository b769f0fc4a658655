"""What the tasks' command-line verbs share: argument types, and checks on a run's data."""

import argparse
import ast
import importlib.util
import json
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path


POSITIVE_INT_LIMIT = 2**31 - 1  # TensorFlow keeps step and epoch counters as 32- or 64-bit integers


def positive_int(text):
    """An `argparse` type: a whole number from 1 to 2**31 - 1 (a count, a size, a beam width).

    `0` is refused rather than read as "the default", and a usage error names
    what was received. A number too large for TensorFlow's counters used to
    fail inside it ("Can't convert Python sequence with out-of-range integer
    to Tensor"), naming no option.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received {text!r}")
    if value > POSITIVE_INT_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a positive integer up to 2**31 - 1, received {text!r}")
    return value


SEED_LIMIT = 2**32  # NumPy and Keras take seeds in [0, 2**32)


def random_seed(text):
    """An `argparse` type for `--seed` and `--model-seed`: a whole number in [0, 2**32).

    A negative seed used to fail inside NumPy or TensorFlow, some only after
    the run's folder was claimed, with a message that named neither.
    """
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a seed, a whole number from 0 to {SEED_LIMIT - 1}, "
                                         f"received {text!r}")
    return value


def _finite_float(text, above_zero):
    kind = "positive" if above_zero else "non-negative"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {kind} number, received {text!r}") from None
    if not math.isfinite(value) or value < 0 or (above_zero and value == 0):
        raise argparse.ArgumentTypeError(f"expected a {kind} number, received {text!r}")
    return value


def positive_float(text):
    """An `argparse` type: a finite number above 0 (a learning rate, a time limit).

    NaN and infinity are refused: a NaN learning rate would train to a NaN
    loss and save that model.
    """
    return _finite_float(text, above_zero=True)


def non_negative_float(text):
    """An `argparse` type: a finite number of at least 0 (a weight, where 0 turns something off)."""
    return _finite_float(text, above_zero=False)


def output_folder(text):
    """An `argparse` type: a folder to write into, made when the run saves.

    Checked when the arguments are read, before any training: a path that is
    an existing file would otherwise fail only after the work is done.
    """
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"expected a folder, received {text!r}, which is a file")
    # The nearest folder that is there must take new entries: a file on the way (`afile/sub`), or a folder
    # that cannot be written (`/proc/nope`), used to fail with a bare errno once TensorFlow had started.
    ancestor = Path(os.path.abspath(text))
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise argparse.ArgumentTypeError(
            f"expected a folder that can be made, received {text!r}, but {str(ancestor)!r} is "
            + ("a file" if ancestor.is_file() else "not a folder")
        )
    problem = _cannot_write_in(ancestor)
    if problem:
        raise argparse.ArgumentTypeError(
            f"expected a folder that can be written, received {text!r}, but {str(ancestor)!r} "
            f"cannot be written ({problem})"
        )
    _refuse_long_names(text, ancestor, "folder names")  # (a run's files are staged inside it, under their own names)
    return text


# A file is written under a temporary name first (`run_files.write_output_file`: ".NAME.PID.tmp.SUFFIX"), at most
# this many bytes longer than its own.
TEMPORARY_NAME_EXTRA = 16


def _refuse_long_names(text, existing, what, extra=0):
    """Refuses (`argparse.ArgumentTypeError`, saying which `what` are expected) the path `text` when a part still to
    be made has a name (the last part's plus `extra` bytes) too long for the file system under the existing folder
    `existing`. Checked before the work: `[Errno 36] File name too long` used to come after training, and lose the
    model."""
    try:
        limit = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows), or a name it does not know
        limit = 255
    parts = Path(os.path.abspath(text)).relative_to(existing).parts
    for index, part in enumerate(parts):
        room = limit - (extra if index == len(parts) - 1 else 0)  # only the last part gets a temporary name
        size = len(os.fsencode(part))
        if size > room:
            raise argparse.ArgumentTypeError(f"expected {what} the file system takes, received {text!r}: "
                                             f"{part[:40]!r}... is {size} bytes long, and names there take up to {room}")


def _cannot_write_in(folder):
    """Why no entry can be made in the existing `folder`, or None when one can.

    Tried for real (a hidden folder made and removed at once): `os.access`
    answers yes to root for `/proc` and read-only mounts, where `mkdir` fails.
    """
    if not os.access(folder, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        probe = tempfile.mkdtemp(prefix=".course-lib-write-check-", dir=folder)
    except OSError as error:
        return error.strerror or type(error).__name__
    os.rmdir(probe)
    return None


def output_file(*suffixes):
    """An `argparse` type for a file to write: not an existing folder, in a
    folder that is there or can be made (no file on the way), and, when
    `suffixes` are given, ending in one of them (`".keras"`, `".png"`...; the
    case counts: Keras refuses `model.KERAS`).

    Checked before any work, like `output_folder`; the command makes the
    missing folders when it writes.
    """

    def parse(text):
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"expected a file, received {text!r}, which is a folder")
        if suffixes and not text.endswith(suffixes):
            raise argparse.ArgumentTypeError(
                f"expected a file name ending in {' or '.join(suffixes)}, received {text!r}"
            )
        parent = Path(os.path.abspath(text)).parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent  # the nearest folder that is there: the rest can be made
        if not parent.is_dir():
            raise argparse.ArgumentTypeError(
                f"expected a file in a folder, received {text!r}, but {str(parent)!r} is a file"
            )
        _refuse_long_names(text, parent, "names", TEMPORARY_NAME_EXTRA)
        return text

    return parse


def plural(count, word, words=None):
    """`"1 epoch"`, `"3 epochs"`: a count with its noun in the right number."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg")  # what the heat maps can be saved as


class ChoicesFrom:
    """`argparse` choices kept in a library module, read when first needed.

    Argparse reads choices only to check a value or to write a help text, so
    building the whole parser (`course-lib --help`) does not import the
    module, and with it Keras and TensorFlow. Give the argument a `metavar`
    (without one, `add_argument` reads the choices to make it) and name the
    choices in its help with `%(choices)s`. When argparse does read them, a
    module not yet imported is not imported either: the tuple, which must be
    a literal assigned at the module's top level, is read from its source
    (`course-lib train documents --help`: 0.8 s, against 6.5 s when it loaded TensorFlow).

    Args:
        module: the module's dotted name, e.g. `"course_lib.models.document_classifier"`.
        attribute: the name of the tuple of choices in it, e.g. `"ENCODERS"`.
    """

    def __init__(self, module, attribute):
        self.module = module
        self.attribute = attribute

    def _choices(self):
        if self.module in sys.modules:
            return getattr(sys.modules[self.module], self.attribute)
        # find_spec would import the parent packages (course_lib.models imports Keras): locate the file from the top.
        top, *parts = self.module.split(".")
        path = Path(importlib.util.find_spec(top).origin).parent.joinpath(*parts).with_suffix(".py")
        source = path.read_text(encoding="utf-8")
        for statement in ast.parse(source).body:
            if isinstance(statement, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == self.attribute for target in statement.targets
            ):
                return tuple(ast.literal_eval(statement.value))
        raise AttributeError(f"{self.module} assigns no literal {self.attribute} at its top level")

    def __contains__(self, value):
        return value in self._choices()

    def __iter__(self):
        return iter(self._choices())


RUN_MARKER = "course_run.json"  # names the task whose run a folder holds
_NEW_CLAIMS = []  # (folder, whether the claim made it) of markers written by this process


# The file that only one task's run holds, beside its model: how a folder saved without a marker (before the
# marker existed, or by a task's Python function rather than the command line) is recognised, and how
# `claim_run_folder` and `earlier_run_note` tell a task's earlier run. The tests check it against each task's
# own constant.
OWN_FILES = {
    "translation": "state.json",
    "transliteration": "training_state.json",
    "captioning": "run.json",
    "documents": "training.json",
    "reversal": "reversal.keras",
}


def unmarked_run_owner(directory):
    """The task whose run an unmarked folder holds, recognised by its own file (None: no run, or unclear)."""
    directory = Path(directory)
    if (directory / RUN_MARKER).is_file() or not directory.is_dir() or not any(directory.glob("*.keras")):
        return None
    owners = [task for task, name in OWN_FILES.items() if (directory / name).is_file()]
    return owners[0] if len(owners) == 1 else None


def _run_owner(marker):
    """The task named by a run folder's marker file (None when the marker is damaged)."""
    try:
        return json.loads(marker.read_text()).get("task")
    except (ValueError, AttributeError):
        return None


def claim_run_folder(out_dir, task, own_file=None):
    """Makes sure `out_dir` holds nothing but a run of `task`, and marks it as one.

    Every task's training command calls this before it trains: a folder that
    holds another task's run (its marker says so) or other files is refused,
    so one run never silently overwrites another's model. A folder from
    before the marker existed is recognised by the task's own state file,
    `own_file`.

    Args:
        out_dir: the `--out` folder (made when missing).
        task: the task's name, e.g. `"translation"`.
        own_file: a file only this task's runs hold (default: `OWN_FILES[task]`, e.g. `"state.json"`).
    """
    own_file = OWN_FILES[task] if own_file is None else own_file
    folder = Path(out_dir)
    marker = folder / RUN_MARKER
    if check_run_of(out_dir, task, "--out", f"a {task} run would overwrite it. Choose another --out"):
        return
    if folder.is_dir() and any(folder.iterdir()) and not (folder / own_file).exists():
        found = sorted(path.name for path in folder.iterdir())
        raise ValueError(
            f"{str(out_dir)!r} already holds files that are not a {task} run ({', '.join(found[:5])}"
            f"{', ...' if len(found) > 5 else ''}); choose an empty or new folder. Received: --out {str(out_dir)!r}"
        )
    made_folder = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"task": task}))
    _NEW_CLAIMS.append((folder, made_folder))


def check_run_of(directory, task, flag="--model", consequence=None):
    """Refuses `directory` as a run of `task` when its marker names another task.

    Loaders call this before reading a run's files: a folder of another task
    (a translation run given to `evaluate transliteration`) would otherwise
    load, and give a meaningless answer. `claim_run_folder` calls it before
    writing one.

    Args:
        directory: the run folder.
        task: the task's name.
        flag: the option that named the folder, for the message.
        consequence: what would go wrong, for the message (default: "not a <task> run").

    A folder with no marker is refused when its files are another task's run
    (`unmarked_run_owner`): a translation run saved before the marker existed
    used to load as a transliteration model and translate words into sentences.

    Returns:
        True when the folder is marked as a run of `task`, False when it has no marker.
    """
    marker = Path(directory) / RUN_MARKER
    if not marker.is_file():
        owner = unmarked_run_owner(directory)
        if owner is not None and owner != task:
            raise ValueError(
                f"{str(directory)!r} holds a {owner} run (its {OWN_FILES[owner]}); "
                f"{consequence or f'not a {task} run'}. Received: {flag} {str(directory)!r}"
            )
        return False
    owner = _run_owner(marker)
    if owner != task:
        raise ValueError(
            f"{str(directory)!r} holds a {owner or 'different'} run ({RUN_MARKER}); "
            f"{consequence or f'not a {task} run'}. Received: {flag} {str(directory)!r}"
        )
    return True


def check_file_outside_runs(path, flag, *run_dirs, received=None):
    """Refuses to write the file `path` into a folder that holds a task's run (its marker says so).

    For commands that save one file (`--save`, `--metrics-json`) rather than a
    run folder: they would otherwise replace a file of that run, e.g. its
    `model.keras` or `state.json`. `run_dirs` are the runs the command reads
    or writes (`--model`, `--out`): their folders are refused too, marker or
    not (runs saved before the marker existed have none, and a new `--out`
    has none yet). A path in a subfolder of a marked run, or of one of `run_dirs`, is refused
    as well: the run's folder is the run's; so is a symbolic link into one. `received` is what the message says was given with `flag`
    (default: `path`), for a command whose flag names the folder rather than the file.
    """
    received = str(path) if received is None else str(received)
    parent = Path(path).parent
    unmarked = unmarked_run_owner(parent)
    if unmarked is not None:  # a run saved without a marker: its model would be replaced all the same
        raise ValueError(
            f"{str(parent)!r} holds a {unmarked} run (its {OWN_FILES[unmarked]}); writing {flag} there could "
            f"replace one of its files. Choose a path outside it. Received: {flag} {received!r}"
        )
    # The real folders above the file, links followed: a marked run's subfolders are its own too, and so is a
    # folder that a symbolic link (the file's, or a folder's on the way) points into. (`..` is resolved as well:
    # from inside a run, `../metrics.json` lies outside it.)
    real_parent, target_parent = parent.resolve(), Path(path).resolve().parent
    for folder in dict.fromkeys([real_parent, *real_parent.parents, target_parent, *target_parent.parents]):
        marker = folder / RUN_MARKER
        if marker.is_file():
            owner = _run_owner(marker)
            named = str(parent) if folder == real_parent else str(folder)
            where = "" if folder == real_parent else f" (in its subfolder {str(parent)!r})"
            raise ValueError(
                f"{named!r} holds a {owner or 'course'} run ({RUN_MARKER}); writing {flag} there{where} "
                f"could replace one of its files. Choose a path outside it. Received: {flag} {received!r}"
            )
    for run_dir in run_dirs:
        if Path(run_dir).resolve().is_relative_to(Path(path).resolve()):  # the run's folder itself, or one above it
            raise ValueError(
                f"{flag} names the run folder {str(run_dir)!r} (or a folder above it), not a file beside it; the file "
                f"could not be written there after the run. Choose another path. Received: {flag} {received!r}"
            )
        if real_parent.is_relative_to(Path(run_dir).resolve()):
            raise ValueError(
                f"{flag} would write into the run folder {str(run_dir)!r} and could replace one of its files. "
                f"Choose a path outside it. Received: {flag} {received!r}"
            )


def earlier_run_note(out_dir, task):
    """The line a training command prints when its `--out` held an earlier run of `task` (it holds
    `OWN_FILES[task]`), which this run replaces; None for a new folder. Read it before the run saves."""
    if (Path(out_dir) / OWN_FILES[task]).exists():
        return f"{out_dir} holds an earlier {task} run; its files are replaced by this one's."
    return None


def release_unused_claims():
    """Takes back this process's claims on folders where the command then wrote nothing.

    A command that fails after claiming its `--out` (a download that cannot
    be made, options that do not go together) would otherwise leave a folder
    marked as a run that holds no run, and another task could not use it.
    Called by the CLI when a command fails; a folder holding anything else is
    left as it is.
    """
    while _NEW_CLAIMS:
        folder, made_folder = _NEW_CLAIMS.pop()
        if folder.is_dir() and [path.name for path in folder.iterdir()] == [RUN_MARKER]:
            (folder / RUN_MARKER).unlink()
            if made_folder:
                folder.rmdir()


GENERATED = "generated"  # how a run records that it trained on the generated data, not a file


def check_same_training_data(out_dir, trained_on, train_file):
    """Refuses to resume the run in `out_dir` on other data than it was trained on.

    Args:
        out_dir: the run's folder (for the message).
        trained_on: what the run recorded: `GENERATED`, or the `--train` file
            it was started with.
        train_file: the `--train` given now, or None.
    """
    if (trained_on == GENERATED) != (not train_file):
        raise ValueError(
            f"{str(out_dir)!r} was trained on {trained_on!r}; resuming it needs the same kind of data "
            f"(pass --train again, or choose another --out). Received: --train {train_file!r}"
        )
    if train_file and not same_file(trained_on, train_file):
        raise ValueError(
            f"{str(out_dir)!r} was trained on {trained_on!r}; resuming it needs the same file (its vocabularies "
            f"and the examples it has seen come from it), or choose another --out. Received: --train {train_file!r}"
        )


def warn_if_training_file(trained_on, given, flag, what="the figures measure how well it learned its training "
                                                      "examples, not how it does on new ones"):
    """Warns (UserWarning) when the file given with `flag` (`--test`, `--valid`) is the file a run was trained
    on (`trained_on`, as recorded, or the `--train` given with it); None or `GENERATED` never match.

    Scored on its own training data a model looks far better than it is, and nothing in the figures says so.
    """
    if given and trained_on and trained_on != GENERATED and same_file(trained_on, given):
        warnings.warn(f"{flag} {str(given)!r} is the file the model was trained on ({str(trained_on)!r}): {what}.")


def same_file(recorded, given):
    """True when `given` names the file the run recorded: the same file on disk when both are there (a relative
    path recorded elsewhere may name another file from here), else the same text."""
    try:
        return os.path.samefile(recorded, given)
    except (OSError, ValueError, TypeError):
        return str(recorded) == str(given)


RESUME_KEEPS_MODEL = "keeps the saved model and optimizer (leave these out, or choose another --out)"


def check_resume_keeps(out_dir, saved_config, given, because=RESUME_KEEPS_MODEL, none_is_left_out=True):
    """Refuses command-line settings that a resumed run could not honour.

    A resumed run continues the saved model and optimizer, so sizes, the
    learning rate or the attention switch given again with other values would
    be ignored while the run records them as used.

    Args:
        out_dir: the run's folder (for the message).
        saved_config: the configuration the run was started with (a dict).
        given: `{name: value}` of the settings given on this command line,
            None for those left out.
        because: why resuming cannot take them, after "resuming it" in the
            message (default: it keeps the saved model and optimizer).
        none_is_left_out: None in `given` is a flag left out (the command
            line); False compares None as a value (a configuration, where
            `max_train=None` means every pair).
    """
    changed = {name: value for name, value in given.items()
               if not (none_is_left_out and value is None) and name in saved_config and saved_config[name] != value}
    if changed:
        raise ValueError(
            f"{str(out_dir)!r} holds a run trained with "
            + ", ".join(f"{name}={saved_config[name]!r}" for name in changed)
            + f"; resuming it {because}. "
            + "Received: " + ", ".join(f"{name}={value!r}" for name, value in changed.items())
        )


def check_draws_attention(has_attention, plain_model, instead, received):
    """Refuses to draw the attention of a plain encoder-decoder: its "attention" is all zeros.

    The one check behind `translate --heatmap`, `transliterate --heatmap`,
    `caption --overlay`, `tasks.translation.heatmap` and
    `tasks.transliteration.heatmap_examples`.

    Args:
        has_attention: whether the model attends.
        plain_model: what holds the plain model, for the message
            ("'runs/plain' holds a plain encoder-decoder (trained with --no-attention)").
        instead: what to do instead ("leave out --heatmap").
        received: what was received.
    """
    if not has_attention:
        raise ValueError(f"{plain_model}, which has no attention to draw; {instead}. Received: {received}")


def check_generated_test_fits(trained_on, what):
    """Refuses to score a model trained on a file on the generated test data (`what`)."""
    if trained_on != GENERATED:
        raise ValueError(
            f"This model was trained on {trained_on!r}; {what} would not measure it. "
            "Pass the test file with --test FILE. Received: no --test"
        )
