"""The token loss and accuracy with sample weights (per example or per token), in `fit` too, and
the oracle alignment weights of the supervised-attention loss."""

import re

import keras
import numpy as np
import pytest

from course_lib.losses import MaskedTokenAccuracy, MaskedTokenLoss, SmoothedMaskedTokenLoss, oracle_weights
from course_lib.models import Seq2Seq


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
    np.testing.assert_allclose(float(loss(targets, logits, sample_weight=np.array([[1.0], [0.0]]))),
                               token_losses[0, real[0]].mean(), rtol=1e-5)


@pytest.mark.parametrize("shape", [(4,), (3,), (2, 3), (1, 4), (3, 1)])
def test_sample_weights_of_another_shape_than_the_targets_are_refused(shape):
    targets, logits, _ = _logits_and_targets()
    message = re.escape(f"Received: sample_weight.shape={shape}, y_true.shape=(2, 4)")
    with pytest.raises(ValueError, match=message):
        MaskedTokenLoss()(targets, logits, sample_weight=np.ones(shape))
    with pytest.raises(ValueError, match=message):
        MaskedTokenAccuracy().update_state(targets, logits, sample_weight=np.ones(shape))


def test_per_token_weights_for_a_batch_of_one_are_not_taken_for_example_weights():
    # (tgt_len,) used to broadcast as (batch, 1) = (4, 1) against (1, 4): the weights were lost.
    targets, logits, token_losses = _logits_and_targets()
    loss = MaskedTokenLoss()
    with pytest.raises(ValueError, match=r"Received: sample_weight.shape=\(4,\), y_true.shape=\(1, 4\)"):
        loss(targets[1:], logits[1:], sample_weight=np.array([1.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(float(loss(targets[1:], logits[1:], sample_weight=np.array([[1.0, 0.0, 0.0, 0.0]]))),
                               token_losses[1, 0], rtol=1e-5)


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


def test_oracle_weights_refuse_a_negative_link():
    with pytest.raises(ValueError, match="links source position -1"):
        oracle_weights([[{-1}]], 1, 3)


def test_oracle_weights_count_a_repeated_link_once():
    # [1, 1] used to give the row [0, 0.5, 0]: weights that do not sum to 1.
    np.testing.assert_array_equal(oracle_weights([[[1, 1], [0, 2, 2]]], 2, 3), [[[0, 1, 0], [0.5, 0, 0.5]]])


def test_smoothed_loss_spreads_over_the_whole_vocabulary():
    """With equal logits every token has probability 1/V, so the loss is log V whatever the smoothed
    target is, as long as it sums to one (epsilon over all V tokens, the right one included)."""
    targets = np.array([[4, 5, 2, 0]])
    loss = float(SmoothedMaskedTokenLoss(0.1)(targets, np.zeros((1, 4, 7), "float32")))
    assert loss == pytest.approx(np.log(7), rel=1e-5)


def test_smoothed_loss_matches_the_formula_on_random_logits():
    """-((1 - eps) log p_y + (eps / V) sum_k log p_k) per real token, averaged over the real tokens.

    Equal logits (above) cannot tell where the smoothing mass goes; random ones can.
    """
    epsilon, vocab = 0.1, 7
    targets = np.array([[4, 5, 2, 0], [3, 0, 0, 0]])  # 0 is padding: 4 real tokens
    logits = np.random.default_rng(0).normal(size=(2, 4, vocab)).astype("float32")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    per_token = -((1 - epsilon) * np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
                  + epsilon / vocab * log_probs.sum(-1))
    expected = per_token[targets != 0].mean()
    assert float(SmoothedMaskedTokenLoss(epsilon)(targets, logits)) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("predicted_shape", [(1, 4, 5), (2, 1, 5), (2, 4)])
def test_predictions_that_do_not_match_the_targets_are_refused(predicted_shape):
    """A batch of one, or a single step, used to broadcast in the accuracy and be scored (0.6, 0.75)."""
    targets = np.array([[3, 3, 1, 0], [2, 4, 0, 0]], "int32")
    predictions = np.zeros(predicted_shape, "float32")
    for score in (MaskedTokenLoss(), MaskedTokenAccuracy()):
        call = score if isinstance(score, MaskedTokenLoss) else score.update_state
        with pytest.raises(ValueError, match=r"Received: y_true.shape=\(2, 4\), y_pred.shape="):
            call(targets, predictions)


@pytest.mark.parametrize("reduction", ["none", "sum", None])
def test_the_token_loss_refuses_another_reduction(reduction):
    """It always returns the mean over real tokens; 'none' and 'sum' used to be taken and ignored."""
    with pytest.raises(ValueError, match=r"Received: reduction="):
        MaskedTokenLoss(reduction=reduction)
    with pytest.raises(ValueError, match=r"Received: reduction="):
        SmoothedMaskedTokenLoss(reduction=reduction)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_token_losses_on_half_precision_logits_are_computed_in_float32(dtype):
    """Mixed precision hands the loss float16 or bfloat16 logits. The sum over 8192 tokens of about 12 each
    overflowed float16 to inf (bfloat16 kept 3 digits of it), and the smoothed loss's float32 one-hot could
    not be multiplied by half-precision log-probabilities."""
    rng = np.random.default_rng(0)
    targets = rng.integers(1, 50, size=(128, 64))  # no padding, so the mean is Keras's own
    half = keras.ops.cast(5.0 * rng.normal(size=(128, 64, 50)).astype("float32"), dtype)  # (batch, tgt_len, vocab)
    logits = keras.ops.convert_to_numpy(keras.ops.cast(half, "float32"))  # the same values, in float32
    expected = float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(targets, logits))
    assert float(MaskedTokenLoss()(targets, half)) == pytest.approx(expected, rel=1e-5)
    smoothed = SmoothedMaskedTokenLoss(0.1)
    assert float(smoothed(targets, half)) == pytest.approx(float(smoothed(targets, logits)), rel=1e-5)
