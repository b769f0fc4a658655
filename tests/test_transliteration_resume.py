"""Resuming `course-lib train transliteration`: the run's saved settings win over the profile.

A resumed run starts from the config saved with it and applies only the flags
given on the command line; flags that contradict the saved model or its data
are refused, and the state file never describes another model than the saved
one. Also: `transliterate --heatmap` refuses the run's plain model, which has no attention to draw.

One tiny run serves every test (two training calls in all): its first epoch
is trained with `pick` (the profile's sizes) patched so the generated word set
has 160 training words, as if trained under a profile other than the one the
resume runs under (the tests' `fast` profile, 2,000 words).
"""

import contextlib
import io
import json
import shutil

import pytest

import course_lib.tasks.transliteration as task
import course_lib.tasks.transliteration.config as task_config
from course_lib.cli import main
from course_lib.data.transliteration_words import generate_pairs, splits

TINY_SIZES = {2000: 160, 300: 12}  # the fast profile's train, and valid / test, word counts -> tiny ones
FIRST_RUN = ["--no-attention", "--units", "8", "--embedding-dim", "4"]


def _tiny_pick(fast, full, profile=None):
    return TINY_SIZES.get(fast, fast)


def _state(out):
    return json.loads((out / "training_state.json").read_text())


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """A `--no-attention --units 8 --embedding-dim 4` run on the tiny set, resumed with `--epochs 2` alone."""
    out = tmp_path_factory.mktemp("resume") / "run"
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(task_config, "pick", _tiny_pick)
        assert main(["train", "transliteration", "--epochs", "1", "--out", str(out)] + FIRST_RUN) == 0
    first = _state(out)
    captured = io.StringIO()
    with pytest.MonkeyPatch.context() as patched, contextlib.redirect_stdout(captured):
        patched.setenv("COURSE_PROFILE", "fast")  # the resume runs under the ordinary fast profile
        code = main(["train", "transliteration", "--epochs", "2", "--out", str(out)])
    return {"out": out, "first": first, "code": code, "output": captured.getvalue()}


def test_resume_keeps_the_saved_data_and_architecture_not_the_profiles(resumed, tmp_path):
    out, first = resumed["out"], resumed["first"]["config"]
    assert first["train_words"] == 160 and first["units"] == 8 and first["attention"] is False
    assert resumed["code"] == 0
    # The saved run's 160 words, not the fast profile's 2000.
    assert "Training on 160 pairs" in resumed["output"] and "Resuming" in resumed["output"]
    state = _state(out)
    assert state["epochs_done"] == 2
    # Attention off, 8 units, embedding 4, the tiny word set: only the flag given (--epochs) changed.
    assert state["config"] == {**first, "epochs": 2}
    model = task.load_run(out)[0]
    assert (model.units, model.embedding_dim, model.attention) == (8, 4, False)

    # evaluate scores the run's own test words, none of which it trained on.
    metrics_path = tmp_path / "metrics.json"
    assert main(["evaluate", "transliteration", "--model", str(out), "--metrics-json", str(metrics_path)]) == 0
    train_pairs, _, test_pairs = splits(160, 12, 12, seed=0)
    assert json.loads(metrics_path.read_text())["words"] == len({p.roman for p in test_pairs})
    assert not {p.roman for p in test_pairs} & {p.roman for p in train_pairs}


def test_resume_refuses_flags_that_contradict_the_run(resumed, capsys):
    run = resumed["out"]
    before = _state(run)
    for flags, message in (
        (["--batch-size", "32"], "trained with batch_size=64; resuming it keeps the saved model and optimizer"),
        (["--model-seed", "3"], "came from seed 0"),
        (["--units", "8", "--embedding-dim", "6"], "trained with embedding_dim=4"),
    ):
        capsys.readouterr()
        assert main(["train", "transliteration", "--epochs", "3", "--out", str(run)] + flags) == 2, flags
        err = capsys.readouterr().err
        assert err.startswith("course-lib: error:") and message in err, (flags, err)
        assert _state(run) == before  # nothing trained, nothing recorded


def test_resume_refuses_another_training_file(resumed, tmp_path, capsys):
    pairs = generate_pairs(100, seed=5)
    first, other = tmp_path / "first.csv", tmp_path / "other.csv"
    first.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs[:60]), encoding="utf-8")
    other.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs[60:]), encoding="utf-8")
    # A run recorded as trained on first.csv (the refusal comes before any training).
    out = tmp_path / "file_run"
    shutil.copytree(resumed["out"], out)
    state = _state(out)
    state["train_file"] = str(first)
    (out / "training_state.json").write_text(json.dumps(state))
    capsys.readouterr()
    assert main(["train", "transliteration", "--train", str(other), "--epochs", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "was trained on" in err and "first.csv" in err and "other.csv" in err
    assert _state(out) == state


def test_train_refuses_a_config_that_does_not_describe_the_saved_model(resumed):
    run = resumed["out"]
    before = _state(run)
    config = task.TransliterationConfig(**before["config"])
    config.units, config.epochs = 12, 3
    train_pairs, _, _ = task.generated_splits(config)
    with pytest.raises(ValueError, match=r"holds a model with units=8.*Received: units=12"):
        task.train(config, train_pairs, out_dir=run, verbose=0)
    assert _state(run) == before


def test_heatmap_of_a_plain_model_is_refused(resumed, tmp_path, capsys):
    # It used to be saved, all zeros (the folder is made for an attentional model: test_transliteration_cli).
    image = tmp_path / "new" / "folder" / "heat.png"
    capsys.readouterr()
    assert main(["transliterate", "--model", str(resumed["out"]), "--heatmap", str(image), "ghar"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("course-lib: error:") and len(captured.err.strip().splitlines()) == 1
    assert "plain encoder-decoder (trained with --no-attention), which has no attention to draw; leave out " \
           f"--heatmap. Received: --heatmap {str(image)!r}" in captured.err
    assert captured.out == "" and not (tmp_path / "new").exists()  # refused before decoding
    assert main(["transliterate", "--model", str(resumed["out"]), "ghar"]) == 0
    # The library refuses it too: `heatmap_examples` used to return the all-zero alignments to draw.
    model, source_vocab, target_vocab, _ = task.load_run(resumed["out"])
    decoded = task.transliterate_words(model, source_vocab, target_vocab, ["ghar"])
    assert decoded["attention"] is False
    with pytest.raises(ValueError, match=r"decoded by a plain encoder-decoder \(attention=False\), which has no "
                                         r"attention to draw.*Received: decoded\['attention'\]=False"):
        task.heatmap_examples(["ghar"], decoded, target_vocab)


def test_a_folder_without_its_model_starts_a_new_run(resumed, tmp_path):
    """Only a saved model is resumed: a progress file left behind binds neither flags nor data."""
    pairs = generate_pairs(100, seed=5)
    words = tmp_path / "words.csv"
    words.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs), encoding="utf-8")
    out = tmp_path / "model_removed"
    shutil.copytree(resumed["out"], out)
    (out / task.MODEL_FILE).unlink()
    assert main(["train", "transliteration", "--train", str(words), "--units", "12", "--epochs", "1",
                 "--out", str(out)]) == 0
    state = _state(out)
    assert state["config"]["units"] == 12 and state["train_file"] == str(words) and state["epochs_done"] == 1
    assert task.load_run(out)[0].units == 12
