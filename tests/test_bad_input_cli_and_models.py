"""Bad input to the command line and to the models' NumPy entry points: a clear error naming what was
received, before any work is done, never a silent wrong answer."""

import re

import keras
import numpy as np
import pytest

from course_lib.cli import main
from course_lib.decoders import AttentionGRUDecoder, PlainGRUDecoder
from course_lib.encoders import GRUEncoder
from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder, HierarchicalEncoder
from course_lib.layers import BahdanauAttention
from course_lib.models.captioner import ImageCaptioner
from course_lib.models.dialog import HierarchicalDialogModel
from course_lib.models.document_classifier import DocumentClassifier, FlatAttentionEncoder
from course_lib.models.language_model import RNNLanguageModel
from course_lib.models.seq2seq import Seq2Seq


@pytest.fixture
def paths(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    a_folder = tmp_path / "a_folder"
    a_folder.mkdir()
    return {"file": str(a_file), "folder": str(a_folder)}


# Each of these used to be found out only after the training or grading had run (a traceback, the work lost),
# or never (a NaN learning rate trained and saved a NaN model).
CASES = [
    (["reversal", "--steps", "2", "--out", "{file}"], "argument --out: expected a folder, received '{file}', which is a file"),
    (["reversal", "--steps", "2", "--metrics-json", "{folder}"], "expected a file, received '{folder}', which is a folder"),
    (["train", "documents", "--out", "{file}"], "expected a folder"),
    (["train", "captioning", "--out", "{file}"], "expected a folder"),
    (["train", "translation", "--out", "{file}"], "expected a folder"),
    (["train", "transliteration", "--out", "{file}"], "expected a folder"),
    (["train", "language-model", "--steps", "2", "--save", "lm"], "expected a file name ending in .keras, received 'lm'"),
    (["train", "language-model", "--steps", "2", "--save", "lm.KERAS"],  # Keras refused it after training
     "expected a file name ending in .keras, received 'lm.KERAS'"),
    (["caption", "--model", "{folder}", "a.png", "--overlay", "{folder}"], "which is a folder"),  # wrote {folder}.png
    (["caption", "--model", "{folder}", "a.png", "--overlay", "o.txt"],
     "expected a file name ending in .png or .pdf or .svg or .jpg or .jpeg, received 'o.txt'"),
    (["reversal", "--steps", "2", "--metrics-json", "{file}/m.json"],  # failed after training with Errno 17
     "expected a file in a folder, received '{file}/m.json', but '{file}' is a file"),
    (["train", "language-model", "--steps", "2", "--save", "{file}/sub/lm.keras"], "but '{file}' is a file"),
    (["train", "translation", "--learning-rate", "nan", "--out", "{folder}"], "expected a positive number, received 'nan'"),
    (["train", "transliteration", "--learning-rate", "0", "--out", "{folder}"], "expected a positive number, received '0'"),
    (["train", "translation", "--alignment-loss-weight", "inf", "--out", "{folder}"],
     "expected a non-negative number, received 'inf'"),
    (["evaluate", "transliteration", "--model", "{folder}", "--rerank-weight", "-1"],
     "expected a non-negative number, received '-1'"),
    (["evaluate", "translation", "--model", "{folder}", "--metrics-json", "{folder}"], "which is a folder"),
    (["evaluate", "documents", "--model", "{folder}", "--metrics-json", "{folder}"], "which is a folder"),
    (["evaluate", "captioning", "--model", "{folder}", "--metrics-json", "{folder}"], "which is a folder"),
    (["translate", "--model", "{folder}", "--heatmap", "heat", "a"],
     "expected a file name ending in .png or .pdf or .svg or .jpg or .jpeg, received 'heat'"),
    (["transliterate", "--model", "{folder}", "--heatmap", "{folder}", "ghar"], "which is a folder"),
    (["grade", "A1", "a.ipynb", "--out", "{folder}"], "which is a folder"),
    # Negative seeds used to fail inside NumPy or TensorFlow (some after claiming --out), naming neither.
    (["reversal", "--seed", "-1"], "argument --seed: expected a seed, a whole number from 0 to 4294967295, received '-1'"),
    (["train", "translation", "--seed", "-3", "--out", "{folder}"], "argument --seed: expected a seed"),
    (["split-translation", "x.txt", "--seed", "-3", "--out", "{folder}"], "received '-3'"),
    (["train", "transliteration", "--model-seed", "-2", "--out", "{folder}"], "argument --model-seed: expected a seed"),
    (["train", "documents", "--seed", "4294967296", "--out", "{folder}"], "received '4294967296'"),
    (["train", "captioning", "--seed", "1.5", "--out", "{folder}"], "argument --seed: expected a seed"),
    (["train", "language-model", "--seed", "-1"], "argument --seed: expected a seed"),
    (["grade", "A1", "a.ipynb", "--feedback", "{file}"], "expected a folder"),
    (["grade", "A1", "a.ipynb", "--timeout", "nan"], "expected a positive number, received 'nan'"),
    (["grade", "A1", "a.ipynb", "--notebook-timeout", "-5"], "expected a positive number, received '-5'"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(argv[:3]) for argv, _ in CASES])
def test_bad_output_paths_and_numbers_are_usage_errors(argv, message, paths, capsys):
    with pytest.raises(SystemExit) as stop:
        main([part.format(**paths) for part in argv])
    assert stop.value.code == 2
    assert message.format(**paths) in capsys.readouterr().err


def test_os_errors_of_a_command_are_reported_not_raised(tmp_path, capsys, monkeypatch):
    from course_lib.tasks import reversal

    def cannot_write(args):  # e.g. a folder the user may not write to
        raise PermissionError(13, "Permission denied", str(tmp_path / "locked"))

    monkeypatch.setattr(reversal, "_command", cannot_write)  # the parser is built, with its handlers, per call
    assert main(["reversal", "--steps", "2", "--out", str(tmp_path)]) == 2
    assert "course-lib: error: [Errno 13] Permission denied" in capsys.readouterr().err


def _seq2seq():
    keras.utils.set_random_seed(0)
    return Seq2Seq(10, 9, embedding_dim=4, units=6, max_output_length=4)


@pytest.mark.parametrize("bad_id", [-1, 10])
def test_seq2seq_generate_refuses_ids_outside_the_vocabulary(bad_id):
    model = _seq2seq()
    assert model.generate(np.array([[3, 4, 9]]))["tokens"].shape == (1, 4)
    # -1 used to read the last embedding row (the same output as id 9); 10 failed inside TensorFlow.
    with pytest.raises(ValueError, match=rf"outside the vocabulary \[0, 10\). Received: source with id {bad_id}"):
        model.generate(np.array([[3, 4, bad_id]]))
    with pytest.raises(ValueError, match="outside the vocabulary"):
        model.generate(np.array([[3, 4, bad_id]]), beam_width=2)


def test_seq2seq_generate_refuses_fractional_lengths_and_too_wide_beams():
    model = _seq2seq()
    source = np.array([[3, 4, 5]])
    assert model.generate(source, max_length=np.int64(3))["tokens"].shape == (1, 3)
    with pytest.raises(ValueError, match=r"`max_length` must be a whole number >= 1. Received: max_length=2.7"):
        model.generate(source, max_length=2.7)  # used to decode 2 steps
    with pytest.raises(ValueError, match=r"Received: max_length=np.int64\(0\)"):
        model.generate(source, max_length=np.int64(0))
    assert model.generate(source, beam_width=7)["beam_tokens"].shape == (1, 7, 4)  # 9 tokens - <pad>, <GO>
    # A wider beam used to be topped up with "hypotheses" made of <pad> and <GO>, scored -1e9.
    with pytest.raises(ValueError, match=r"at most 7: .* Received: beam_width=8"):
        model.generate(source, beam_width=8)


def test_language_model_checks_ids_and_temperature():
    layer = RNNLanguageModel(8, 4, 6, start_id=1, stop_id=2, pad_id=0)
    inputs = np.array([[1, 3, 4]])
    assert layer.token_log_probs(inputs, np.array([[3, 4, 2]])).shape == (1, 3)
    with pytest.raises(ValueError, match=r"`targets` holds ids outside the vocabulary \[0, 8\). Received: targets with id -1"):
        layer.token_log_probs(inputs, np.array([[3, 4, -1]]))  # used to score id 7 instead
    with pytest.raises(ValueError, match="`inputs` holds ids outside"):
        layer.token_log_probs(np.array([[1, 3, 8]]), np.array([[3, 4, 2]]))
    for temperature in (float("nan"), float("inf")):  # used to write only padding, or <pad>/<GO>
        with pytest.raises(ValueError, match="`temperature` must be a finite number >= 0"):
            layer.generate(2, max_length=4, temperature=temperature)
    with pytest.raises(ValueError, match="max_length=2.5"):
        layer.generate(2, max_length=2.5)


def test_document_classifier_and_dialog_check_ids():
    classifier = DocumentClassifier(20, 3, embedding_dim=8, word_units=6, sentence_units=5)
    documents = np.array([[[3, 4, 5], [6, 7, 0]]])
    assert classifier.explain(documents)["probabilities"].shape == (1, 3)
    with pytest.raises(ValueError, match=r"`documents` holds ids outside the vocabulary \[0, 20\)"):
        classifier.explain(np.array([[[3, 4, -1], [6, 7, 0]]]))
    dialog = HierarchicalDialogModel(15, embedding_dim=8, word_units=6, sentence_units=5, units=7, max_output_length=5)
    context = np.array([[[3, 4, 5], [6, 7, 0]]])
    assert dialog.generate(context)["tokens"].shape == (1, 5)
    with pytest.raises(ValueError, match=r"`context` holds ids outside the vocabulary \[0, 15\). Received: context with id 15"):
        dialog.generate(np.array([[[3, 4, 15], [6, 7, 0]]]))
    with pytest.raises(ValueError, match="max_length=3.5"):
        dialog.generate(context, max_length=3.5)


def test_captioner_refuses_nan_pixels_and_a_non_positive_batch_size():
    keras.utils.set_random_seed(0)
    model = ImageCaptioner(12, image_size=32, cnn_filters=(4, 8), embedding_dim=8, units=16,
                           max_output_length=6)
    images = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype("float32")
    assert model.generate({"image": images})["tokens"].shape == (2, 6)
    images[1, 3, 4, 0] = np.nan  # used to caption on, with NaN scores and a caption of padding
    with pytest.raises(ValueError, match=r"`image` holds NaN or infinite values. Received: 1 of them"):
        model.generate({"image": images})
    with pytest.raises(ValueError, match=r"`batch_size` must be a whole number >= 1. Received: batch_size=0"):
        model.generate({"image": images[:1]}, batch_size=0)


TRAIN_COMMANDS = {
    "reversal": ["reversal", "--steps", "2"],
    "documents": ["train", "documents"],
    "captioning": ["train", "captioning"],
    "translation": ["train", "translation"],
    "transliteration": ["train", "transliteration"],
}


@pytest.mark.parametrize("task", sorted(TRAIN_COMMANDS))
def test_a_training_command_never_takes_over_another_run(task, tmp_path, capsys):
    # A folder that holds another task's run: its model used to be overwritten (documents into a translation
    # run), or "resumed" as one of this task's (transliteration read a translation run's word vocabulary).
    other = tmp_path / "other"
    other.mkdir()
    (other / "course_run.json").write_text('{"task": "some-other-task"}')
    (other / "model.keras").write_text("the other run's model")
    assert main(TRAIN_COMMANDS[task] + ["--out", str(other)]) == 2
    assert f"holds a some-other-task run (course_run.json); a {task} run would overwrite it" in capsys.readouterr().err
    assert (other / "model.keras").read_text() == "the other run's model"
    # A folder of unrelated files is refused as well.
    stuff = tmp_path / "stuff"
    stuff.mkdir()
    (stuff / "notes.txt").write_text("mine")
    assert main(TRAIN_COMMANDS[task] + ["--out", str(stuff)]) == 2
    assert f"already holds files that are not a {task} run (notes.txt)" in capsys.readouterr().err


METRICS_COMMANDS = {
    "reversal": ["reversal", "--steps", "2", "--out", "{model}"],
    "translation": ["evaluate", "translation", "--model", "{model}"],
    "transliteration": ["evaluate", "transliteration", "--model", "{model}"],
    "captioning": ["evaluate", "captioning", "--model", "{model}"],
    "documents": ["evaluate", "documents", "--model", "{model}"],
}


@pytest.mark.parametrize("task", sorted(METRICS_COMMANDS))
def test_metrics_json_never_replaces_a_file_of_a_run(task, tmp_path, capsys):
    # `--metrics-json tr1/state.json` used to replace the run's state (the run was then unusable).
    marked = tmp_path / "marked"  # another run, known by its marker
    marked.mkdir()
    (marked / "course_run.json").write_text('{"task": "translation"}')
    (marked / "state.json").write_text("the run's state")
    model = tmp_path / "model"  # the run the command reads or writes, marker or not
    model.mkdir()
    (model / "run.json").write_text("the run's record")
    argv = [part.format(model=model) for part in METRICS_COMMANDS[task]]
    assert main(argv + ["--metrics-json", str(marked / "state.json")]) == 2
    assert f"Received: --metrics-json {str(marked / 'state.json')!r}" in capsys.readouterr().err
    assert main(argv + ["--metrics-json", str(model / "run.json")]) == 2
    assert f"would write into the run folder {str(model)!r}" in capsys.readouterr().err
    assert (marked / "state.json").read_text() == "the run's state"
    assert (model / "run.json").read_text() == "the run's record"


def test_a_damaged_captioning_run_file_is_a_one_line_error(tmp_path, capsys):
    from course_lib.tasks.captioning import load_run

    for name in ("model.keras", "vocabulary.json"):
        (tmp_path / name).write_text("")
    for damaged in ('{"bleu": 1.0}', "not json", '{"settings": {"units": 4}}'):
        (tmp_path / "run.json").write_text(damaged)  # e.g. metrics written over it: `caption` gave a KeyError traceback
        with pytest.raises(ValueError, match="is not a usable captioning run: its run.json is damaged"):
            load_run(tmp_path)


@pytest.mark.parametrize("argv", [["evaluate", "transliteration", "--model"], ["transliterate", "ghar", "--model"]])
def test_transliteration_refuses_another_tasks_run(argv, tmp_path, capsys):
    # A translation run used to be evaluated as a transliteration model: exit 0 and meaningless scores.
    (tmp_path / "course_run.json").write_text('{"task": "translation"}')
    (tmp_path / "model.keras").write_text("")
    assert main(argv + [str(tmp_path)]) == 2
    assert f"{str(tmp_path)!r} holds a translation run (course_run.json); not a transliteration run" in (
        capsys.readouterr().err)


def test_claim_run_folder_marks_new_folders_and_accepts_its_own_older_runs(tmp_path):
    from course_lib.tasks.arguments import RUN_MARKER, claim_run_folder

    claim_run_folder(tmp_path / "new", "documents", "training.json")
    assert (tmp_path / "new" / RUN_MARKER).read_text() == '{"task": "documents"}'
    claim_run_folder(tmp_path / "new", "documents", "training.json")  # its own run: resumed or replaced
    older = tmp_path / "older"  # a run saved before the marker existed: known by the task's own state file
    older.mkdir()
    (older / "training.json").write_text("{}")
    (older / "model.keras").write_text("")
    claim_run_folder(older, "documents", "training.json")
    assert (older / RUN_MARKER).exists()
    with pytest.raises(ValueError, match="holds a documents run"):
        claim_run_folder(older, "captioning", "run.json")


def test_a_command_that_fails_after_claiming_its_folder_leaves_no_run_marker(tmp_path, capsys):
    # The marker used to stay behind: the folder then passed for a transliteration run with no model in it,
    # and another task's run there was refused.
    words = tmp_path / "words.csv"
    words.write_text("kamal,कमल\n", encoding="utf-8")
    refused = ["train", "transliteration", "--train", str(words), "--drop-vowel-length", "0.5"]
    new, empty, resumed = tmp_path / "new", tmp_path / "empty", tmp_path / "resumed"
    empty.mkdir()
    resumed.mkdir()
    (resumed / "course_run.json").write_text('{"task": "transliteration"}')
    (resumed / "training_state.json").write_text("{}")
    for folder in (new, empty, resumed):
        assert main(refused + ["--out", str(folder)]) == 2
        assert "--drop-vowel-length changes the generated words only" in capsys.readouterr().err.replace("`", "")
    assert not new.exists()  # made by the claim: removed again
    assert empty.is_dir() and not any(empty.iterdir())  # the user's own folder stays, empty
    assert sorted(path.name for path in resumed.iterdir()) == ["course_run.json", "training_state.json"]


def test_a_refused_translation_run_leaves_its_folder_as_it_was(tmp_path, capsys):
    # course_run.json and train_data.json used to stay behind, and the folder then refused other tasks.
    new, empty = tmp_path / "new", tmp_path / "empty"
    empty.mkdir()
    for folder in (new, empty):
        assert main(["train", "translation", "--supervised-pairs", "5", "--out", str(folder)]) == 2
        assert "Received: supervised_pairs=5, alignment_loss_weight=0" in capsys.readouterr().err
    assert not new.exists()
    assert not any(empty.iterdir())


def test_special_ids_must_be_distinct_and_inside_the_vocabulary():
    # start_id past the vocabulary used to fail at the first decoding step inside TensorFlow; start_id == stop_id
    # decoded a lone <stop>.
    with pytest.raises(ValueError, match=r"three different ids in \[0, 9\). Received: start_id=20, stop_id=2, pad_id=0"):
        Seq2Seq(10, 9, start_id=20)
    with pytest.raises(ValueError, match="Received: start_id=2, stop_id=2"):
        ImageCaptioner(12, start_id=2, stop_id=2)
    with pytest.raises(ValueError, match="three different ids"):
        RNNLanguageModel(8, 4, 6, pad_id=8)
    with pytest.raises(ValueError, match="three different ids"):
        HierarchicalDialogModel(15, start_id=1.0)


def test_empty_sources_and_mismatched_batches_are_named():
    model = _seq2seq()
    with pytest.raises(ValueError, match=r"`source` needs at least one position. Received: source.shape=\(2, 0\)"):
        model.generate(np.zeros((2, 0), "int32"))  # used to fail inside the GRU's TensorList
    encoder_outputs = np.zeros((2, 3, 6), "float32")
    state = np.zeros((2, 6), "float32")
    with pytest.raises(ValueError, match=r"`target_inputs`, `encoder_outputs` and `initial_state` must have the same batch"):
        model.decoder(np.ones((1, 4), "int32"), encoder_outputs, state)  # used to fail in a ConcatOp
    with pytest.raises(ValueError, match="needs at least one step"):
        model.decoder(np.ones((2, 0), "int32"), encoder_outputs, state)
    plain = Seq2Seq(10, 9, embedding_dim=4, units=6, attention=False, option=2, max_output_length=4)
    plain.generate(np.array([[3, 4, 5]]))
    with pytest.raises(ValueError, match="must have the same batch size"):
        plain.decoder(np.ones((1, 4), "int32"), encoder_outputs, state)  # used to broadcast a batch of 1
    attention = model.decoder.attention
    keys = attention.project_keys(encoder_outputs)
    with pytest.raises(ValueError, match=r"`projected_keys` must be `W_att h_j` of these values"):
        attention(state, encoder_outputs, projected_keys=keys[:1])  # used to broadcast
    for wrong_width in (keys[:, :, :1], keys[:, :, :-1], keys[:, :, 0]):  # (2, 3, 1) used to broadcast too
        received = re.escape(f"Received: projected_keys.shape={tuple(wrong_width.shape)}")
        with pytest.raises(ValueError, match=received):
            attention(state, encoder_outputs, projected_keys=wrong_width)
    classifier = DocumentClassifier(20, 3, embedding_dim=8, word_units=6, sentence_units=5)
    with pytest.raises(ValueError, match="at least one sentence of one word"):
        classifier.explain(np.zeros((1, 2, 0), "int32"))
    captioner = ImageCaptioner(12, image_size=32, cnn_filters=(4, 8), embedding_dim=8, units=16)
    with pytest.raises(ValueError, match=r"`image` and `target_in` must have the same batch size"):
        captioner({"image": np.zeros((2, 32, 32, 3), "float32"), "target_in": np.ones((3, 4), "int32")})


def test_encoder_refuses_a_pad_id_outside_the_vocabulary():
    with pytest.raises(ValueError, match="Received: pad_id=12, vocab_size=12"):
        GRUEncoder(12, 4, 6, pad_id=12)


def test_seq2seq_refuses_an_option_other_than_1_or_2_with_attention_too():
    with pytest.raises(ValueError, match="Received: option=7"):
        Seq2Seq(12, 10, attention=True, option=7)


def test_attentional_seq2seq_refuses_option_2():
    # The option is the plain decoder's: with attention it used to be accepted, saved and ignored.
    with pytest.raises(ValueError, match=r"has no option 2. Received: option=2, attention=True"):
        Seq2Seq(12, 10, attention=True, option=2)
    assert Seq2Seq(12, 10, attention=False, option=2).decoder.option == 2
    assert Seq2Seq(12, 10, attention=True, option=1).decoder.has_attention


def test_an_attentional_model_saved_with_option_2_still_loads():
    # Saved before option 2 was refused with attention (e.g. `ReversalConfig(option=2)`): the decoder never read it.
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, max_output_length=4)
    model.build()
    config = {**model.get_config(), "option": 2}
    loaded = Seq2Seq.from_config(config)
    assert loaded.decoder.has_attention and loaded.option == 1
    source = np.array([[3, 4, 5]])
    loaded.build()
    loaded.set_weights(model.get_weights())
    np.testing.assert_array_equal(loaded.generate(source)["tokens"], model.generate(source)["tokens"])


