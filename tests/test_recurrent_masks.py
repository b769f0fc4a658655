"""Masks that every recurrent layer receives: what Keras's cuDNN GRU accepts.

On TensorFlow with a GPU, Keras runs a masked GRU with cuDNN, which accepts
only right-padded masks with a real step in every row, and fails at run time
inside compiled functions on any other (there is no fallback). The course's
encoders hand their RNNs such masks through `course_lib.layers.masking.run_recurrent`.
There is no GPU here, so these tests take the GPU path (`_cudnn_may_run`).
"""

import keras
import numpy as np
import pytest

from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder, HierarchicalEncoder
from course_lib.layers import masking
from course_lib.layers.masking import run_recurrent
from course_lib.models import Seq2Seq
from course_lib.models.document_classifier import FlatAttentionEncoder
from layer_testing import DOCUMENT_VOCAB, documents_with_an_empty_sentence


def _is_right_padded_with_a_real_step(mask):
    """What Keras's cuDNN GRU asserts (TensorFlow on a GPU): per row, real steps first, then
    padding, and at least one real step."""
    mask = np.asarray(mask, bool)
    counts = mask.sum(axis=1)
    return bool(np.all(counts >= 1) and np.array_equal(mask, np.arange(mask.shape[1])[None, :] < counts[:, None]))


def _models_and_inputs():
    keras.utils.set_random_seed(0)
    yield "flat document encoder", FlatAttentionEncoder(DOCUMENT_VOCAB, 4, 5), documents_with_an_empty_sentence()
    yield "HAN", HierarchicalAttentionEncoder(DOCUMENT_VOCAB, 4, 5, 6), documents_with_an_empty_sentence()
    yield "plain hierarchical encoder", HierarchicalEncoder(DOCUMENT_VOCAB, 4, 5, 6, bidirectional=True), documents_with_an_empty_sentence()
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
