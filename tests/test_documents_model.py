"""Document classifier (three encoders), classification metrics, plots."""

import inspect
import os

import keras
import numpy as np
import pytest

from course_lib.metrics.classification import (
    accuracy, confusion_matrix, macro_f1, per_class_f1, planted_sentence_top1,
)
from course_lib.models.document_classifier import DocumentClassifier, FlatAttentionEncoder
from layer_testing import check_output_shapes, check_reload_keeps_training, run_layer_test


def documents(seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 20, size=(4, 3, 5)).astype("int32")
    ids[0, 2] = 0
    ids[1, :, 3:] = 0
    return ids


@pytest.mark.parametrize("encoder", ["han", "plain", "flat"])
def test_classifier_outputs_probabilities_and_reloads(encoder, tmp_path):
    sentence_units = {} if encoder == "flat" else {"sentence_units": 5}  # the flat encoder has no sentence GRU
    model = DocumentClassifier(20, 3, encoder=encoder, embedding_dim=8, word_units=6, **sentence_units)
    ids = documents()
    probabilities = np.asarray(model(ids))
    assert probabilities.shape == (4, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    padded = np.zeros((4, 5, 7), "int32")
    padded[:, :3, :5] = ids
    np.testing.assert_allclose(np.asarray(model(padded)), probabilities, atol=1e-5)
    explained = model.explain(ids)
    np.testing.assert_allclose(explained["probabilities"], probabilities, atol=1e-5)
    if encoder == "plain":  # the lecture's plain encoder has no attention weights
        assert set(explained) == {"probabilities"}
    else:
        assert explained["sentence_weights"].shape == (4, 3)
        assert np.all(explained["sentence_weights"][0, 2] == 0.0)
        assert explained["word_weights"].shape == (4, 3, 5)
        assert np.all(explained["word_weights"][ids == 0] == 0.0)
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(reloaded(ids)), probabilities, atol=1e-6)
    assert reloaded.get_config()["encoder"] == encoder


def test_classifier_learns_a_tiny_task():
    rng = np.random.default_rng(1)
    ids = rng.integers(3, 20, size=(64, 3, 4)).astype("int32")
    labels = rng.integers(0, 2, size=64)
    ids[np.arange(64), rng.integers(0, 3, 64), 0] = np.where(labels == 1, 1, 2)  # one deciding word
    keras.utils.set_random_seed(0)
    model = DocumentClassifier(20, 2, embedding_dim=8, word_units=8, sentence_units=8)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.fit(ids, labels, epochs=15, batch_size=16, verbose=0)
    assert accuracy(labels, np.asarray(model(ids)).argmax(-1)) > 0.9


def test_flat_encoder_layer_checks():
    ids = documents()
    padded = np.zeros((4, 4, 6), "int32")
    padded[:, :3, :5] = ids

    def compare(original, again):
        np.testing.assert_allclose(original[0], again[0], atol=1e-5)
        np.testing.assert_allclose(original[1], again[1][:, :3, :5], atol=1e-5)

    run_layer_test(
        FlatAttentionEncoder, {"vocab_size": 20, "embedding_dim": 6, "units": 5}, {"documents": ids},
        expected_output_shapes=[(4, 10), (4, 3, 5)], padding_check=({"documents": padded}, compare), atol=1e-5,
    )


def test_classifier_rejects_bad_arguments():
    with pytest.raises(ValueError, match="encoder"):
        DocumentClassifier(20, 3, encoder="cnn")
    with pytest.raises(ValueError, match="num_classes"):
        DocumentClassifier(20, 1)


@pytest.mark.parametrize("encoder, options, message", [
    ("plain", dict(attention_units=16, sentence_state_dropout=0.5),
     r"apply to the \"han\" encoder only .*Received: attention_units=16, sentence_state_dropout=0.5, "
     r"encoder='plain'"),
    ("flat", dict(bidirectional=False, sentence_units=999, sentence_state_dropout=0.5),
     r"apply to the hierarchical encoders .*Received: sentence_units=999, bidirectional=False, "
     r"sentence_state_dropout=0.5, encoder='flat'"),
])
def test_classifier_refuses_options_its_encoder_never_reads(encoder, options, message):
    # These used to give the same model as the defaults (the flat encoder stayed bidirectional).
    with pytest.raises(ValueError, match=message):
        DocumentClassifier(20, 3, encoder=encoder, **options)
    defaults = {name: inspect.signature(DocumentClassifier).parameters[name].default for name in options}
    assert DocumentClassifier(20, 3, encoder=encoder, **defaults).encoder_kind == encoder  # the defaults are fine


def test_a_classifier_saved_with_options_its_encoder_never_read_still_loads():
    # The documents task once gave every encoder `sentence_units=50` on real data.
    for encoder, unread in (("flat", dict(sentence_units=50, bidirectional=False, sentence_state_dropout=0.5)),
                            ("plain", dict(attention_units=16, sentence_state_dropout=0.5))):
        config = {**DocumentClassifier(20, 3, encoder=encoder, embedding_dim=8, word_units=6).get_config(), **unread}
        reloaded = DocumentClassifier.from_config(config)
        assert reloaded.encoder_kind == encoder and reloaded.word_units == 6
        assert all(reloaded.get_config()[name] != value for name, value in unread.items())