def test_check_unread_options_refuses_what_differs_from_the_defaults():
    # The one check behind Seq2Seq, ImageCaptioner and DocumentClassifier's refusals of unread options.
    from course_lib.layers.masking import check_unread_options

    defaults = {"sizes": (16, 32), "units": None, "flag": False, "rate": 0.0}
    same = {"sizes": [16, 32], "units": None, "flag": 0, "rate": 0.0, "read": 5}  # a list for a tuple; 0 for False
    check_unread_options(same, defaults, "never raised")
    with pytest.raises(ValueError, match=r"^`units` and `rate` apply to X only\. Received: units=8, rate=0\.5, "
                                         r"kind='y'$"):
        check_unread_options({**same, "units": 8, "rate": 0.5}, defaults, "`units` and `rate` apply to X only",
                             kind="y")
    # A bool is no number (False is not a rate of 0.0), a string no sequence; the reason may depend on the names.
    for name, value in (("rate", False), ("sizes", "ab"), ("flag", "no")):
        with pytest.raises(ValueError, match=f"^{name} differs. Received: {name}={value!r}$"):
            check_unread_options({**same, name: value}, defaults, lambda names: f"{' '.join(sorted(names))} differs")


@pytest.mark.parametrize(
    "options, received",
    [(dict(teacher_forcing_ratio=0.5), "teacher_forcing_ratio=0.5"), (dict(deep_output=True), "deep_output=True"),
     (dict(conditional=True), "conditional=True"), (dict(attention_units=8), "attention_units=8")],
)
def test_plain_seq2seq_refuses_the_attentional_decoders_options(options, received):
    # The plain decoder has no scheduled sampling, no deep output and no scoring network: these used to be
    # silently ignored.
    with pytest.raises(ValueError, match=f"attentional decoder only. Received: {received}, attention=False"):
        Seq2Seq(12, 10, attention=False, **options)
    assert Seq2Seq(12, 10, attention=True, **options).decoder.has_attention


