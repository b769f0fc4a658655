"""`course-lib train/evaluate documents` and `course-lib classify`, end to end on tiny data."""

import json

import numpy as np
import pytest

from course_lib.cli import main

SPORT = ["The team won the match.", "The coach praised the striker.", "A late goal won the cup."]
BUSINESS = ["Shares rose at the bank.", "The firm reported a profit.", "Investors bought more stock."]


def write_csv(path, count=40, seed=0):
    rng = np.random.default_rng(seed)
    rows = ["label,text"]
    for i in range(count):
        label = ("sport", "business")[i % 2]
        pool = SPORT if label == "sport" else BUSINESS
        text = " ".join(rng.choice(pool, size=2, replace=False)) + f" It was day {i}."  # 40 distinct texts
        rows.append(f'{label},"{text}"')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    """A model trained on a small CSV (the tests below only read its folder)."""
    folder = tmp_path_factory.mktemp("csv_run")
    data, out = folder / "docs.csv", folder / "model"
    write_csv(data)
    assert main(["train", "documents", "--data", str(data), "--epochs", "2", "--out", str(out)]) == 0
    return data, out


def test_train_evaluate_classify_on_csv(csv_run, tmp_path, capsys):
    data, out = csv_run
    for name in ("model.keras", "vocabulary.json", "document_pipeline.json", "training.json"):
        assert (out / name).exists(), name
    metrics_path = tmp_path / "metrics.json"
    assert main(["evaluate", "documents", "--model", str(out), "--data", str(data),
                 "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    # The test part of the training split: 20 % of each class, more where near-copies ("It was day 3." /
    # "It was day 7." after the same two sentences) are kept together in one part.
    from course_lib.tasks.documents import load_splits

    assert metrics["documents"] == len(load_splits(str(data), seed=0)["test"]) >= 8
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert "macro_f1" in metrics and "planted_sentence_top1" not in metrics
    note = tmp_path / "note.txt"
    note.write_bytes("The striker scored a goal. Caf\xe9 owners cheered.".encode("latin-1"))
    capsys.readouterr()
    assert main(["classify", "--model", str(out), str(note)]) == 0
    output = capsys.readouterr().out
    assert "not valid UTF-8, read as Windows-1252 (or Latin-1" in output and ("sport" in output or "business" in output)


def test_generated_data_reports_planted_sentence_top1(tmp_path, capsys):
    out = tmp_path / "generated"
    for _ in range(2):  # the second run replaces the first: it used to say nothing
        assert main(["train", "documents", "--sizes", "64,16,32", "--epochs", "1", "--encoder", "flat",
                     "--out", str(out)]) == 0
    output = capsys.readouterr().out
    assert output.count("holds an earlier documents run; its files are replaced by this one's") == 1
    assert '"planted_documents": 32' in output  # planted top-1 says how many documents it covers
    metrics_path = tmp_path / "m.json"
    assert main(["evaluate", "documents", "--model", str(out), "--metrics-json", str(metrics_path)]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    metrics = json.loads(metrics_path.read_text())
    # The generated documents' limit (8 sentences) keeps every planted sentence: all 32 scored.
    assert metrics["documents"] == 32 and 0.0 <= metrics["planted_sentence_top1"] <= 1.0
    assert metrics["planted_documents"] == printed["planted_documents"] == 32


def test_clear_errors(tmp_path, capsys):
    assert main(["evaluate", "documents", "--model", str(tmp_path / "none")]) == 2
    assert "model.keras missing" in capsys.readouterr().err
    assert main(["train", "documents", "--data", str(tmp_path / "nothing.csv"), "--out", str(tmp_path)]) == 2
    assert main(["train", "documents", "--sizes", "1,2", "--out", str(tmp_path)]) == 2
    assert "--sizes" in capsys.readouterr().err


def test_a_csv_of_one_class_is_refused_by_name(tmp_path, capsys):
    one = tmp_path / "one.csv"  # the model's `num_classes` check used to be the first to say so
    one.write_text("label,text\n" + "".join(f'sport,"The team won match {i}."\n' for i in range(20)), encoding="utf-8")
    assert main(["train", "documents", "--data", str(one), "--out", str(tmp_path / "m")]) == 2
    assert f"at least two classes. Received: {str(one)!r} with the classes ['sport']" in capsys.readouterr().err


def test_sizes_are_refused_for_real_data(tmp_path, capsys):
    # `--sizes` sets how many documents are generated; with a CSV it was ignored yet saved in training.json.
    data = tmp_path / "docs.csv"
    write_csv(data)
    out = tmp_path / "model"
    assert main(["train", "documents", "--data", str(data), "--sizes", "5,5,5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--sizes" in err and "Received: sizes=(5, 5, 5) with --data" in err and "docs.csv" in err
    assert not (out / "training.json").exists()


def test_tiny_csv_and_empty_file_give_clear_errors(csv_run, tmp_path, capsys):
    _, out = csv_run
    tiny = tmp_path / "tiny.csv"  # one document per class: the test part is empty
    tiny.write_text('label,text\nsport,"The team won the match."\nbusiness,"Shares rose at the bank."\n',
                    encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", "documents", "--model", str(out), "--data", str(tiny)]) == 2
    err = capsys.readouterr().err
    assert "test part of the data is empty" in err and "tiny.csv" in err and "test=0" in err
    assert main(["evaluate", "documents", "--model", str(out), "--data", str(tiny), "--split", "all"]) == 0
    assert main(["train", "documents", "--data", str(tiny), "--out", str(tmp_path / "m2")]) == 2
    assert "valid and test part of the data is empty" in capsys.readouterr().err
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    assert main(["classify", "--model", str(out), str(empty)]) == 2
    assert "the file is empty" in capsys.readouterr().err
    wordless = tmp_path / "punctuation.txt"  # not empty, but no word to read: no class to give
    wordless.write_text("!!! ... ???\n", encoding="utf-8")
    with pytest.warns(UserWarning):  # the pipeline's own report of an empty document
        assert main(["classify", "--model", str(out), str(wordless)]) == 2
    assert "no word of these files is in the model's vocabulary" in capsys.readouterr().err
    unknown = tmp_path / "unknown.txt"  # words, none of them known: the class would be the model's guess at nothing
    unknown.write_text("Zyxwv qwertz plonk.\n", encoding="utf-8")
    assert main(["classify", "--model", str(out), str(unknown)]) == 2
    assert f"no word of these files is in the model's vocabulary (another language, or no words at all). " \
           f"Received: [{str(unknown)!r}]" in capsys.readouterr().err
    binary = tmp_path / "program.txt"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00 sport match team")
    assert main(["classify", "--model", str(out), str(binary)]) == 2
    assert "holds NUL bytes, so it is not text" in capsys.readouterr().err


def test_classify_with_the_plain_encoder_names_no_sentence(tmp_path, capsys):
    out = tmp_path / "plain"
    assert main(["train", "documents", "--sizes", "64,16,32", "--epochs", "1", "--encoder", "plain",
                 "--out", str(out)]) == 0
    note = tmp_path / "note.txt"
    note.write_text("The striker scored a goal. The crowd cheered.")
    capsys.readouterr()
    assert main(["classify", "--model", str(out), str(note)]) == 0
    assert "most attended sentence: none (this encoder has no sentence attention)" in capsys.readouterr().out
