"""Exporting a SavedModel never writes into a run folder or over an earlier export without being asked."""

import json
from pathlib import Path

import keras
import pytest

from course_lib.tasks import serving

pytestmark = pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="SavedModel export is TensorFlow's")


@pytest.fixture(scope="module")
def tiny():
    """A small untrained character-level model and its vocabularies (export is all that is tested)."""
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.text.vocabulary import Vocabulary

    source_vocab = Vocabulary.from_texts(["india", "ghar"], level="char", lowercase=True)
    target_vocab = Vocabulary.from_texts(["इंडिया", "घर"], level="char")
    model = Seq2Seq(len(source_vocab), len(target_vocab), embedding_dim=4, units=4, max_output_length=4)
    model.build()
    return model, source_vocab, target_vocab


def _listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_export_refuses_a_run_folder(tiny, tmp_path):
    # Exporting into a translation run mixed saved_model.pb and variables/ with model.keras and state.json.
    run = tmp_path / "run"
    run.mkdir()
    (run / "course_run.json").write_text(json.dumps({"task": "translation"}))
    (run / "model.keras").write_text("a model")
    (run / "state.json").write_text("{}")
    before = _listing(run)
    for overwrite in (False, True):
        with pytest.raises(ValueError, match=f"'{run}' holds a course run.*Received: path='{run}'"):
            serving.export_serving(*tiny, run, overwrite=overwrite)
    assert _listing(run) == before


def test_a_second_export_over_the_first_needs_overwrite(tiny, tmp_path):
    target = tmp_path / "savedmodel"
    serving.export_serving(*tiny, target)
    first = (target / "saved_model.pb").read_bytes()
    with pytest.raises(ValueError, match=f"'{target}' is not empty.*saved_model.pb.*overwrite=True"):
        serving.export_serving(*tiny, target)
    assert (target / "saved_model.pb").read_bytes() == first
    serving.export_serving(*tiny, target, overwrite=True)  # asked for: replaced
    [output] = serving.load_serving(target)(["ghar"])
    assert isinstance(output, str)


def test_export_refuses_other_non_empty_folders_and_files(tiny, tmp_path):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me")
    with pytest.raises(ValueError, match=f"'{other}' is not empty \\(todo.txt\\)"):
        serving.export_serving(*tiny, other)
    assert _listing(other) == ["todo.txt"]
    a_file = tmp_path / "model.savedmodel"
    a_file.write_text("not a folder")
    with pytest.raises(ValueError, match="is a file"):
        serving.export_serving(*tiny, a_file)
    empty = tmp_path / "empty"
    empty.mkdir()
    serving.export_serving(*tiny, empty)  # an empty folder is fine
    assert (empty / "saved_model.pb").is_file()


def test_overwrite_replaces_only_an_earlier_export_and_replaces_it_whole(tiny, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me")
    with pytest.raises(ValueError, match=f"'{notes}' is not empty \\(todo.txt\\) and holds no earlier export"):
        serving.export_serving(*tiny, notes, overwrite=True)  # it would have been deleted
    assert (notes / "todo.txt").read_text() == "keep me"
    target = tmp_path / "savedmodel"
    serving.export_serving(*tiny, target)
    (target / "stale.txt").write_text("from the earlier export")
    serving.export_serving(*tiny, target, overwrite=True)
    assert not (target / "stale.txt").exists() and (target / "saved_model.pb").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes", "savedmodel"]  # nothing left beside it


def test_a_failed_export_leaves_the_earlier_one_as_it_was(tiny, tmp_path, monkeypatch):
    import tensorflow as tf

    target = tmp_path / "savedmodel"
    serving.export_serving(*tiny, target)
    before = {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()}
    save = tf.saved_model.save

    def fails_half_way(module, export_dir, **kwargs):
        save(module, export_dir, **kwargs)
        (Path(export_dir) / "saved_model.pb").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(tf.saved_model, "save", fails_half_way)
    with pytest.raises(KeyboardInterrupt):
        serving.export_serving(*tiny, target, overwrite=True)
    assert {str(p.relative_to(target)): p.read_bytes() for p in target.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["savedmodel"]


def test_overwrite_never_replaces_an_unmarked_run_that_an_earlier_version_exported_into(tiny, tmp_path):
    # Runs saved before course_run.json existed are known by their .keras model; an earlier version
    # exported into them, so saved_model.pb may sit beside it. overwrite=True must not delete the model.
    run = tmp_path / "old-run"
    run.mkdir()
    for name in ("model.keras", "state.json", "saved_model.pb"):
        (run / name).write_text(name)
    before = _listing(run)
    with pytest.raises(ValueError, match=r"holds a course run \(model.keras\)"):
        serving.export_serving(*tiny, run, overwrite=True)
    assert _listing(run) == before
