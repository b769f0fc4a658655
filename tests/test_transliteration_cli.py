"""`course-lib train/evaluate transliteration` and `course-lib transliterate` on a tiny run."""

import json
import warnings

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


def _tsv(path, pairs):
    path.write_text("".join(f"{native}\t{roman}\t1\n" for roman, native in pairs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def other_letters(files, tmp_path_factory):
    """Tiny runs: one on `files["train"]` (the generated words), two on a .tsv of 5 roman letters (k, m, l, n, a)."""
    import itertools

    from course_lib.data.transliteration_words import transliterate

    folder = tmp_path_factory.mktemp("other_letters")
    romans = ["".join(letters) for letters in itertools.product("kmln", "a", "kmln", "a")]
    five_letters = _tsv(folder / "five_letters.tsv", [(roman, transliterate(roman)) for roman in romans])
    short = ["".join(letters) for letters in itertools.product("kmln", "a", "kmln")]
    five_letters_test = _tsv(folder / "five_letters_test.tsv", [(roman, transliterate(roman)) for roman in short])
    tiny = ["--units", "8", "--embedding-dim", "4", "--batch-size", "32", "--epochs", "1"]
    runs = {"five_letters": five_letters, "five_letters_test": five_letters_test}
    for name, train_file, flags in (("forward", files["train"], []), ("other_forward", five_letters, []),
                                    ("other_backwards", five_letters, ["--right-to-left"])):
        runs[name] = folder / name
        assert main(["train", "transliteration", "--train", str(train_file), "--out", str(runs[name])]
                    + tiny + flags) == 0
    return runs


def test_a_reranker_or_member_trained_on_other_letters_is_refused(files, other_letters, capsys):
    forward, backwards = str(other_letters["forward"]), str(other_letters["other_backwards"])
    capsys.readouterr()
    # Most candidate letters used to be <unk> to the reranker, and the metrics printed as usual.
    assert main(["evaluate", "transliteration", "--model", forward, "--test", str(files["test"]), "--beam", "3",
                 "--rerank-with", backwards]) == 2
    err = capsys.readouterr().err
    assert "A reranker must know the letters of the model whose candidates it scores" in err, err
    assert f"Received: --rerank-with {backwards!r} lacks " in err and f" roman letters of --model {forward!r} (" in err
    assert f" Devanagari letters of --model {forward!r} (" in err
    # An ensemble member says what differs too.
    assert main(["evaluate", "transliteration", "--model", forward, "--model", str(other_letters["other_forward"]),
                 "--test", str(files["test"])]) == 2
    err = capsys.readouterr().err
    assert "same vocabularies" in err and "source letters: " in err and "target letters: " in err, err
    assert f"only in {forward!r}" in err


def test_a_folder_given_twice_is_refused(files, other_letters, capsys):
    forward, backwards = other_letters["forward"], str(other_letters["other_backwards"])
    capsys.readouterr()
    # It used to count twice: an ensemble of 3 (and a weight of 1/3 per vote) from two models.
    again = forward.parent / ".." / forward.parent.name / forward.name  # the same folder, written otherwise
    assert main(["evaluate", "transliteration", "--model", str(forward), "--model", str(again),
                 "--test", str(files["test"])]) == 2
    err = capsys.readouterr().err
    assert f"{str(again)!r} is given twice (the same folder as {str(forward)!r})" in err, err
    assert f"Received: --model {str(forward)!r} --model {str(again)!r}" in err
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(files["test"]), "--beam", "3",
                 "--rerank-with", backwards, "--rerank-with", backwards]) == 2
    assert f"Received: --rerank-with {backwards!r} --rerank-with {backwards!r}" in capsys.readouterr().err


def test_the_rerank_weight_has_an_upper_bound(capsys):
    # 1e308 made every combined score overflow to -inf (a RuntimeWarning, then an arbitrary order).
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "transliteration", "--model", "unused", "--beam", "3", "--rerank-with", "unused",
              "--rerank-weight", "1e308"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --rerank-weight: expected a number from 0 to 1,000,000" in err and "received '1e308'" in err, err
    from course_lib.tasks.transliteration.cli import rerank_weight

    assert rerank_weight("1e6") == 1e6 and rerank_weight("0") == 0.0


def test_scoring_on_the_training_file_warns(files, other_letters, capsys):
    forward = str(other_letters["forward"])
    with pytest.warns(UserWarning, match=r"--test .*train\.csv' is the file the model was trained on \(.*\): the "
                                         r"figures measure memorisation by .*forward'"):
        assert main(["evaluate", "transliteration", "--model", forward, "--test", str(files["train"])]) == 0
    # Validating on the training file likewise (here the run is trained already: nothing else happens).
    with pytest.warns(UserWarning, match=r"--valid .*train\.csv' is the file the model was trained on \(.*\): the "
                                         r"validation figures measure memorisation"):
        assert main(["train", "transliteration", "--train", str(files["train"]), "--valid", str(files["train"]),
                     "--epochs", "1", "--out", forward]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_test_words_in_other_letters_warn(files, other_letters):
    # The generated test words hold many letters besides k, m, l, n and a: CER 1.0 used to print silently.
    with pytest.warns(UserWarning, match=r"[\d.]+% of the test words' letters are not in the model's alphabet"):
        assert main(["evaluate", "transliteration", "--model", str(other_letters["other_forward"]),
                     "--test", str(files["test"])]) == 0
    with warnings.catch_warnings(record=True) as caught:  # the model's own kind of words: no warning
        warnings.simplefilter("always")
        assert main(["evaluate", "transliteration", "--model", str(other_letters["other_forward"]),
                     "--test", str(other_letters["five_letters_test"])]) == 0
    assert not [w for w in caught if "alphabet" in str(w.message)], [str(w.message) for w in caught]