def test_a_plain_model_saved_with_attention_units_still_loads():
    # The translation task's --no-attention runs used to save the unused size in the config.
    config = {**Seq2Seq(12, 10, attention=False, embedding_dim=4, units=6).get_config(), "attention_units": 64}
    model = Seq2Seq.from_config(config)
    assert not model.decoder.has_attention and model.attention_units is None


@pytest.mark.parametrize(
    "build, received",
    [(lambda: AttentionGRUDecoder(9, 4, 6, attention_units=0), "attention_units=0"),
     (lambda: GRUEncoder(12, 4, 6, decoder_units=0), "decoder_units=0"),
     (lambda: Seq2Seq(12, 10, encoder_units=0), "encoder_units=0"),
     (lambda: HierarchicalAttentionEncoder(20, 4, 5, 6, attention_units=0), "attention_units=0"),
     (lambda: FlatAttentionEncoder(20, 4, 5, attention_units=0), "attention_units=0"),
     (lambda: GRUEncoder(12, 4, 6, pad_id=1.5), "pad_id=1.5")],
)
def test_a_size_of_zero_is_refused_not_taken_for_the_default(build, received):
    # 0 used to be replaced by the default size (`attention_units or units`), and pad_id 1.5 was accepted.
    with pytest.raises(ValueError, match=f"must be a whole number >= [01]. Received: {received}"):
        build()


