"""Token ids outside a model's vocabularies are refused where their values are known: NumPy arrays given to
`fit`, `evaluate` and `predict`, and eager calls. An embedding lookup reads row -1 as the last token, and one
past the end fails deep inside TensorFlow (a GPU reads zeros)."""

import keras
import numpy as np
import pytest

from course_lib.models.captioner import ImageCaptioner
from course_lib.models.dialog import HierarchicalDialogModel
from course_lib.models.document_classifier import DocumentClassifier
from course_lib.models.seq2seq import Seq2Seq


def seq2seq():
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, max_output_length=5)
    model.compile(keras.optimizers.Adam(1e-2))
    return model


SOURCE = np.array([[3, 5, 6], [4, 4, 0]], "int32")
TARGET_IN = np.array([[1, 5, 6], [1, 4, 7]], "int32")
TARGET_OUT = np.array([[5, 6, 2], [4, 7, 2]], "int32")


@pytest.mark.parametrize("bad_id, received", [(-1, "id -1"), (12, "id 12")])
def test_seq2seq_predict_and_eager_calls_refuse_source_ids_outside_the_vocabulary(bad_id, received):
    """`predict(source)` decoded -1 as the last token and gave a TensorFlow error for 12."""
    model = seq2seq()
    bad = SOURCE.copy()
    bad[0, 0] = bad_id
    with pytest.raises(ValueError, match=f"`source` holds ids outside the vocabulary \\[0, 12\\).*{received}"):
        model.predict(bad, verbose=0)
    with pytest.raises(ValueError, match=received):
        model.predict({"source": bad}, verbose=0)
    with pytest.raises(ValueError, match=received):
        model(bad)  # eager greedy decoding
    with pytest.raises(ValueError, match=received):
        model({"source": bad, "target_in": TARGET_IN})  # eager teacher forcing
    assert model.predict(SOURCE, verbose=0).shape == (2, 5)  # the same model still decodes good ids


def test_seq2seq_fit_and_evaluate_check_every_id_array_against_its_own_vocabulary():
    model = seq2seq()
    bad_target_in = TARGET_IN.copy()
    bad_target_in[1, 2] = 10  # a source id (12 of them), not a target id (10)
    with pytest.raises(ValueError, match="`target_in` holds ids outside the vocabulary \\[0, 10\\)"):
        model.fit({"source": SOURCE, "target_in": bad_target_in}, TARGET_OUT, verbose=0)
    with pytest.raises(ValueError, match="`target_in`"):
        model.fit((SOURCE, bad_target_in), TARGET_OUT, verbose=0)
    with pytest.raises(ValueError, match="`targets` holds ids outside the vocabulary \\[0, 10\\).*id -1"):
        model.evaluate({"source": SOURCE, "target_in": TARGET_IN}, TARGET_OUT - 3, verbose=0)
    history = model.fit({"source": SOURCE, "target_in": TARGET_IN}, TARGET_OUT, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


def test_document_dialog_and_caption_models_check_their_ids_and_labels():
    documents = np.random.default_rng(0).integers(1, 20, size=(4, 3, 5)).astype("int32")
    classifier = DocumentClassifier(20, 3, embedding_dim=4, word_units=4, sentence_units=4)
    classifier.compile("adam", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="`documents` holds ids outside the vocabulary \\[0, 20\\)"):
        classifier.predict(documents + 1, verbose=0)
    with pytest.raises(ValueError, match="`labels` holds ids outside the vocabulary \\[0, 3\\).*id 3"):
        classifier.fit(documents, np.array([0, 1, 2, 3]), verbose=0)

    dialog = HierarchicalDialogModel(20, embedding_dim=4, word_units=4, sentence_units=4, units=6)
    dialog.compile()
    with pytest.raises(ValueError, match="`context` holds ids outside the vocabulary"):
        dialog.fit({"context": documents - 2, "target_in": np.ones((4, 3), "int32")}, np.ones((4, 3)), verbose=0)

    captioner = ImageCaptioner(vocab_size=15, encoder="features", feature_locations=4, feature_channels=8, feature_vector_dim=8,
                               embedding_dim=4, units=6, attention_units=5)
    features = {"locations": np.zeros((2, 4, 8), "float32"), "vector": np.zeros((2, 8), "float32"),
                "target_in": np.array([[1, 15], [1, 4]], "int32")}
    captioner.compile()
    with pytest.raises(ValueError, match="`target_in` holds ids outside the vocabulary \\[0, 15\\).*id 15"):
        captioner.evaluate(features, np.array([[4, 2], [4, 2]]), verbose=0)
