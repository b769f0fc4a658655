"""Translation task: training with resume, save/load, SavedModel export, evaluation, CLI."""

import json

import keras
import numpy as np
import pytest

from course_lib.data import hindi_english
from course_lib.tasks import serving
from course_lib.tasks import translation as task

TINY = dict(embedding_dim=8, units=16, attention_units=16, batch_size=32, max_train=256, epochs=1)


@pytest.fixture(scope="module")
def parts():
    return hindi_english.load_corpus(seed=0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, parts):
    """A tiny en-hi model trained for one epoch, then resumed to two."""
    out = tmp_path_factory.mktemp("en-hi")
    config = task.TranslationConfig.for_profile(direction="en-hi", **TINY)
    first, _ = task.train(config, parts["train"], parts["valid"][:64], out_dir=out, verbose=0)
    assert first.epochs_done == 1
    config.epochs = 2
    resumed, _ = task.train(config, parts["train"], parts["valid"][:64], out_dir=out, verbose=0)
    return out, resumed


def test_checkpoint_and_resume(trained):
    out, translator = trained
    for name in ("model.keras", "source_vocab.json", "target_vocab.json", "state.json"):
        assert (out / name).exists(), name
    state = json.loads((out / "state.json").read_text())
    assert state["epochs_done"] == 2 and [h["epoch"] for h in state["history"]] == [1, 2]
    assert state["history"][1]["loss"] < state["history"][0]["loss"]  # it kept learning after resuming
    again, seconds = task.train(task.TranslationConfig.for_profile(direction="en-hi", **{**TINY, "epochs": 2}),
                                [hindi_english.generate_pairs()[0]], out_dir=out, verbose=0)
    assert seconds == 0.0 and again.epochs_done == 2  # nothing left to do


def test_resume_refuses_other_direction(trained):
    out, _ = trained
    config = task.TranslationConfig.for_profile(direction="hi-en", **{**TINY, "epochs": 3})
    with pytest.raises(ValueError, match="en-hi model"):
        task.train(config, hindi_english.generate_pairs()[:10], out_dir=out, verbose=0)


@pytest.mark.parametrize("setting, value", [("seed", 1), ("max_train", 128), ("max_train", None), ("batch_size", 16),
                                            ("supervised_pairs", 10)])
def test_resume_refuses_settings_that_change_the_data(trained, setting, value):
    # Another seed re-split the generated corpus (the run trained on its own test pairs); the others chose other
    # pairs or steps. All used to be accepted.
    out, _ = trained
    before = (out / "state.json").read_text()
    config = task.TranslationConfig.for_profile(direction="en-hi", **{**TINY, "epochs": 3})
    setattr(config, setting, value)  # max_train=None: every pair (`for_profile` would read it as "the profile's")
    if setting == "supervised_pairs":
        config.alignment_loss_weight = 1.0  # what supervised_pairs needs, so the config itself passes its check
    saved = {**TINY, "seed": 0, "supervised_pairs": None}[setting]
    with pytest.raises(ValueError, match=rf"trained with {setting}={saved}; resuming it needs the same data and "
                                         rf"batches.*Received: {setting}={value}"):  # None too: every pair
        task.train(config, out_dir=out, verbose=0)
    assert (out / "state.json").read_text() == before


