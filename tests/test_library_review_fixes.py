"""Defects a Keras-minded review of course_lib found (1 Dec 2026), one test each.

Each test fails on the code before the fix: padding with a `pad_id` other than
0, a dtype policy that never reached the sublayers, generation under mixed
precision, a plain decoder used for decoding before training, sample weights,
and decoding options that were accepted silently.
"""

import keras
import numpy as np
import pytest

from course_lib.decoders import PlainGRUDecoder
from course_lib.encoders import GRUEncoder
from course_lib.losses import MaskedTokenAccuracy, MaskedTokenLoss, oracle_weights
from course_lib.models import Seq2Seq
from course_lib.models.language_model import RNNLanguageModel


def test_seq2seq_masks_its_own_pad_id_in_the_source():
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, pad_id=3)
    source, padded = np.array([[5, 6, 7]], "int32"), np.array([[5, 6, 7, 3, 3]], "int32")
    target_in = np.array([[1, 4, 5]], "int32")
    np.testing.assert_allclose(model({"source": padded, "target_in": target_in}),
                               model({"source": source, "target_in": target_in}), atol=1e-5)
    assert np.all(np.asarray(model.alignments(padded, target_in))[0, :, 3:] == 0.0)
    assert model.encoder.get_config()["pad_id"] == 3


def test_an_empty_source_in_a_batch_changes_nothing_for_the_others():
    """The GRU reads one padding step of an all-padding row (Keras's cuDNN GRU asserts on a row with
    no step); the other rows' outputs are those they have alone, and the empty row gets no attention."""
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True)
    source = np.array([[5, 6, 7], [0, 0, 0]], "int32")
    target_in = np.array([[1, 4, 5], [1, 6, 7]], "int32")
    logits = np.asarray(model({"source": source, "target_in": target_in}))
    alone = np.asarray(model({"source": source[:1], "target_in": target_in[:1]}))
    np.testing.assert_allclose(logits[:1], alone, atol=1e-5)
    assert np.all(np.isfinite(logits))
    assert np.all(np.asarray(model.alignments(source, target_in))[1] == 0.0)


def test_encoder_refuses_a_pad_id_outside_the_vocabulary():
    with pytest.raises(ValueError, match="Received: pad_id=12, vocab_size=12"):
        GRUEncoder(12, 4, 6, pad_id=12)


def test_a_models_dtype_policy_reaches_every_sublayer():
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True, dtype="mixed_float16")
    model.build()
    for layer in (model.encoder, model.encoder.embedding, model.encoder.rnn, model.encoder.bridge,
                  model.decoder, model.decoder.attention, model.decoder.cell):
        assert layer.dtype_policy.name == "mixed_float16", layer.name
    assert model.decoder.output_layer.dtype_policy.name == "float32"  # logits stay float32
    logits = model({"source": np.array([[5, 6, 0]], "int32"), "target_in": np.array([[1, 4]], "int32")})
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_language_model_generates_under_mixed_precision(cell):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = RNNLanguageModel(10, embedding_dim=4, units=6, cell=cell)
        tokens, log_probs = layer.generate(num_samples=2, max_length=5)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert np.asarray(tokens).shape == (2, 5) and np.all(np.isfinite(np.asarray(log_probs)))


def test_plain_decoder_can_decode_before_any_teacher_forced_call():
    decoder = PlainGRUDecoder(10, 4, 6, option=2)
    outputs = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")
    state = outputs[:, -1]
    memory = decoder.prepare_memory(outputs, state)  # what greedy and beam decoding call first
    assert decoder.built and "encoding" in memory
    logits, _ = decoder(np.array([[1, 4], [1, 5]], "int32"), outputs, state)  # failed: "already built"
    assert tuple(logits.shape) == (2, 2, 10) and len(decoder.weights) == 6


def _logits_and_targets():
    targets = np.array([[3, 2, 0, 0], [4, 4, 4, 2]])
    logits = np.random.default_rng(0).normal(size=(2, 4, 6)).astype("float32")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_losses = -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
    return targets, logits, token_losses


def test_token_loss_weights_examples_and_tokens():
    targets, logits, token_losses = _logits_and_targets()
    real = targets != 0
    loss = MaskedTokenLoss()
    np.testing.assert_allclose(float(loss(targets, logits)), token_losses[real].mean(), rtol=1e-5)
    # Example weights [1, 0]: the mean over example 0's real tokens (was the plain mean times 0.5).
    np.testing.assert_allclose(float(loss(targets, logits, sample_weight=np.array([1.0, 0.0]))),
                               token_losses[0, real[0]].mean(), rtol=1e-5)
    token_weights = np.array([[2.0, 1.0, 5.0, 5.0], [1.0, 0.0, 0.0, 1.0]])  # padding stays out
    expected = (token_losses * token_weights * real).sum() / (token_weights * real).sum()
    np.testing.assert_allclose(float(loss(targets, logits, sample_weight=token_weights)), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Received: sample_weight.shape"):
        loss(targets, logits, sample_weight=np.ones((2, 4, 1)))


def test_token_accuracy_weights_examples():
    targets = np.array([[3, 2, 0, 0], [4, 4, 4, 2]])
    logits = np.zeros((2, 4, 6), "float32")
    logits[0, 0, 3] = logits[0, 1, 2] = 5.0  # example 0 right, example 1 wrong
    accuracy = MaskedTokenAccuracy()
    accuracy.update_state(targets, logits, sample_weight=np.array([1.0, 0.0]))
    assert float(accuracy.result()) == 1.0  # was 1/3: the weights were ignored


def test_sample_weights_reach_the_loss_in_fit():
    keras.utils.set_random_seed(0)
    model = Seq2Seq(12, 10, embedding_dim=4, units=6)
    model.compile()
    inputs = {"source": np.array([[5, 6, 0], [7, 8, 9]], "int32"), "target_in": np.array([[1, 4, 5], [1, 6, 7]], "int32")}
    targets = np.array([[4, 5, 2], [6, 7, 2]], "int32")
    first_only = model.evaluate(inputs, targets, sample_weight=np.array([1.0, 0.0]), verbose=0, return_dict=True)
    alone = model.evaluate({k: v[:1] for k, v in inputs.items()}, targets[:1], verbose=0, return_dict=True)
    np.testing.assert_allclose(first_only["loss"], alone["loss"], rtol=1e-5)


@pytest.mark.parametrize(
    "options, received",
    [(dict(beam_width=0), "beam_width=0"), (dict(beam_width=2.5), "beam_width=2.5"),
     (dict(beam_width=3, length_penalty=float("nan")), "length_penalty=nan"),
     (dict(beam_width=3, length_penalty=-1.0), "length_penalty=-1.0")],
)
def test_decoding_refuses_impossible_options(options, received):
    model = Seq2Seq(12, 10, embedding_dim=4, units=6)
    with pytest.raises(ValueError, match=f"Received: {received}"):
        model.generate(np.array([[5, 6, 7]], "int32"), max_length=4, **options)


def test_oracle_weights_refuse_a_negative_link():
    with pytest.raises(ValueError, match="links source position -1"):
        oracle_weights([[{-1}]], 1, 3)
