"""Run folders are saved as one checkpoint (all files or none), and output files never replace a run's files.

The ground rule: an interrupted save, a second run into the same folder, or an
output path given by mistake never leaves a silent wrong result or loses work.
"""

import json
import shutil
from types import SimpleNamespace

import keras
import pytest

from course_lib.cli import main
from course_lib.data import hindi_english
from course_lib.data.transliteration_words import generate_pairs
from course_lib.tasks import run_files
from course_lib.tasks import translation as translation_task
from course_lib.tasks.transliteration import runs as transliteration_runs
from course_lib.text.vocabulary import Vocabulary


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt  # what Ctrl-C, or a notebook's "interrupt kernel", raises mid-save


def _tiny_model(units):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(units)])
    model.compile("adam", "mse")
    return model


# -- the shared commit --------------------------------------------------------------------------------------------


def test_commit_interrupted_while_writing_leaves_the_earlier_files(tmp_path):
    with run_files.committing(tmp_path) as staging:
        (staging / "a.json").write_text("1")
        (staging / "b.json").write_text("1")
    with pytest.raises(KeyboardInterrupt):
        with run_files.committing(tmp_path) as staging:
            (staging / "a.json").write_text("2")
            _interrupt()
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text() == "1"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "b.json"]  # no staging folder left


def test_commit_interrupted_after_it_is_committed_is_finished_by_the_next_reader(tmp_path, monkeypatch):
    with run_files.committing(tmp_path, remove=()) as staging:
        for name in ("a.json", "b.json", "old.png"):
            (staging / name).write_text("1")
    moved = []
    real_replace = run_files.os.replace

    def replace_then_stop(source, target):  # the journal commits, one staged file moves, then the interrupt
        real_replace(source, target)
        moved.append(target)
        if len(moved) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(run_files.os, "replace", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        with run_files.committing(tmp_path, remove=["old.png"]) as staging:
            (staging / "a.json").write_text("2")
            (staging / "b.json").write_text("2")
    monkeypatch.undo()
    assert (tmp_path / run_files.JOURNAL).exists()  # a mixed folder, but it says what is committed
    run_files.finish_commit(tmp_path)
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text() == "2"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "b.json"]


