"""The course's attention layers train with XLA (`jit_compile=True`).

With TensorFlow, `compile()`'s default `jit_compile="auto"` turns XLA on when a
GPU is visible (Colab). The attentional decoder once failed there: the gradient
of `v_att^T tanh(...)`, written as a matmul by a vector, became a transpose whose
permutation XLA could not know at compile time inside the decoder's loop. These
tests train, under XLA on the CPU, the two models where `BahdanauAttention`
runs inside a decoder loop: Seq2Seq (every decoder option at once) and the
captioner. XLA compiles are slow on a CPU (15-30 s each), so the models built
from the same layers are not repeated here. Checked once by hand with the fix
(1 Dec 2026, all trained): plain decoders (options 1 and 2), supervised
attention, the captioner's options 1 and 2, the dialog model, the three
language models, and the three document classifiers (`AttentionPooling`, which
runs outside any loop, uses the same einsum).
"""

import keras
import numpy as np
import tensorflow as tf

from course_lib.models.captioner import ImageCaptioner
from course_lib.models.seq2seq import Seq2Seq

TARGET_IN = np.array([[1, 4, 5], [1, 6, 3], [1, 7, 7], [1, 3, 6]], "int32")
TARGET_OUT = np.array([[4, 5, 2], [6, 3, 2], [7, 7, 2], [3, 6, 2]], "int32")


def _trains_under_xla(model, inputs, targets, **compile_kwargs):
    """Four examples in batches of 2 from a `tf.data` pipeline, whose batch size is unknown when XLA
    compiles, as in the course's pipelines (with a fully static shape the bug above did not show). All
    batches have the same size, so XLA compiles once (NumPy arrays of 3 rows compiled for 2 and for 1)."""
    model.compile(jit_compile=True, **compile_kwargs)
    batches = tf.data.Dataset.from_tensor_slices((inputs, targets)).batch(2)
    assert batches.element_spec[1].shape[0] is None  # the unknown batch size that the bug needs
    history = model.fit(batches, epochs=2, verbose=0).history["loss"]
    assert len(history) == 2 and np.all(np.isfinite(history)), history


def test_seq2seq_with_attention_trains_under_xla():
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, attention=True, bidirectional=True, conditional=True,
                    deep_output=True, teacher_forcing_ratio=0.5)
    source = np.array([[5, 6, 7, 0], [8, 9, 4, 3], [3, 4, 0, 0], [9, 8, 7, 6]], "int32")
    _trains_under_xla(model, {"source": source, "target_in": TARGET_IN}, TARGET_OUT)


def test_captioner_with_attention_trains_under_xla():
    keras.utils.set_random_seed(0)
    model = ImageCaptioner(10, decoder="attention", encoder="features", feature_locations=4, feature_channels=5,
                           feature_vector_dim=6, units=6, embedding_dim=4)
    rng = np.random.default_rng(0)
    inputs = {"locations": rng.random((4, 4, 5), dtype="float32"), "vector": rng.random((4, 6), dtype="float32"),
              "target_in": TARGET_IN}
    _trains_under_xla(model, inputs, TARGET_OUT)

