"""Defects a second Keras-minded review of course_lib found (2 Dec 2026), one test each.

Each test fails on the code before its fix.
"""

import keras
import numpy as np
import pytest

from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder, HierarchicalEncoder
from course_lib.layers import masking
from course_lib.layers.masking import run_recurrent
from course_lib.models import Seq2Seq
from course_lib.models.captioner import ImageCaptioner
from course_lib.models.document_classifier import FlatAttentionEncoder

VOCAB = 30


def _documents():
    """Two documents of 3 sentences x 4 words: right-padded sentences, and an
    empty sentence between two real ones in the second document."""
    documents = np.array(
        [[[5, 6, 0, 0], [7, 8, 9, 0], [4, 0, 0, 0]],
         [[5, 6, 7, 8], [0, 0, 0, 0], [9, 4, 0, 0]]], "int32")
    return documents


def _is_right_padded_with_a_real_step(mask):
    """What Keras's cuDNN GRU asserts (TensorFlow on a GPU): per row, real steps first, then
    padding, and at least one real step."""
    mask = np.asarray(mask, bool)
    counts = mask.sum(axis=1)
    return bool(np.all(counts >= 1) and np.array_equal(mask, np.arange(mask.shape[1])[None, :] < counts[:, None]))


def _models_and_inputs():
    keras.utils.set_random_seed(0)
    yield "flat document encoder", FlatAttentionEncoder(VOCAB, 4, 5), _documents()
    yield "HAN", HierarchicalAttentionEncoder(VOCAB, 4, 5, 6), _documents()
    yield "plain hierarchical encoder", HierarchicalEncoder(VOCAB, 4, 5, 6, bidirectional=True), _documents()
    seq2seq = Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True)
    left_padded = {"source": np.array([[0, 0, 5, 6], [5, 6, 7, 8]], "int32"),
                   "target_in": np.array([[1, 4], [1, 5]], "int32")}
    yield "Seq2Seq, left-padded source", seq2seq, left_padded


@pytest.mark.parametrize("case", [name for name, _, _ in _models_and_inputs()])
def test_every_recurrent_layer_gets_a_mask_that_cudnn_accepts(case, monkeypatch):
    """In a compiled function Keras's cuDNN GRU fails at run time on any other mask (no fallback).

    There is no GPU here, so the test takes the GPU path (`_cudnn_may_run`) and records the masks
    each recurrent layer receives.
    """
    _, model, inputs = next(item for item in _models_and_inputs() if item[0] == case)
    on_the_cpu_path = keras.tree.map_structure(np.asarray, model(inputs))
    monkeypatch.setattr(masking, "_cudnn_may_run", lambda: True)
    received = []
    original_call = keras.layers.RNN.call

    def recording_call(self, sequences, *args, mask=None, **kwargs):
        received.append((self.name, None if mask is None else np.asarray(mask)))
        return original_call(self, sequences, *args, mask=mask, **kwargs)

    monkeypatch.setattr(keras.layers.RNN, "call", recording_call)
    on_the_gpu_path = keras.tree.map_structure(np.asarray, model(inputs))
    keras.tree.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5), on_the_cpu_path, on_the_gpu_path)
    assert received, "no recurrent layer ran"
    for name, mask in received:
        assert mask is not None, name
        assert _is_right_padded_with_a_real_step(mask), (name, mask.astype(int).tolist())


@pytest.mark.parametrize("bidirectional", [False, True])
def test_run_recurrent_equals_the_layer_on_a_mask_with_holes(bidirectional, monkeypatch):
    """Moving the real steps to the front (the GPU path) changes no final state and no real step's output."""
    monkeypatch.setattr(masking, "_cudnn_may_run", lambda: True)
    keras.utils.set_random_seed(0)
    gru = keras.layers.GRU(6, return_sequences=True, return_state=True)
    rnn = keras.layers.Bidirectional(gru) if bidirectional else gru
    sequences = np.random.default_rng(0).normal(size=(3, 7, 5)).astype("float32")
    mask = np.array([[1, 1, 0, 1, 0, 0, 1], [0, 0, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]], bool)
    ours, theirs = run_recurrent(rnn, sequences, mask), rnn(sequences, mask=mask)
    np.testing.assert_allclose(np.asarray(ours[0])[mask], np.asarray(theirs[0])[mask], atol=1e-6)
    for our_state, their_state in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(np.asarray(our_state), np.asarray(their_state), atol=1e-6)


def test_a_models_dtype_policy_reaches_the_cnn_and_the_plain_hierarchical_grus():
    captioner = ImageCaptioner(12, decoder="option1", image_size=16, cnn_filters=(4, 8), vector_dim=6,
                               embedding_dim=4, units=6, dtype="mixed_float16")
    encoder = captioner.image_encoder
    for layer in [*encoder.convolutions, encoder.pool, encoder.fc, encoder.fc_dropout]:
        assert layer.dtype_policy.name == "mixed_float16", layer.name
    plain = HierarchicalEncoder(VOCAB, 4, 5, 6, dtype="mixed_float16")
    for layer in (plain.word_rnn, plain.sentence_rnn):
        assert layer.dtype_policy.name == "mixed_float16", layer.name