def test_a_rerank_weight_without_a_reranker_is_refused(tmp_path, capsys):
    # It used to be ignored without a word.
    assert main(["evaluate", "transliteration", "--model", str(tmp_path), "--rerank-weight", "0.5"]) == 2
    assert "--rerank-weight weighs the models of --rerank-with, which were not given. Received: --rerank-weight 0.5" \
        in capsys.readouterr().err


@pytest.mark.parametrize("marker_text", ["{not json", '["a list"]', '{"no": "task"}'])
def test_a_damaged_run_marker_is_refused_not_taken_for_a_run_of_the_task(tmp_path, marker_text):
    # A marker that names no task says nothing about the folder: claiming it (or loading from it)
    # as a run of the task would write over, or read, whatever it holds.
    from course_lib.tasks.arguments import RUN_MARKER, check_run_of, claim_run_folder

    (tmp_path / RUN_MARKER).write_text(marker_text)
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"holds a different run \(course_run.json\); not a documents run"):
        check_run_of(tmp_path, "documents")
    with pytest.raises(ValueError, match="holds a different run"):
        claim_run_folder(tmp_path, "documents", "training.json")
    assert (tmp_path / RUN_MARKER).read_text() == marker_text


def test_a_longer_sequence_than_a_tuple_default_is_not_the_default():
    from course_lib.layers.masking import check_unread_options

    defaults = {"sizes": (16, 32)}
    for value in ([16, 32, 64], (16,), ()):
        with pytest.raises(ValueError, match=r"^sizes differs\. Received: sizes="):
            check_unread_options({"sizes": value}, defaults, "sizes differs")


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_a_bool_is_not_a_count(value):
    # True is an int to Python: `units=True` would build a model of one unit.
    from course_lib.layers.masking import check_count

    with pytest.raises(ValueError, match=r"`units` must be a whole number >= 1\. Received: units="):
        check_count(value, "units")
    with pytest.raises(ValueError, match="`max_output_length` must be a whole number"):
        Seq2Seq(10, 9, embedding_dim=4, units=6, max_output_length=value)


