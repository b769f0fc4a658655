"""Token-level loss and accuracy that ignore padding (id 0), and the loss that
supervises attention with a gold alignment."""

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="course_lib")
class MaskedTokenLoss(keras.losses.Loss):
    """Sum of cross-entropies over real target tokens, divided by their number.

    `L = -(1/N) sum_{real t} log P(y_t = l_t | y_<t, x)`, where padding
    (`y_true == pad_id`) contributes nothing and is not counted in `N`.
    """

    def __init__(self, pad_id=0, name="masked_token_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        per_token = keras.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)
        real = ops.cast(ops.not_equal(y_true, self.pad_id), per_token.dtype)  # (batch, tgt_len)
        return ops.sum(per_token * real) / ops.maximum(ops.sum(real), 1.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}


@keras.saving.register_keras_serializable(package="course_lib")
class MaskedTokenAccuracy(keras.metrics.Metric):
    """Share of real (non-padding) target tokens predicted correctly."""

    def __init__(self, pad_id=0, name="token_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        real = ops.not_equal(y_true, self.pad_id)
        hits = ops.logical_and(real, ops.equal(predicted, y_true))
        self.correct.assign_add(ops.sum(ops.cast(hits, "float32")))
        self.count.assign_add(ops.sum(ops.cast(real, "float32")))

    def result(self):
        return self.correct / ops.maximum(self.count, 1.0)

    def reset_state(self):
        self.correct.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}


# -- supervised attention ------------------------------------------------------------------


def oracle_weights(gold_links, target_length, source_length):
    """The lecture's "oracle" attention weights from a gold word alignment.

    Target word `t` spreads its weight evenly over the source words linked to
    it (two links: 0.5 each, as for "going" <- "ja", "raha"); a word linked to
    nothing, the `<stop>` step and padding get a row of zeros, which the loss
    below skips.

    Args:
        gold_links: per example, a list over target words of the linked source
            positions (a set/list of ints, or an empty set).
        target_length, source_length: padded sizes of the result.

    Returns:
        float32 array `(batch, target_length, source_length)`.
    """
    weights = np.zeros((len(gold_links), target_length, source_length), dtype="float32")
    for example, links_per_word in enumerate(gold_links):
        if len(links_per_word) > target_length:
            raise ValueError(
                f"Example {example} has {len(links_per_word)} target words. "
                f"Received: target_length={target_length}"
            )
        for step, links in enumerate(links_per_word):
            links = sorted(links or ())
            if links and max(links) >= source_length:
                raise ValueError(
                    f"Example {example}, target word {step} links source position {max(links)}. "
                    f"Received: source_length={source_length}"
                )
            weights[example, step, links] = 1.0 / max(len(links), 1)
    return weights


def attention_supervision_loss(oracle, alignments):
    """Squared error between oracle and predicted attention weights.

    `L_att = (1/N) sum_{t with links} sum_j (alpha_true_tj - alpha_tj)^2`, the
    loss the lecture would add to the translation loss if the true weights
    were known during training; `N` counts target steps that have gold links.

    Args:
        oracle: `(batch, tgt_len, src_len)` from `oracle_weights`.
        alignments: the model's weights `alpha`, same shape.
    """
    known_differ = len(oracle.shape) != len(alignments.shape) or any(
        a is not None and b is not None and a != b for a, b in zip(oracle.shape, alignments.shape)
    )
    if known_differ:
        raise ValueError(
            "Oracle and predicted attention weights must have the same shape. "
            f"Received: oracle.shape={oracle.shape}, alignments.shape={alignments.shape}"
        )
    oracle = ops.cast(oracle, alignments.dtype)
    linked = ops.cast(ops.sum(oracle, axis=-1) > 0, alignments.dtype)  # (batch, tgt_len)
    per_step = ops.sum(ops.square(oracle - alignments), axis=-1)  # (batch, tgt_len)
    return ops.sum(per_step * linked) / ops.maximum(ops.sum(linked), 1.0)