def test_bahdanau_attention_reads_the_keras_mask_that_values_carry():
    """In a functional model the padding of `values` arrives as Keras's implicit mask, not as `mask=`."""
    from course_lib.layers import BahdanauAttention

    keras.utils.set_random_seed(0)
    source = keras.Input((None,), dtype="int32")
    query = keras.Input((6,))
    values = keras.layers.GRU(6, return_sequences=True)(keras.layers.Embedding(10, 4, mask_zero=True)(source))
    context, weights = BahdanauAttention(5)(query, values)
    model = keras.Model([source, query], [context, weights])
    tokens = np.array([[3, 4, 0, 0], [5, 6, 7, 8]], "int32")
    _, weights = model([tokens, np.ones((2, 6), "float32")])
    weights = np.asarray(weights)
    assert np.all(weights[0, 2:] == 0.0), weights  # padding gets no weight
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


def _small_seq2seq(seed=0):
    keras.utils.set_random_seed(seed)
    return Seq2Seq(12, 10, embedding_dim=4, units=6)


def test_ensemble_generate_makes_the_checks_seq2seq_generate_makes():
    from course_lib.decoding.ensemble import Ensemble

    ensemble = Ensemble([_small_seq2seq(0), _small_seq2seq(1)])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ensemble.generate(np.array([[5, -1, 7]], "int32"))  # -1 would read the last embedding row
    with pytest.raises(ValueError, match="beam_width"):
        ensemble.generate(np.array([[5, 6, 7]], "int32"), beam_width=9)  # 10 tokens - <pad> - <GO> = 8
    with pytest.raises(ValueError, match="max_length"):
        ensemble.generate(np.array([[5, 6, 7]], "int32"), max_length=2.5)


def test_the_beam_search_cache_does_not_keep_a_model_alive():
    import gc
    import weakref

    model = _small_seq2seq()
    model.generate(np.array([[5, 6, 7]], "int32"), beam_width=2, max_length=3)
    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None


def test_greedy_decoding_refuses_a_fractional_max_length():
    from course_lib.decoding.greedy import greedy_decode

    model = _small_seq2seq()
    model.build()
    encoder_outputs, initial_state, source_mask = model.encode(np.array([[5, 6, 7]], "int32"))
    memory = model.decoder.prepare_memory(encoder_outputs, initial_state, source_mask)
    with pytest.raises(ValueError, match=r"max_length=0.5"):
        greedy_decode(model.decoder, memory, model.decoder.start_state(initial_state), 1, 2, 0.5)


def test_seq2seq_refuses_an_option_other_than_1_or_2_with_attention_too():
    with pytest.raises(ValueError, match="Received: option=7"):
        Seq2Seq(12, 10, attention=True, option=7)


@pytest.mark.parametrize("encoder", ["han", "plain"])
def test_a_document_classifiers_hierarchical_encoder_is_built_and_counted(encoder):
    from course_lib.models.document_classifier import DocumentClassifier

    model = DocumentClassifier(VOCAB, 3, encoder=encoder, embedding_dim=4, word_units=5, sentence_units=6)
    model(_documents())
    assert model.encoder.built
    assert model.encoder.count_params() + model.classifier.count_params() == model.count_params()
    assert all(weight.path.startswith(f"{model.name}/encoder/") for weight in model.encoder.weights)


def test_the_dialog_models_context_encoder_is_built():
    from course_lib.models.dialog import HierarchicalDialogModel

    model = HierarchicalDialogModel(VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7)
    model.build()
    assert model.encoder.built and model.encoder.count_params() > 0


def _teacher_forced_pass(kind):
    """A fresh model of `kind` and a function running its teacher-forced pass on fixed inputs."""
    from course_lib.models.dialog import HierarchicalDialogModel

    keras.utils.set_random_seed(0)
    if kind == "seq2seq":
        model = Seq2Seq(12, 10, embedding_dim=4, units=6)
        return model, lambda m: m.forward(np.array([[5, 6, 7]], "int32"), np.array([[1, 4]], "int32"))
    if kind == "captioner":
        model = ImageCaptioner(12, decoder="attention", image_size=16, cnn_filters=(4, 8), embedding_dim=4, units=6)
        images = np.random.default_rng(0).uniform(0, 255, (1, 16, 16, 3)).astype("float32")
        return model, lambda m: m.forward({"image": images, "target_in": np.array([[1, 4]], "int32")})
    model = HierarchicalDialogModel(VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7)
    return model, lambda m: m.forward(_documents()[:1], np.array([[1, 4]], "int32"))


@pytest.mark.parametrize("kind", ["seq2seq", "captioner", "dialog"])
def test_a_model_run_only_through_forward_saves_without_the_unbuilt_warning(kind, tmp_path):
    import warnings

    model, forward = _teacher_forced_pass(kind)
    logits, _ = forward(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.save(tmp_path / "model.keras")
    assert not [w for w in caught if "not yet been built" in str(w.message)]
    reloaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(np.asarray(forward(reloaded)[0]), np.asarray(logits), atol=1e-5)