@pytest.mark.parametrize(
    "build, name",
    [
        (lambda flag: Seq2Seq(10, 9, embedding_dim=4, units=6, attention=flag), "attention"),
        (lambda flag: Seq2Seq(10, 9, embedding_dim=4, units=6, bidirectional=flag), "bidirectional"),
        (lambda flag: Seq2Seq(10, 9, embedding_dim=4, units=6, deep_output=flag), "deep_output"),
        (lambda flag: Seq2Seq(10, 9, embedding_dim=4, units=6, conditional=flag), "conditional"),
        (lambda flag: GRUEncoder(10, 4, 6, bidirectional=flag), "bidirectional"),
        (lambda flag: AttentionGRUDecoder(9, 4, 6, conditional=flag), "conditional"),
        (lambda flag: AttentionGRUDecoder(9, 4, 6, deep_output=flag), "deep_output"),
        (lambda flag: DocumentClassifier(20, 3, embedding_dim=8, word_units=6, sentence_units=5, bidirectional=flag),
         "bidirectional"),
        (lambda flag: HierarchicalAttentionEncoder(20, 8, 6, 5, bidirectional=flag), "bidirectional"),
        (lambda flag: HierarchicalDialogModel(20, attention=flag), "attention"),
        (lambda flag: ImageCaptioner(12, image_size=32, cnn_filters=(4, 8), deep_output=flag), "deep_output"),
        (lambda flag: BahdanauAttention(4, use_bias=flag), "use_bias"),
    ],
)
def test_switches_must_be_true_or_false(build, name):
    """"no" is truthy: it used to build the other model (a bidirectional encoder, the conditional step) and
    save the string in the config."""
    for flag in ("no", "False", 0, None):
        with pytest.raises(ValueError, match=rf"`{name}` must be True or False. Received: {name}={flag!r}"):
            build(flag)
    build(np.bool_(False))  # a NumPy bool is a bool