def test_metrics_against_hand_computed_values():
    truth = [0, 0, 1, 1, 2, 2]
    guess = [0, 1, 1, 1, 2, 0]
    assert accuracy(truth, guess) == pytest.approx(4 / 6)
    assert confusion_matrix(truth, guess).tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]
    # class 0: P=1/2 R=1/2 F=1/2; class 1: P=2/3 R=1 F=0.8; class 2: P=1 R=1/2 F=2/3
    np.testing.assert_allclose(per_class_f1(truth, guess), [0.5, 0.8, 2 / 3])
    assert macro_f1(truth, guess) == pytest.approx((0.5 + 0.8 + 2 / 3) / 3)
    weights = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
    assert planted_sentence_top1(weights, [1, 2]) == 0.5
    with pytest.raises(ValueError, match="same length"):
        accuracy([0, 1], [0])
    with pytest.raises(ValueError, match="planted_index"):
        planted_sentence_top1(weights, [0, 3])


def test_document_pictures(tmp_path):
    from course_lib.plots.documents import confusion_matrix_plot, document_figure, document_html

    sentences = [["the", "team", "won"], ["it", "<rain>", "again"]]
    sentence_weights = np.array([0.8, 0.2, 0.0])
    word_weights = np.array([[0.1, 0.8, 0.1, 0.0], [0.3, 0.3, 0.4, 0.0], [0, 0, 0, 0]])
    page = document_html(sentences, sentence_weights, word_weights, title="sport", highlight=0)
    assert page.count("<tr>") == 2 and "&lt;rain&gt;" in page and "0.80" in page
    long_words = [["neighbourhood", "remembered", "wrote", "referendum", "x"], ["it", "<rain>", "again"]]
    figure = document_figure(long_words, sentence_weights, word_weights=None, title="sport", highlight=0)
    figure.savefig(tmp_path / "doc.png")
    assert (tmp_path / "doc.png").stat().st_size > 1000
    renderer = figure.canvas.get_renderer()
    first_line = sorted((t for t in figure.axes[0].texts if t.get_visible() and t.get_position()[1] == 0
                         and t.get_position()[0] > 0.15), key=lambda t: t.get_position()[0])
    boxes = [t.get_window_extent(renderer) for t in first_line]
    assert [t.get_text() for t in first_line] == long_words[0] + ["\u25c0"]  # the marker ends the planted sentence
    assert all(left.x1 < right.x0 for left, right in zip(boxes, boxes[1:]))  # no two words overlap
    axes = confusion_matrix_plot([[3, 1], [0, 4]], ["a", "b"])
    assert len(axes.texts) == 4
    with pytest.raises(ValueError, match="sentence weight"):
        document_html(sentences, [1.0], word_weights)
    with pytest.raises(ValueError, match="square"):
        confusion_matrix_plot([[1, 2]], ["a"])


def test_words_of_an_ignored_sentence_stay_pale():
    """Word shading is alpha_ij times alpha_i (each relative to its largest), in the HTML and the figure."""
    import re

    from course_lib.plots.documents import document_figure, document_html, word_shades

    sentences = [["the", "coach", "won"], ["an", "old", "bridge"]]
    sentence_weights = np.array([1.0, 0.0])
    word_weights = np.array([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05]])  # sentence 1 peaks too, but is ignored
    shades = word_shades(sentence_weights, word_weights, sentences)
    assert np.allclose(shades[0], [0.125, 1.0, 0.125]) and np.allclose(shades[1], 0.0)
    alphas = [float(a) for a in re.findall(r"rgba\(230, 80, 30, ([0-9.]+)\)", document_html(sentences, sentence_weights,
                                                                                          word_weights))]
    assert alphas == [0.11, 0.85, 0.11, 0.0, 0.0, 0.0]
    figure = document_figure(sentences, sentence_weights, word_weights)
    faces = {t.get_text(): t.get_bbox_patch().get_facecolor() for t in figure.axes[0].texts if t.get_bbox_patch()}
    assert faces["bridge"] == faces["an"] != faces["coach"]  # "an" (0.9 in its sentence) is as pale as "bridge"
    # The PNG shades as the HTML does: the same colour at the same opacity, and no box at all for a weight of 0
    # (a colormap's lightest colour used to draw a peach box behind every unweighted word).
    assert [round(faces[word][3], 2) for word in ("the", "coach", "won", "an")] == [0.11, 0.85, 0.11, 0.0]
    assert np.allclose(faces["coach"][:3], np.array([230, 80, 30]) / 255)