def test_the_cli_refuses_other_data_settings_before_it_starts(trained, tmp_path, capsys):
    # seed, max_train, batch_size and supervised_pairs are checked by the same function as `train` uses, before
    # the "Training translation ..." line and before anything is written, train_data.json included (a run made
    # from Python has none yet).
    import shutil

    from course_lib.cli import main

    out = tmp_path / "copy"
    shutil.copytree(trained[0], out)
    before = (out / "state.json").read_text()
    assert main(["train", "translation", "--direction", "en-hi", "--epochs", "3", "--seed", "1",
                 "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "trained with seed=0; resuming it needs the same data and batches" in captured.err
    assert "Training translation" not in captured.out, captured.out
    assert (out / "state.json").read_text() == before and not (out / "train_data.json").exists()


@pytest.mark.parametrize("setting, value", [("alignment_loss_weight", 0.5), ("conditional", True)])
def test_a_plain_model_refuses_the_attention_settings(setting, value):
    # A plain model used to train without them while state.json recorded them.
    config = task.TranslationConfig.for_profile(attention=False, **{setting: value})
    with pytest.raises(ValueError, match=rf"attentional decoder only.*Received: {setting}={value}, attention=False"):
        task.train(config)
    task.TranslationConfig.for_profile(attention=False).check()  # the profile's defaults suit a plain model


def test_model_architecture(trained):
    _, translator = trained
    model = translator.model
    assert model.bidirectional and model.deep_output and model.attention
    assert model.encoder.uses_bridge


def test_save_load_gives_identical_outputs(trained, parts):
    out, translator = trained
    loaded = task.Translator.load(out)
    sources = [p.english for p in parts["test"][:20]]
    assert loaded.translate(sources) == translator.translate(sources)
    inputs, _ = task.encode_pairs(parts["test"][:8], "en-hi", translator.source_vocab, translator.target_vocab)
    np.testing.assert_array_equal(np.asarray(loaded.model(inputs)), np.asarray(translator.model(inputs)))


def test_export_needs_the_tensorflow_backend(monkeypatch):
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    with pytest.raises(ValueError, match="needs the TensorFlow backend.*Received: backend=jax"):
        serving.string_module(None, None, None)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="SavedModel export is TensorFlow's")
def test_saved_model_export_round_trip(trained, parts, tmp_path):
    _, translator = trained
    serving.export_serving(translator.model, translator.source_vocab, translator.target_vocab, tmp_path / "export")
    translate = serving.load_serving(tmp_path / "export")
    sources = [p.english for p in parts["test"][:12]] + ["I am going to Paris!"]
    assert translate(sources) == translator.translate(sources)
    assert translate(["   ", "I am going home"]) == ["", translator.translate(["I am going home"])[0]]
    with pytest.raises(ValueError, match="list of strings"):
        translate("I am going home")


def test_empty_input_is_a_clear_error(trained):
    _, translator = trained
    with pytest.raises(ValueError, match="empty"):
        translator.translate(["I am going home", "  "])


def test_evaluation_uses_every_translation_as_reference(trained, parts):
    _, translator = trained
    sources, references = task.references_by_source(parts["test"], "en-hi")
    assert len(sources) == len(set(sources)) < len(parts["test"])
    assert max(len(r) for r in references) == 2  # gender-ambiguous English sentences
    metrics = task.evaluate(translator, parts["test"][:60])
    assert 0.0 <= metrics["bleu"] <= 100.0 and 0.0 <= metrics["alignment_agreement"] <= 1.0
    lengths = task.bleu_by_length(translator, parts["test"][:60])
    assert set(lengths) <= set(range(3, 9))
    counts = task.sources_by_length(translator, parts["test"][:60])  # what each point of the curve stands for
    assert set(counts) == set(lengths)
    assert sum(counts.values()) == len(task.references_by_source(parts["test"][:60], "en-hi")[0])


def test_agreement_share_pools_the_counts_of_a_set_of_words():
    from collections import Counter

    report = {
        "रहा": {"agree": 0, "count": 6, "attended_instead": Counter({"i": 6})},
        "हूँ": {"agree": 1, "count": 2, "attended_instead": Counter({"i": 1})},
        "घर": {"agree": 9, "count": 10, "attended_instead": Counter({"going": 1})},
    }
    # pooled over occurrences (1 of 8), not the mean of the words' own shares (1/4)
    assert task.agreement_share(report, {"रहा", "हूँ"}) == pytest.approx(1 / 8)
    assert task.agreement_share(report, ["घर", "बाज़ार"]) == pytest.approx(0.9)  # बाज़ार: not in the report
    assert task.agreement_share(report, set(report)) == pytest.approx(10 / 18)
    with pytest.raises(ValueError, match=r"None of `words` occurs in the report.*Received: words=\['बाज़ार'\], 3 words"):
        task.agreement_share(report, {"बाज़ार"})  # used to give 0.0, as if measured
    with pytest.raises(ValueError, match="one string"):
        task.agreement_share(report, "घर")
    with pytest.raises(ValueError, match="report"):
        task.agreement_share([("घर", 1)], {"घर"})


def test_perfect_hypotheses_score_100(parts):
    from course_lib.metrics.bleu import corpus_bleu

    sources, references = task.references_by_source(parts["test"][:200], "en-hi")
    assert corpus_bleu([refs[-1] for refs in references], references) == pytest.approx(100.0)


TATOEBA = "".join(
    f"{p.english}\t{p.hindi}\tCC-BY 2.0 (France) test fixture #{i}\n"
    for i, p in enumerate(hindi_english.generate_pairs()[:200:2])
)


def test_cli_train_evaluate_translate(tmp_path, capsys):
    from course_lib.cli import main

    data = tmp_path / "pairs.txt"
    data.write_text(TATOEBA + "broken line without tabs\n", encoding="utf-8")
    out = tmp_path / "model"
    args = ["train", "translation", "--train", str(data), "--valid", str(data), "--direction", "hi-en",
            "--epochs", "1", "--units", "8", "--embedding-dim", "8", "--out", str(out)]
    def said(caught, text):
        return any(text in str(warning.message) for warning in caught)

    with pytest.warns(UserWarning) as caught:
        assert main(args) == 0
    # Validated, then scored, on its training file: each says so (the figures were printed as if held out).
    assert said(caught, "line 101") and said(caught, f"--valid {str(data)!r} is the file the model was trained on")
    metrics_path = tmp_path / "metrics.json"
    with pytest.warns(UserWarning) as caught:
        assert main(["evaluate", "translation", "--model", str(out), "--test", str(data),
                     "--beam", "2", "--metrics-json", str(metrics_path)]) == 0
    assert said(caught, "line 101") and said(caught, f"--test {str(data)!r} is the file the model was trained on")
    # A test file of words the model never saw: the figures come with a warning of unlike data.
    unlike = tmp_path / "unlike.txt"
    unlike.write_text("".join(f"word {i}\t{'ङ' * (i + 2)} {'ञ' * (i + 2)}\tCC-BY 2.0 (France) fixture #{i}\n"
                              for i in range(20)), encoding="utf-8")  # Hindi sources (hi-en) of made-up words
    with pytest.warns(UserWarning, match=r"^100.0% of the test sources' words are not in the model's vocabulary"):
        assert main(["evaluate", "translation", "--model", str(out), "--test", str(unlike)]) == 0
    metrics = json.loads(metrics_path.read_text())
    assert {"bleu", "chrf"} <= set(metrics) and metrics["beam_width"] == 2
    capsys.readouterr()
    heatmap = tmp_path / "heat.png"
    assert main(["translate", "--model", str(out), "--heatmap", str(heatmap), "मैं घर जा रहा हूँ"]) == 0
    assert heatmap.stat().st_size > 1000
    assert "heat map saved" in capsys.readouterr().out
    assert main(["translate", "--model", str(out), "   "]) == 2
    assert main(["evaluate", "translation", "--model", str(tmp_path / "nothing")]) == 2
    # Resuming the run without --train must not switch silently to the generated corpus.
    capsys.readouterr()
    assert main(["train", "translation", "--direction", "hi-en", "--epochs", "2", "--units", "8",
                 "--embedding-dim", "8", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "was trained on" in err and "pairs.txt" in err and "--train None" in err
    # Nor may it be scored on the generated test part, which says nothing about it.
    assert main(["evaluate", "translation", "--model", str(out)]) == 2
    assert "pass the test file with --test" in capsys.readouterr().err.lower()
    # Nor may it take sizes or a learning rate that resuming would ignore while recording them.
    with pytest.warns(UserWarning) as caught:
        assert main(args + ["--epochs", "2", "--units", "16", "--learning-rate", "0.0123"]) == 2
    assert said(caught, "line 101")
    err = capsys.readouterr().err
    assert "trained with units=8, learning_rate=" in err and "Received: units=16, learning_rate=0.0123" in err
    # Nor may it go on with another file: its vocabularies and the pairs it has seen come from pairs.txt.
    other = tmp_path / "other.txt"
    other.write_text(TATOEBA.replace("fixture", "copy"), encoding="utf-8")
    before = (out / "state.json").read_text()
    assert main(["train", "translation", "--train", str(other), "--direction", "hi-en", "--epochs", "2",
                 "--units", "8", "--embedding-dim", "8", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "needs the same file" in err and "pairs.txt" in err and "Received: --train" in err and "other.txt" in err
    assert (out / "state.json").read_text() == before  # nothing trained, nothing recorded


def test_supervision_without_gold_alignments_is_refused_before_the_folder_is_claimed(tmp_path, capsys):
    from course_lib.cli import main

    data = tmp_path / "pairs.txt"
    data.write_text(TATOEBA, encoding="utf-8")
    out = tmp_path / "supervised"
    assert main(["train", "translation", "--train", str(data), "--alignment-loss-weight", "1", "--epochs", "1",
                 "--units", "8", "--embedding-dim", "8", "--out", str(out)]) == 2
    assert "Supervised attention needs a gold word alignment for every pair" in capsys.readouterr().err
    assert not out.exists()  # it used to keep course_run.json and train_data.json: a run that never was


def test_cli_plain_model(tmp_path, capsys):
    """`--no-attention` trains with the profile's defaults; what a plain model would ignore is refused."""
    from course_lib.cli import main

    out = tmp_path / "plain"
    sizes = ["--units", "8", "--embedding-dim", "8", "--out", str(out)]
    first = ["train", "translation", "--no-attention", "--epochs", "1", "--max-train", "64"] + sizes
    # Used to train without the alignment loss while state.json recorded 0.5.
    assert main(first + ["--alignment-loss-weight", "0.5"]) == 2
    assert "Received: alignment_loss_weight=0.5, attention=False" in capsys.readouterr().err
    assert not out.exists()
    assert main(first + ["--seed", "5"]) == 0
    config = json.loads((out / "state.json").read_text())["config"]
    assert (config["attention"], config["alignment_loss_weight"], config["conditional"]) == (False, 0.0, False)

    # A plain model's heat map was all zeros: refused, before anything is translated.
    capsys.readouterr()
    heatmap = tmp_path / "heat.png"
    assert main(["translate", "--model", str(out), "--heatmap", str(heatmap), "I am going home"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("course-lib: error:") and len(captured.err.strip().splitlines()) == 1
    assert "no attention to draw; leave out --heatmap. Received: --heatmap" in captured.err
    assert captured.out == "" and not heatmap.exists()
    # The library's `heatmap` refuses it too (it used to draw the all-zero map).
    with pytest.raises(ValueError, match=r"This translator is a plain encoder-decoder \(attention=False\), which has "
                                         r"no attention to draw.*Received: a translator with attention=False"):
        task.heatmap(task.Translator.load(out), "I am going home", path=heatmap)
    assert not heatmap.exists()
    assert main(["translate", "--model", str(out), "I am going home"]) == 0
    # Words the model never saw reach it as <unk>: a text of nothing else used to get a confident sentence.
    capsys.readouterr()
    for text in ("xqzv blorp", "मैं घर जा रहा हूँ"):  # gibberish; Hindi given to an en-hi model
        assert main(["translate", "--model", str(out), "I am going home", text]) == 2
        captured = capsys.readouterr()
        assert "Nothing to translate: no word of these texts is in the model's en-hi source vocabulary" in captured.err
        assert f"Received: [{text!r}]" in captured.err and captured.out == ""
    assert main(["translate", "--model", str(out), "I am going blorp"]) == 0  # some known words: a note
    captured = capsys.readouterr()
    assert "note: 'blorp' not in the model's vocabulary (read as <unk>)" in captured.err
    assert len(captured.out.splitlines()) == 1
    # A damaged train_data.json is named, also when --test is given (a list there was an AttributeError).
    record = (out / "train_data.json").read_text()
    (out / "train_data.json").write_text("[1, 2]")
    test_file = tmp_path / "test.txt"
    test_file.write_text(TATOEBA, encoding="utf-8")
    assert main(["evaluate", "translation", "--model", str(out), "--test", str(test_file)]) == 2
    assert "train_data.json' is damaged (expected a JSON object, found list)" in capsys.readouterr().err
    (out / "train_data.json").write_text(record)

    # Resuming with another seed re-split the generated corpus: the run trained on its own test pairs.
    before = (out / "state.json").read_text()
    for flags, saved, received in ((["--seed", "6"], "seed=5", "seed=6"),
                                   (["--max-train", "32"], "max_train=64", "max_train=32"),
                                   (["--batch-size", "16"], "batch_size=64", "batch_size=16")):
        capsys.readouterr()
        assert main(["train", "translation", "--no-attention", "--epochs", "2"] + sizes + flags) == 2, flags
        err = capsys.readouterr().err
        assert f"trained with {saved}" in err and f"Received: {received}" in err, err
    assert (out / "state.json").read_text() == before
    # Left out, they are the run's own, not the defaults (seed 0, the profile's 3,000 pairs).
    assert main(["train", "translation", "--no-attention", "--epochs", "2"] + sizes) == 0
    state = json.loads((out / "state.json").read_text())
    assert state["epochs_done"] == 2 and (state["config"]["seed"], state["config"]["max_train"]) == (5, 64)


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="SavedModel export is TensorFlow's")
def test_export_refuses_a_max_length_it_would_change():
    # 0 used to mean the model's default and 2.7 was cut to 2.
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.text.vocabulary import Vocabulary

    vocab = Vocabulary.from_texts(["ghar", "kamal"], level="char")
    model = Seq2Seq(len(vocab), len(vocab), embedding_dim=4, units=4, max_output_length=6)
    for bad in (0, 2.7, -1):
        with pytest.raises(ValueError, match=rf"`max_length` must be a whole number >= 1. Received: max_length={bad}"):
            serving.string_module(model, vocab, vocab, max_length=bad)
    assert serving.string_module(model, vocab, vocab).max_length == 6
    assert serving.string_module(model, vocab, vocab, max_length=np.int64(3)).max_length == 3


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="SavedModel export is TensorFlow's")
def test_export_works_at_character_level(tmp_path):
    """The same export serves transliteration: characters in, characters joined out."""
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.text.vocabulary import Vocabulary

    source_vocab = Vocabulary.from_texts(["india", "ghar", "kshatriya"], level="char", lowercase=True)
    target_vocab = Vocabulary.from_texts(["इंडिया", "घर", "क्षत्रिय"], level="char")
    model = Seq2Seq(len(source_vocab), len(target_vocab), embedding_dim=8, units=8,
                    bidirectional=True, deep_output=True, max_output_length=6)
    model.build()
    words = ["INDIA", "ghar", "xyz"]
    expected = target_vocab.decode_batch(model.generate(source_vocab.encode(words))["tokens"])
    serving.export_serving(model, source_vocab, target_vocab, tmp_path / "chars")
    assert serving.load_serving(tmp_path / "chars")(words) == expected
    assert all(" " not in word for word in expected)  # characters are joined without spaces


def test_a_resumed_run_records_the_epochs_it_was_trained_to(trained):
    # state.json's config said epochs=1 after the run was resumed to 2.
    out, translator = trained
    state = json.loads((out / "state.json").read_text())
    assert translator.config.epochs == 2 and state["config"]["epochs"] == 2 and state["epochs_done"] == 2


def test_only_the_first_supervised_pairs_carry_their_alignment(parts, monkeypatch):
    from course_lib.data import tf_data

    captured = {}

    def capture(inputs, target_out, *args, **kwargs):
        captured.update(inputs)
        raise KeyboardInterrupt  # the data is all this test needs

    monkeypatch.setattr(tf_data, "array_dataset", capture)
    config = task.TranslationConfig.for_profile(direction="en-hi", **{**TINY, "max_train": 20},
                                                alignment_loss_weight=1.0, supervised_pairs=5)
    with pytest.raises(KeyboardInterrupt):
        task.train(config, parts["train"], verbose=0)
    alignment = np.asarray(captured["alignment"])
    assert len(alignment) == 20
    assert all(alignment[i].any() for i in range(5)) and not alignment[5:].any()


def test_resuming_a_supervised_run_without_repeating_its_weight(tmp_path, capsys):
    # `--supervised-pairs` is taken from the run when left out; its check must read the run's own
    # alignment weight, not the profile's 0 for a flag left out too.
    from course_lib.cli import main

    out = tmp_path / "supervised"
    sizes = ["--max-train", "64", "--units", "8", "--embedding-dim", "8", "--out", str(out)]
    assert main(["train", "translation", "--epochs", "1", "--alignment-loss-weight", "1",
                 "--supervised-pairs", "10"] + sizes) == 0
    capsys.readouterr()
    assert main(["train", "translation", "--epochs", "2", "--out", str(out)]) == 0, capsys.readouterr().err
    state = json.loads((out / "state.json").read_text())
    assert state["epochs_done"] == 2 and state["config"]["supervised_pairs"] == 10


def test_a_run_from_python_refused_by_train_gets_no_training_record(trained, tmp_path, capsys):
    # train_data.json is written for such a run only once `train` has accepted it: a refused resume
    # (here: the other direction) must not record a training file the run never used.
    import shutil

    from course_lib.cli import main

    out = tmp_path / "copy"
    shutil.copytree(trained[0], out)
    assert main(["train", "translation", "--direction", "hi-en", "--epochs", "3", "--out", str(out)]) == 2
    assert "holds a en-hi model" in capsys.readouterr().err
    assert not (out / "train_data.json").exists()