def _floats(*shape):
    return np.zeros(shape, "float32")


@pytest.mark.parametrize("call, received", [
    (lambda: HierarchicalAttentionEncoder(12, 4, 3, 2)(np.array([[[5, -1]]], "int32")), "documents with id -1"),
    (lambda: HierarchicalEncoder(12, 4, 3, 2)(np.array([[[5, 12]]], "int32")), "documents with id 12"),
    (lambda: FlatAttentionEncoder(12, 4, 3)(np.array([[[5, -1]]], "int32")), "documents with id -1"),
    (lambda: AttentionGRUDecoder(11, 4, 6)(np.array([[1, -1]], "int32"), _floats(1, 4, 5), _floats(1, 6)),
     "target_inputs with id -1"),
    (lambda: PlainGRUDecoder(11, 4, 6)(np.array([[1, 11]], "int32"), _floats(1, 4, 5), _floats(1, 6)),
     "target_inputs with id 11"),
], ids=["han", "hierarchical", "flat", "attention-decoder", "plain-decoder"])
def test_every_layer_over_token_ids_refuses_ids_outside_its_vocabulary(call, received):
    """As GRUEncoder does: -1 read the embedding's last row (and counted as a real word), and one past the end
    failed inside TensorFlow with InvalidArgumentError."""
    with pytest.raises(ValueError, match=f"outside the vocabulary.*Received: {received}"):
        call()