def test_classifier_takes_numpy_integer_sizes():
    # `labels.max() + 1` is a NumPy integer: `num_classes` was refused, and the other sizes reached Keras's layers.
    labels = np.array([0, 2, 1])
    for encoder in ("han", "plain", "flat"):
        model = DocumentClassifier(np.int64(20), labels.max() + 1, encoder=encoder, embedding_dim=np.int64(8),
                                   word_units=np.int32(6))
        assert np.asarray(model(documents())).shape == (4, 3)
        config = model.get_config()
        assert type(config["num_classes"]) is int and type(config["word_units"]) is int
    with pytest.raises(ValueError, match=r"`num_classes` must be a whole number >= 2. Received: num_classes=np.int64"):
        DocumentClassifier(20, np.int64(1))


def test_flat_encoder_output_shape_matches_its_outputs():
    # `compute_output_shape` raised NotImplementedError.
    encoder = FlatAttentionEncoder(20, 4, 5)
    shapes = check_output_shapes(encoder, {"documents": documents()}, {"documents": (None, None, None)})
    assert shapes == [(None, 10), (None, None, None)]


def test_a_reloaded_classifier_evaluates_alike_and_trains_on(tmp_path):
    # It reloaded compiled already (its `compile` is Keras's own); kept so, like the other models.
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 20, size=(8, 3, 4)).astype("int32")
    model = DocumentClassifier(20, 3, embedding_dim=8, word_units=6, sentence_units=5)
    model.compile(keras.optimizers.Adam(1e-2), "sparse_categorical_crossentropy", metrics=["accuracy"])
    check_reload_keeps_training(model, ids, rng.integers(0, 3, 8), os.path.join(tmp_path, "documents.keras"))


@pytest.mark.parametrize("encoder", ["han", "plain", "flat"])
def test_a_classifier_explained_first_still_predicts_and_trains(encoder):
    """`explain` on a fresh model built the encoder alone and left the model unbuilt, so the next call built the
    same sub-layers again and Keras refused every later call, `predict` and `fit` for good."""
    sizes = {} if encoder == "flat" else {"sentence_units": 5}
    model = DocumentClassifier(20, 3, encoder=encoder, embedding_dim=8, word_units=6, **sizes)
    ids = documents()
    explained = model.explain(ids)
    assert model.built
    np.testing.assert_allclose(np.asarray(model(ids)), explained["probabilities"], atol=1e-5)
    model.compile(keras.optimizers.Adam(1e-2), "sparse_categorical_crossentropy")
    np.testing.assert_allclose(model.predict(ids, verbose=0), explained["probabilities"], atol=1e-5)
    history = model.fit(ids, np.array([0, 1, 2, 0]), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("encoder", ["han", "flat"])
def test_explained_weights_are_float32_under_a_mixed_policy(encoder):
    """They came back in bfloat16 (which NumPy does not treat as a float) or float16, and the flat encoder's
    sentence weights were summed in half precision; the other models return float32 alignments."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        sizes = {"sentence_units": 5} if encoder == "han" else {}
        model = DocumentClassifier(20, 3, encoder=encoder, embedding_dim=8, word_units=6, **sizes)
        explained = model.explain(np.random.default_rng(0).integers(1, 20, size=(2, 3, 4)))
    finally:
        keras.config.set_dtype_policy(previous)
    for key in ("word_weights", "sentence_weights", "probabilities"):
        assert explained[key].dtype == np.float32, (key, explained[key].dtype)
    np.testing.assert_allclose(explained["sentence_weights"].sum(-1), 1.0, atol=2e-3)  # bfloat16-rounded weights


def test_planted_top1_says_how_many_documents_it_was_scored_on():
    # Planted top-1 skips documents whose planted sentence the pipeline's `max_sentences` cut off; it was
    # reported next to `documents` (every document) with nothing to say how many it covered.
    from dataclasses import replace

    from course_lib.data.documents import generate_documents
    from course_lib.tasks.documents import build_classifier, evaluate_documents, explain_batches
    from course_lib.text.documents import DocumentPipeline

    docs = generate_documents(40, seed=0)
    pipeline = DocumentPipeline.from_texts(docs.texts, max_sentences=4, max_words=20)
    keras.utils.set_random_seed(0)
    model = build_classifier(len(pipeline.vocabulary), len(docs.class_names), "han",
                             embedding_dim=8, word_units=4, sentence_units=4)
    metrics = evaluate_documents(model, pipeline, docs)
    planted = np.asarray(docs.planted_index)
    inside = planted < 4
    assert 0 < inside.sum() < len(docs)  # some planted sentences were cut off
    assert metrics["documents"] == 40 and metrics["planted_documents"] == int(inside.sum())
    ids, _ = pipeline.encode(docs.texts, warn=False)
    weights = explain_batches(model, ids)["sentence_weights"]
    assert metrics["planted_sentence_top1"] == planted_sentence_top1(weights[inside], planted[inside])
    # None left to score: said as 0 documents (it used to raise the metric's shape error).
    late = np.flatnonzero(~inside)
    cut = replace(docs, texts=[docs.texts[i] for i in late], labels=docs.labels[late], planted_index=planted[late])
    metrics = evaluate_documents(model, pipeline, cut)
    assert metrics["documents"] == len(late) and metrics["planted_documents"] == 0
    assert metrics["planted_sentence_top1"] is None
