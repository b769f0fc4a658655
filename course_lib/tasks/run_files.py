"""Saving a run folder's files as one checkpoint: all of them, or none.

A run folder holds several files that only make sense together (a model, its
vocabularies, the state that says how far it was trained). Written one after
the other in place, an interrupt between two of them leaves a model of one
epoch beside the state of another, or a new model beside an old run's
vocabulary, and the next command reads them without an error.

`committing` gives every task the same protocol instead:

1. the files are written into a staging folder inside the run folder
   (`.staging-*`); an interrupt here leaves the run as it was;
2. a journal (`.commit.json`) naming the staged files and the run files to
   remove is written beside them and put in place by one `os.replace`: this
   is the single atomic step that commits the checkpoint;
3. the staged files are moved over the old ones and the journal removed.

An interrupt during step 3 leaves a journal behind; `finish_commit`, which
every loader and the next save call first, completes it, so a reader never
sees the old files mixed with the new ones.

The same holds after a power cut, not only an interrupt: the staged files
are flushed to the disk (`fsync`) before the journal commits them, the
folder after the journal is in place, and again after the files are moved,
before the journal is removed.

`write_output_file` is the counterpart for a single file a command writes
outside any run (`--metrics-json`, `--heatmap`, `--overlay`). `load_saved_model`
reads a run's `.keras` file and `read_json_object` its JSON state, each naming the
file when it is damaged.
"""

import json
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

JOURNAL = ".commit.json"  # names the staged files of a committed checkpoint until they are in place
STAGING_PREFIX = ".staging-"  # the folders a checkpoint is written into before it is committed


def _read_journal(folder):
    """The pending commit of `folder` as a dict, or None when there is none."""
    path = Path(folder) / JOURNAL
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        journal = json.loads(text)
        if not isinstance(journal.get("staging"), str) or not isinstance(journal.get("files"), list):
            raise ValueError("no staging folder or files")
    except (ValueError, AttributeError) as error:
        raise ValueError(f"{os.fspath(path)!r} is damaged ({error}); it records an unfinished save of the run in "
                         f"{os.fspath(folder)!r}. Train the run again into a new folder. Received: {text[:80]!r}") from None
    return journal


def _sync(path):
    """Flushes a file, or a folder's list of names, to the disk (folders: POSIX only)."""
    if os.name == "nt" and Path(path).is_dir():
        return  # Windows cannot open a folder to flush it
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _apply(folder, journal, text):
    """Moves the staged files of a committed checkpoint into place, then forgets the journal.

    Each step can be repeated (a file already moved is skipped), so an
    interrupted `_apply` is finished by running it again.
    """
    folder = Path(folder)
    staging = folder / journal["staging"]
    for name in journal["files"]:
        try:
            os.replace(staging / name, folder / name)
        except FileNotFoundError:
            pass  # moved by an earlier, interrupted `_apply`
    for name in journal.get("remove", []):
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass
    shutil.rmtree(staging, ignore_errors=True)
    _sync(folder)  # the moves are on the disk before the journal that would redo them goes
    try:
        # Only this commit's journal: another process may have finished it and committed the next one since.
        if (folder / JOURNAL).read_text() == text:
            (folder / JOURNAL).unlink()
    except FileNotFoundError:
        pass


def finish_commit(folder):
    """Completes the checkpoint of `folder` whose saving was interrupted after it was committed.

    Loaders call it before they read a run's files. Does nothing when no
    commit is pending (the usual case) or the folder does not exist.
    """
    path = Path(folder) / JOURNAL
    if not path.is_file():
        return
    journal = _read_journal(folder)
    if journal is not None:
        _apply(folder, journal, path.read_text())


def _remove_stale_staging(folder):
    """Removes staging folders left by saves that were interrupted before they were committed."""
    for path in Path(folder).glob(STAGING_PREFIX + "*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


@contextmanager
def committing(folder, remove=()):
    """Saves a run's files into `folder` as one checkpoint: every file written in the block, or none.

    Usage::

        with committing(out_dir) as staging:
            model.save(staging / "model.keras")
            (staging / "state.json").write_text(...)

    The block writes the files, under their final names, into `staging`.
    When it ends without an error they replace the folder's files of the same
    names in one commit, and the files named in `remove` (files of an earlier
    run that this one does not write) are deleted with it; when it raises,
    the folder is left as it was.

    Args:
        folder: the run folder (made when missing).
        remove: names of files in `folder` to delete in the same commit.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    finish_commit(folder)  # an earlier checkpoint first: this one is committed after it
    _remove_stale_staging(folder)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    try:
        yield staging
        files = sorted(path.name for path in staging.iterdir())
        clash = sorted(set(files) & set(remove))
        if clash:
            raise ValueError(f"A checkpoint cannot both write and remove a file. Received: {clash}")
        for path in sorted(staging.rglob("*"), reverse=True):  # a folder's contents before the folder
            _sync(path)
        _sync(staging)  # the staged files are whole on the disk before the journal commits them
        text = json.dumps({"staging": staging.name, "files": files, "remove": sorted(set(remove))})
        pending = folder / (JOURNAL + ".tmp")
        with open(pending, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())  # the journal must be whole before it commits anything
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # not committed: the folder keeps the earlier checkpoint
        raise
    os.replace(pending, folder / JOURNAL)  # the commit: from here on the new files are the run's
    _sync(folder)
    _apply(folder, json.loads(text), text)


def write_output_file(path, write):
    """Writes one output file (`--metrics-json`, a heat map) whole, and says when it replaced one.

    `write(temporary)` writes the content to a temporary path with the same
    suffix (matplotlib reads the format from it), which then replaces `path`:
    an interrupted write never leaves half a file. Folders on the way are made.
    Prints `replaced <path>` when a file was there before, so an overwrite is
    never silent.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    existed = path.exists()
    # Named by hand, not by mkstemp, whose files are private (0600): the output keeps the usual permissions.
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    if existed:
        print(f"replaced {os.fspath(path)}")
    return path


def write_json_file(path, data, **dump_options):
    """`write_output_file` for a JSON document (`--metrics-json`)."""
    return write_output_file(path, lambda temporary: Path(temporary).write_text(json.dumps(data, **dump_options)))


def load_saved_model(path):
    """`keras.saving.load_model(path)`, refusing a damaged file by name.

    A `.keras` file is a zip archive. Cut short (a copy or a download that
    stopped) or emptied, Keras reported it as "File not found" although it is
    there; here it is a `ValueError` that says the file is damaged.
    """
    import keras

    path = Path(path)
    if path.is_file() and not zipfile.is_zipfile(path):
        raise ValueError(
            f"{os.fspath(path)!r} is damaged: not a complete .keras file (a zip archive). Train the run again, or "
            f"copy the file again. Received: a file of {path.stat().st_size} bytes"
        )
    return keras.saving.load_model(path)


def read_json_object(path, required=()):
    """A run's JSON file (its state) as a dict, refusing a damaged one by name.

    Args:
        path: the file.
        required: `(key, type, description)` entries the object must hold,
            e.g. `("config", dict, "an object")`.

    Cut short or edited by hand, such a file used to end in a `KeyError` or
    a bare JSON message that named no file.
    """
    text = Path(path).read_text()
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, found {type(data).__name__}")
        for key, kind, description in required:
            if not isinstance(data.get(key), kind):
                raise ValueError(f"expected its {key!r} ({description})")
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)!r} is damaged ({error}); train the run again into a new folder. "
                         f"Received: {text[:80]!r}") from None
    return data