def test_a_commit_flushes_files_and_folders_to_the_disk_in_order(tmp_path, monkeypatch):
    """What a power cut needs (an interrupt does not): the staged files are on the disk before the
    journal commits them, and the folder's new names before the journal that would redo them goes."""
    import os

    events, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(descriptor):
        events.append(("sync", os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    def replace(source, target):
        events.append(("replace", os.fspath(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    folder = tmp_path / "run"
    with run_files.committing(folder) as staging:
        (staging / "state.json").write_text("{}")
        (staging / "vocab").mkdir()
        (staging / "vocab" / "words.txt").write_text("a")
    monkeypatch.undo()
    commit = events.index(("replace", os.fspath(folder / run_files.JOURNAL)))
    synced_before = {path for kind, path in events[:commit] if kind == "sync"}
    assert {os.fspath(staging / "state.json"), os.fspath(staging / "vocab" / "words.txt"),
            os.fspath(staging / "vocab"), os.fspath(staging)} <= synced_before, events
    moves = [i for i, (kind, path) in enumerate(events) if kind == "replace" and i > commit]
    folder_syncs = [i for i, event in enumerate(events) if event == ("sync", os.fspath(folder))]
    assert any(commit < i < moves[0] for i in folder_syncs), events  # the journal's name is on the disk
    assert folder_syncs[-1] > moves[-1], events  # the moved files' names too, before the journal is removed
    assert (folder / "vocab" / "words.txt").read_text() == "a" and not (folder / run_files.JOURNAL).exists()


def test_an_output_file_says_when_it_replaces_one(tmp_path, capsys):
    path = tmp_path / "new" / "m.json"
    run_files.write_json_file(path, {"bleu": 1})
    assert "replaced" not in capsys.readouterr().out
    run_files.write_json_file(path, {"bleu": 2})
    assert f"replaced {path}" in capsys.readouterr().out
    assert json.loads(path.read_text()) == {"bleu": 2} and [p.name for p in path.parent.iterdir()] == ["m.json"]


# -- translation: a checkpoint interrupted mid-save -----------------------------------------------------------------


def test_interrupted_translation_checkpoint_keeps_model_and_state_together(tmp_path, monkeypatch):
    tiny = dict(embedding_dim=8, units=16, attention_units=16, batch_size=32, max_train=256, epochs=1)
    parts = hindi_english.load_corpus(seed=0)
    config = translation_task.TranslationConfig.for_profile(direction="en-hi", **tiny)
    first, _ = translation_task.train(config, parts["train"], out_dir=tmp_path, verbose=0)
    steps_per_epoch = int(first.model.optimizer.iterations.numpy())
    config.epochs = 2
    monkeypatch.setattr(Vocabulary, "save", _interrupt)  # the model of epoch 2 is written, then the interrupt
    with pytest.raises(KeyboardInterrupt):
        translation_task.train(config, parts["train"], out_dir=tmp_path, verbose=0)
    monkeypatch.undo()
    saved = translation_task.Translator.load(tmp_path)
    # The state said 1 epoch while the model had trained 2: a resumed run then trained 3 and recorded 2.
    assert saved.epochs_done == 1
    assert int(saved.model.optimizer.iterations.numpy()) == steps_per_epoch


# -- transliteration: the data source in every checkpoint, a damaged state, nothing to do ---------------------------


@pytest.fixture(scope="module")
def interrupted_transliteration(tmp_path_factory):
    """A file-trained transliteration run interrupted while saving its second epoch."""
    folder = tmp_path_factory.mktemp("translit-runs")
    pairs = generate_pairs(100, seed=5)
    train_file = folder / "train.csv"
    train_file.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs), encoding="utf-8")
    out = folder / "run"
    command = ["train", "transliteration", "--train", str(train_file), "--out", str(out), "--epochs", "2",
               "--units", "16", "--embedding-dim", "8", "--batch-size", "32"]
    real_save = transliteration_runs.save_run
    saves = []

    def save_once(*args, **kwargs):
        saves.append(1)
        if len(saves) == 2:
            _interrupt()
        real_save(*args, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(transliteration_runs, "save_run", save_once)
    try:
        assert main(command) == 130  # the command says it was interrupted, with no traceback
    finally:
        patch.undo()
    return SimpleNamespace(out=out, train_file=train_file, command=command)


def test_an_interrupted_transliteration_run_records_its_training_file(interrupted_transliteration, capsys):
    run = interrupted_transliteration
    state = json.loads((run.out / "training_state.json").read_text())
    assert state["epochs_done"] == 1 and state["train_file"] == str(run.train_file)
    no_train = [flag for flag in run.command if flag not in ("--train", str(run.train_file))]
    assert main(no_train) == 2  # resumed on the generated words, it used to train on, silently
    assert "was trained on" in capsys.readouterr().err
    assert main(["evaluate", "transliteration", "--model", str(run.out)]) == 2
    assert "Pass the test file with --test FILE" in capsys.readouterr().err


def test_a_damaged_transliteration_state_is_named(interrupted_transliteration, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(interrupted_transliteration.out, broken)
    (broken / "training_state.json").write_text('{"epochs_done": 1,')
    assert main(["evaluate", "transliteration", "--model", str(broken), "--test",
                 str(interrupted_transliteration.train_file)]) == 2
    assert str(broken / "training_state.json") in capsys.readouterr().err


def test_transliterate_refuses_an_empty_word_instead_of_dropping_it(interrupted_transliteration, capsys):
    # Dropped, the output had one line for three inputs: the lines no longer matched the words.
    assert main(["transliterate", "--model", str(interrupted_transliteration.out), "", "ab", "  "]) == 2
    assert "words [0, 2] (counting from 0) are empty or white space. Received: ['', 'ab', '  ']" in capsys.readouterr().err


def test_a_finished_transliteration_run_asked_for_fewer_epochs_is_left_alone(interrupted_transliteration, capsys):
    run = interrupted_transliteration
    assert main(run.command) == 0  # resumes, and finishes epoch 2
    before = (run.out / "training_state.json").read_text()
    capsys.readouterr()
    fewer = run.command + ["--epochs", "1"]  # the last --epochs counts
    assert main(fewer) == 0
    output = capsys.readouterr().out
    assert "Already trained for 2 epochs (asked 1); nothing to do" in output and "Trained" not in output
    assert (run.out / "training_state.json").read_text() == before


# -- captioning and documents: a replacement interrupted mid-save ---------------------------------------------------


def test_an_interrupted_captioning_save_leaves_the_earlier_run_whole(tmp_path):
    from course_lib.tasks.captioning.runs import save_run

    vocabulary = Vocabulary.from_texts(["a b"])
    earlier = SimpleNamespace(model=_tiny_model(1), vocabulary=vocabulary, settings={"decoder": "attention"},
                              history={})
    save_run(earlier, tmp_path)
    files = {name: (tmp_path / name).read_bytes() for name in ("model.keras", "vocabulary.json", "run.json")}
    broken = SimpleNamespace(save=_interrupt)
    later = SimpleNamespace(model=_tiny_model(3), vocabulary=broken, settings={"decoder": "option1"}, history={})
    with pytest.raises(KeyboardInterrupt):
        save_run(later, tmp_path)
    assert {name: (tmp_path / name).read_bytes() for name in files} == files  # not option 1's model, attention's run.json


def test_an_interrupted_documents_save_leaves_the_earlier_run_whole(tmp_path):
    from course_lib.tasks.documents.runs import save_trained

    def pipeline_writing(directory):
        (directory / "vocabulary.json").write_text("[]")
        (directory / "document_pipeline.json").write_text("{}")

    earlier = SimpleNamespace(model=_tiny_model(1), pipeline=SimpleNamespace(save=pipeline_writing),
                              settings={"encoder": "han"}, metrics={})
    save_trained(earlier, tmp_path)
    files = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    later = SimpleNamespace(model=_tiny_model(3), pipeline=SimpleNamespace(save=_interrupt),
                            settings={"encoder": "flat"}, metrics={})
    with pytest.raises(KeyboardInterrupt):
        save_trained(later, tmp_path)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == files


# -- reversal: a later run removes the earlier run's files it does not write ----------------------------------------


def test_reversal_with_metrics_elsewhere_removes_the_earlier_metrics(tmp_path, capsys):
    out, elsewhere = tmp_path / "rev", tmp_path / "elsewhere" / "m.json"
    assert main(["reversal", "--steps", "2", "--out", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["steps"] == 2
    elsewhere.parent.mkdir()
    elsewhere.write_text("{}")
    capsys.readouterr()
    assert main(["reversal", "--steps", "3", "--no-attention", "--out", str(out), "--metrics-json", str(elsewhere)]) == 0
    output = capsys.readouterr().out
    assert not (out / "metrics.json").exists() and not (out / "reversal_attention.png").exists()
    assert json.loads(elsewhere.read_text())["steps"] == 3
    assert f"replaced {elsewhere}" in output and f"Removed {out / 'metrics.json'}" in output


# -- output files: the right kind, never inside a run ---------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["evaluate", "translation", "--model", "m"],
    ["evaluate", "transliteration", "--model", "m"],
    ["evaluate", "captioning", "--model", "m"],
    ["evaluate", "documents", "--model", "m"],
    ["reversal", "--steps", "1"],
])
def test_metrics_json_must_be_a_json_file(command, tmp_path, capsys):
    notebook = tmp_path / "A3_transliteration.ipynb"
    notebook.write_text('{"cells": []}')
    with pytest.raises(SystemExit) as exit_info:
        main(command + ["--metrics-json", str(notebook)] + (["--out", str(tmp_path / "rev")]
                                                           if command[0] == "reversal" else []))
    assert exit_info.value.code == 2 and "ending in .json" in capsys.readouterr().err
    assert notebook.read_text() == '{"cells": []}'


@pytest.mark.parametrize("command, flag", [
    (["translate", "--model", "MODEL", "hello"], "--heatmap"),
    (["transliterate", "--model", "MODEL", "ghar"], "--heatmap"),
    (["caption", "--model", "MODEL", "image.png"], "--overlay"),
])
def test_heatmaps_are_not_written_into_a_run_folder(command, flag, tmp_path, capsys):
    run = tmp_path / "rev"
    run.mkdir()
    (run / "course_run.json").write_text(json.dumps({"task": "reversal"}))
    (run / "reversal_attention.png").write_bytes(b"the reversal run's heat map")
    command = [str(tmp_path / "model") if part == "MODEL" else part for part in command]
    assert main(command + [flag, str(run / "reversal_attention.png")]) == 2
    assert "holds a reversal run" in capsys.readouterr().err
    assert (run / "reversal_attention.png").read_bytes() == b"the reversal run's heat map"




def _commit_interrupted_after_the_journal(folder, monkeypatch, moves_before_interrupt=1):
    """Commits a.json = b.json = "1", then starts a commit of "2" that stops after the journal and
    `moves_before_interrupt` moved files: a committed checkpoint, left half in place."""
    with run_files.committing(folder) as staging:
        (staging / "a.json").write_text("1")
        (staging / "b.json").write_text("1")
    real_replace, moved = run_files.os.replace, []

    def replace_then_stop(source, target):
        real_replace(source, target)
        moved.append(target)
        if len(moved) == 1 + moves_before_interrupt:
            raise KeyboardInterrupt

    monkeypatch.setattr(run_files.os, "replace", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        with run_files.committing(folder) as staging:
            (staging / "a.json").write_text("2")
            (staging / "b.json").write_text("2")
    monkeypatch.undo()


def test_a_new_commit_first_finishes_the_one_an_interrupt_left_half_done(tmp_path, monkeypatch):
    # The next save must complete the committed checkpoint before it removes stale staging folders
    # and writes its own journal: otherwise b.json stays "1" beside a.json "2", silently.
    _commit_interrupted_after_the_journal(tmp_path, monkeypatch)
    assert (tmp_path / "a.json").read_text() == "2" and (tmp_path / "b.json").read_text() == "1"
    with run_files.committing(tmp_path) as staging:
        (staging / "metrics.json").write_text("3")
    assert [(tmp_path / name).read_text() for name in ("a.json", "b.json", "metrics.json")] == ["2", "2", "3"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "b.json", "metrics.json"]


def test_finishing_a_commit_never_removes_the_journal_of_a_later_one(tmp_path, monkeypatch):
    # Another process may finish commit 1 and commit 2 while this one is still finishing commit 1:
    # its last step must not delete commit 2's journal, the only record of the files still to move.
    _commit_interrupted_after_the_journal(tmp_path, monkeypatch, moves_before_interrupt=0)
    pending = (tmp_path / run_files.JOURNAL).read_text()
    run_files._apply(tmp_path, {"staging": ".staging-finished", "files": ["a.json"]}, '{"an": "earlier commit"}')
    assert (tmp_path / run_files.JOURNAL).read_text() == pending
    run_files.finish_commit(tmp_path)
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text() == "2"


def test_a_checkpoint_that_writes_a_file_it_removes_is_refused(tmp_path):
    with run_files.committing(tmp_path) as staging:
        (staging / "a.json").write_text("1")
    with pytest.raises(ValueError, match=r"both write and remove a file. Received: \['a.json'\]"):
        with run_files.committing(tmp_path, remove=["a.json", "old.png"]) as staging:
            (staging / "a.json").write_text("2")
    assert (tmp_path / "a.json").read_text() == "1"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json"]


def test_the_journal_is_on_the_disk_before_it_commits(tmp_path, monkeypatch):
    # After a power cut, a journal renamed into place but not flushed can be empty: the checkpoint
    # it committed would then be refused as damaged.
    import os

    events, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(descriptor):
        events.append(("sync", os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    def replace(source, target):
        events.append(("replace", os.fspath(source), os.fspath(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    with run_files.committing(tmp_path) as staging:
        (staging / "state.json").write_text("{}")
    monkeypatch.undo()
    pending, journal = os.fspath(tmp_path / (run_files.JOURNAL + ".tmp")), os.fspath(tmp_path / run_files.JOURNAL)
    commit = events.index(("replace", pending, journal))
    assert ("sync", pending) in events[:commit], events


def test_an_output_file_is_written_under_its_own_suffix(tmp_path):
    # matplotlib reads the format from the name it is given: a temporary name without the suffix
    # made `--heatmap map.pdf` a PNG named .pdf.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure()
    try:
        for name, magic in (("map.pdf", b"%PDF"), ("map.svg", b"<?xml")):
            run_files.write_output_file(tmp_path / name, lambda temporary: figure.savefig(temporary))
            assert (tmp_path / name).read_bytes().startswith(magic), name
    finally:
        plt.close(figure)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["map.pdf", "map.svg"]


def test_a_failed_output_write_leaves_the_earlier_file_and_nothing_else(tmp_path):
    path = tmp_path / "m.json"
    run_files.write_json_file(path, {"bleu": 1})

    def half_then_fail(temporary):
        with open(temporary, "w") as handle:
            handle.write('{"bl')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_files.write_output_file(path, half_then_fail)
    assert json.loads(path.read_text()) == {"bleu": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_a_journal_whose_files_are_not_a_list_is_named_as_damaged(tmp_path):
    (tmp_path / run_files.JOURNAL).write_text(json.dumps({"staging": ".staging-x", "files": 3}))
    with pytest.raises(ValueError, match=r"\.commit\.json' is damaged \(no staging folder or files\)"):
        run_files.finish_commit(tmp_path)
