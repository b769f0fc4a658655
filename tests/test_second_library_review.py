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
