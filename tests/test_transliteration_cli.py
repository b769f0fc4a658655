"""`course-lib train/evaluate transliteration` and `course-lib transliterate` on a tiny run."""

import json

import numpy as np
import pytest

from course_lib.cli import main
from course_lib.data.transliteration_words import generate_pairs


def _csv(path, pairs):
    path.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("translit")
    pairs = generate_pairs(120, seed=5)
    return {
        "train": _csv(folder / "train.csv", pairs[:96]),
        "valid": _csv(folder / "valid.csv", pairs[96:108]),
        "test": _csv(folder / "test.csv", pairs[108:]),
        "out": folder / "model",
    }


def test_train_resume_evaluate_transliterate(files, capsys, tmp_path):
    tiny = ["--units", "16", "--embedding-dim", "8", "--batch-size", "32"]
    common = ["train", "transliteration", "--train", str(files["train"]), "--valid", str(files["valid"]),
              "--out", str(files["out"])] + tiny
    assert main(common + ["--epochs", "1"]) == 0
    state = json.loads((files["out"] / "training_state.json").read_text())
    assert state["epochs_done"] == 1
    # A second call continues from the checkpoint instead of starting again.
    assert main(common + ["--epochs", "2"]) == 0
    output = capsys.readouterr().out
    assert "Resuming" in output and "after epoch 1" in output
    assert json.loads((files["out"] / "training_state.json").read_text())["epochs_done"] == 2

    metrics_path = tmp_path / "metrics.json"
    assert main(["evaluate", "transliteration", "--model", str(files["out"]), "--test", str(files["test"]),
                 "--beam", "2", "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    assert set(metrics) >= {"word_accuracy", "top_k_accuracy", "cer"}
    assert 0.0 <= metrics["word_accuracy"] <= metrics["top_k_accuracy"] <= 1.0
    assert metrics["cer"] > 0 and metrics["words"] == 12
    assert metrics["length_penalty"] == 1.0  # what the beam ranked by
    # Greedy decoding has no hypotheses to rank: a length penalty used to be accepted and ignored.
    capsys.readouterr()
    assert main(["evaluate", "transliteration", "--model", str(files["out"]), "--test", str(files["test"]),
                 "--beam", "1", "--length-penalty", "5", "--metrics-json", str(metrics_path)]) == 2
    assert "greedy decoding would ignore it. Use --beam 2 or more. Received: --length-penalty 5.0 --beam 1" \
        in capsys.readouterr().err
    assert main(["evaluate", "transliteration", "--model", str(files["out"]), "--test", str(files["test"]),
                 "--beam", "2", "--length-penalty", "0.5", "--metrics-json", str(metrics_path)]) == 0
    assert json.loads(metrics_path.read_text())["length_penalty"] == 0.5
    assert main(["evaluate", "transliteration", "--model", str(files["out"]), "--test", str(files["test"]),
                 "--metrics-json", str(metrics_path)]) == 0
    assert "length_penalty" not in json.loads(metrics_path.read_text())  # greedy: none was used

    image = tmp_path / "new" / "folder" / "heat.png"  # the folder is made, as `translate --heatmap` does
    assert main(["transliterate", "--model", str(files["out"]), "--heatmap", str(image), "ghar", "kamal"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-3].startswith("ghar\t") and lines[-2].startswith("kamal\t")
    assert image.stat().st_size > 1000
    # Letters the model never saw (here Devanagari given to a roman-native model) are refused, not guessed.
    assert main(["transliterate", "--model", str(files["out"]), "ghar", "घर"]) == 2
    assert "'घर' with 'घर'" in capsys.readouterr().err

    # A resumed run keeps its saved sizes and optimizer: other values are refused, not silently ignored
    # (the run would also have recorded them as its own).
    assert main(common + ["--epochs", "3", "--units", "32", "--no-attention"]) == 2
    err = capsys.readouterr().err
    assert "trained with units=16, attention=True" in err and "Received: units=32, attention=False" in err
    assert json.loads((files["out"] / "training_state.json").read_text())["config"]["units"] == 16


def test_clear_errors(files, capsys, tmp_path):
    assert main(["evaluate", "transliteration", "--model", str(tmp_path / "none")]) == 2
    assert "No trained transliteration model" in capsys.readouterr().err
    wrong = tmp_path / "words.txt"
    wrong.write_text("ghar घर\n", encoding="utf-8")
    assert main(["train", "transliteration", "--train", str(wrong), "--out", str(tmp_path / "m")]) == 2
    assert "must be Aksharantar" in capsys.readouterr().err


def test_members_with_other_seeds_evaluate_as_an_ensemble(files, capsys, tmp_path):
    from course_lib.tasks.transliteration import load_run

    tiny = ["--units", "16", "--embedding-dim", "8", "--batch-size", "32", "--epochs", "1"]
    members = []
    for seed, train_file in ((0, files["train"]), (7, files["train"]), (0, files["valid"])):
        out = tmp_path / f"member_{seed}_{train_file.stem}"
        assert main(["train", "transliteration", "--train", str(train_file), "--out", str(out),
                     "--model-seed", str(seed)] + tiny) == 0
        members.append(out)
    first, second = (load_run(m)[0] for m in members[:2])
    # Same data, another seed: other initial weights.
    assert any(not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(first.weights, second.weights))

    metrics_path = tmp_path / "ensemble.json"
    assert main(["evaluate", "transliteration", "--model", str(members[0]), "--model", str(members[1]),
                 "--test", str(files["test"]), "--beam", "2", "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    assert metrics["models"] == [str(members[0]), str(members[1])]
    assert 0.0 <= metrics["word_accuracy"] <= metrics["top_k_accuracy"] <= 1.0 and metrics["words"] == 12
    capsys.readouterr()
    # A member trained on another file has another vocabulary: refused, not mixed up.
    assert main(["evaluate", "transliteration", "--model", str(members[0]), "--model", str(members[2]),
                 "--test", str(files["test"])]) == 2
    assert "same vocabularies" in capsys.readouterr().err


def test_resume_refuses_to_switch_from_a_file_to_the_generated_words(files, capsys, tmp_path):
    out = tmp_path / "run"
    tiny = ["--units", "8", "--embedding-dim", "8", "--batch-size", "32", "--out", str(out)]
    assert main(["train", "transliteration", "--train", str(files["train"]), "--epochs", "1"] + tiny) == 0
    capsys.readouterr()
    assert main(["train", "transliteration", "--epochs", "2"] + tiny) == 2
    err = capsys.readouterr().err
    assert "was trained on" in err and "train.csv" in err and "--train None" in err
    assert json.loads((out / "training_state.json").read_text())["epochs_done"] == 1
    # Nor may it be scored on the generated test words, which say nothing about it.
    assert main(["evaluate", "transliteration", "--model", str(out)]) == 2
    assert "pass the test file with --test" in capsys.readouterr().err.lower()


def test_typed_generated_words_are_kept_when_a_run_resumes(files, capsys, tmp_path):
    out = tmp_path / "typed"
    tiny = ["--units", "8", "--embedding-dim", "8", "--batch-size", "64", "--out", str(out)]
    assert main(["train", "transliteration", "--drop-vowel-length", "0.5", "--epochs", "1"] + tiny) == 0
    # Resumed without the flag: the same typed words, not the exact ones.
    assert main(["train", "transliteration", "--epochs", "2"] + tiny) == 0
    state = json.loads((out / "training_state.json").read_text())
    assert state["epochs_done"] == 2 and state["config"]["drop_vowel_length"] == 0.5
    capsys.readouterr()
    assert main(["train", "transliteration", "--drop-vowel-length", "0.2", "--epochs", "3"] + tiny) == 2
    assert "trained with --drop-vowel-length 0.5" in capsys.readouterr().err
    assert json.loads((out / "training_state.json").read_text())["epochs_done"] == 2
    # A file's words are used as they are typed.
    assert main(["train", "transliteration", "--train", str(files["train"]), "--drop-vowel-length", "0.5",
                 "--out", str(tmp_path / "file_run")]) == 2
    assert "generated words only" in capsys.readouterr().err
    metrics_path = tmp_path / "typed.json"
    assert main(["evaluate", "transliteration", "--model", str(out), "--metrics-json", str(metrics_path)]) == 0
    assert json.loads(metrics_path.read_text())["test_file"] == "generated test set"
