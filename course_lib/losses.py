"""Token-level losses (plain and label-smoothed) and accuracy that ignore padding
(`pad_id`, 0 by default), and the loss that supervises attention with a gold alignment."""

import keras
import numpy as np
from keras import ops


def token_weights(y_true, pad_id, sample_weight, dtype):
    """Weight of every target token: 0 on padding, else its `sample_weight` (1 when None).

    `sample_weight` may weight examples `(batch,)` / `(batch, 1)` or tokens
    `(batch, tgt_len)`; the sizes are checked where they are known (a
    per-token `(tgt_len,)` vector for a batch of one used to broadcast as
    example weights and be lost).
    """
    weights = ops.cast(ops.not_equal(y_true, pad_id), dtype)  # (batch, tgt_len)
    if sample_weight is None:
        return weights
    sample_weight = ops.cast(ops.convert_to_tensor(sample_weight), dtype)
    shape, target_shape = tuple(sample_weight.shape), tuple(y_true.shape)

    def differ(size, expected):
        return size is not None and expected is not None and size != expected

    if len(shape) not in (1, 2) or differ(shape[0], target_shape[0]) \
            or (len(shape) == 2 and shape[1] != 1 and differ(shape[1], target_shape[-1])):
        raise ValueError(
            "`sample_weight` must weight examples (batch,) or (batch, 1), or tokens (batch, tgt_len). "
            f"Received: sample_weight.shape={sample_weight.shape}, y_true.shape={y_true.shape}"
        )
    if len(shape) == 1:
        sample_weight = sample_weight[:, None]  # (batch, 1)
    return weights * sample_weight  # (batch, tgt_len)


def check_token_predictions(y_true, y_pred):
    """Refuses predictions `(batch, tgt_len, vocab)` that do not match targets `(batch, tgt_len)`.

    Only sizes known when the check runs are compared. Without it, the accuracy's comparison of ids would
    broadcast a batch of one against a batch of two (or one step against every step) and score it.
    """
    true_shape, predicted_shape = tuple(y_true.shape), tuple(y_pred.shape)
    mismatch = len(predicted_shape) != len(true_shape) + 1 or any(
        a is not None and b is not None and a != b for a, b in zip(true_shape, predicted_shape[:-1])
    )
    if mismatch:
        raise ValueError(
            "Predictions must be (batch, tgt_len, vocab) for targets (batch, tgt_len). "
            f"Received: y_true.shape={y_true.shape}, y_pred.shape={y_pred.shape}"
        )


def count_over_replicas(count):
    """The sum of `count` over the replicas training in sync (`tf.distribute`), for a loss that takes its own mean.

    Under `MirroredStrategy` or `TPUStrategy` every replica computes the loss of its part of the batch, Keras
    sums the replicas' gradients, and its progress bar multiplies the loss back by the number of replicas. A
    replica that divides its weighted sum by the batch's *global* count of real tokens therefore gives, summed,
    the mean over all the batch's real tokens, as on one device. Dividing by its own count (and by the number
    of replicas, as Keras's losses do) would average the replicas' means instead, which differs as soon as
    their parts hold different numbers of real tokens (padding). Outside a replica context, with one replica,
    and on JAX or PyTorch (where Keras distributes otherwise) it returns `count` unchanged.
    """
    if keras.backend.backend() != "tensorflow":
        return count
    import tensorflow as tf

    context = tf.distribute.get_replica_context()  # None in a cross-replica context
    if context is None or context.num_replicas_in_sync == 1:
        return count
    return context.all_reduce(tf.distribute.ReduceOp.SUM, count)


@keras.saving.register_keras_serializable(package="course_lib")
class MaskedTokenLoss(keras.losses.Loss):
    """Sum of cross-entropies over real target tokens, divided by their number.

    `L = -(1/N) sum_{real t} log P(y_t = l_t | y_<t, x)`, where padding
    (`y_true == pad_id`) contributes nothing and is not counted in `N`. With a
    `sample_weight` (per example or per token) it is the weighted mean over
    the real tokens: `sum_t w_t l_t / sum_t w_t`.

    Args:
        pad_id: the padding id of the targets.
        name: the loss's name.
        **kwargs: other `keras.losses.Loss` arguments (e.g. `dtype`).

    Call arguments:
        y_true: target ids `(batch, tgt_len)`.
        y_pred: logits `(batch, tgt_len, vocab)`; float16 or bfloat16 logits (mixed precision) are cast
            to float32 first.
        sample_weight: optional, `(batch,)` or `(batch, tgt_len)`.

    Returns:
        The scalar mean loss per real token. Under a `tf.distribute` strategy with several replicas each
        replica returns its tokens' weighted sum divided by the weights of the whole batch
        (`count_over_replicas`): Keras sums the replicas' gradients, so they are those of the batch's mean.

    Note: `fit` and `evaluate` report the mean of the batches' values weighted by their numbers of
    examples, as for every Keras loss. Over a set whose batches hold different numbers of real tokens this
    is not the mean over all its tokens (far from it when batches are tiny and lengths very uneven);
    `metrics.language_model.perplexity_from_log_probs` gives the exact per-token figure. Under several
    replicas Keras also weights each replica's part of a batch by its number of examples, so a batch that
    does not split evenly across the replicas (the last one, say) shows a slightly different figure; its
    gradients are still exact.
    """

    def __init__(self, pad_id=0, name="masked_token_loss", **kwargs):
        reduction = kwargs.get("reduction", "sum_over_batch_size")
        if reduction != "sum_over_batch_size":
            raise ValueError(
                f"{type(self).__name__} always returns the mean over real tokens; it takes no other `reduction`. "
                f"Received: reduction={reduction!r}"
            )
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id

    def token_losses(self, y_true, y_pred):
        """Cross-entropy of every target token: `(batch, tgt_len)` (padding included)."""
        return keras.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)

    def __call__(self, y_true, y_pred, sample_weight=None):
        # The normalisation by the number of real tokens happens here, so Keras's own
        # reduction (which would scale this mean by the mean sample weight) is bypassed.
        y_true = ops.cast(ops.convert_to_tensor(y_true), "int32")  # (batch, tgt_len)
        y_pred = ops.convert_to_tensor(y_pred)  # (batch, tgt_len, vocab)
        check_token_predictions(y_true, y_pred)
        if keras.backend.standardize_dtype(y_pred.dtype) in ("float16", "bfloat16"):
            # Half precision (mixed-precision logits) overflows the sum over tokens to inf
            # (float16 ends at 65504) and loses digits in the log-softmax: compute in float32.
            y_pred = ops.cast(y_pred, "float32")  # (batch, tgt_len, vocab)
        per_token = self.token_losses(y_true, y_pred)  # (batch, tgt_len)
        weights = token_weights(y_true, self.pad_id, sample_weight, per_token.dtype)  # (batch, tgt_len)
        count = count_over_replicas(ops.sum(weights))  # the whole batch's, under several replicas
        total = ops.sum(per_token * weights) / ops.maximum(count, keras.config.epsilon())
        return ops.cast(total, self.dtype)

    def call(self, y_true, y_pred):
        return self(y_true, y_pred)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}


@keras.saving.register_keras_serializable(package="course_lib")
class SmoothedMaskedTokenLoss(MaskedTokenLoss):
    """`MaskedTokenLoss` with label smoothing: the target distribution puts
    `1 - label_smoothing` on the right token and spreads the rest evenly over
    the vocabulary (lecture 6's full profile trains with 0.1).

    Args:
        label_smoothing: the probability mass moved off the right token, in
            `[0, 1)`.
        pad_id, name, **kwargs: as for `MaskedTokenLoss`.
    """

    def __init__(self, label_smoothing=0.1, pad_id=0, name="smoothed_masked_token_loss", **kwargs):
        super().__init__(pad_id=pad_id, name=name, **kwargs)
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"`label_smoothing` must lie in [0, 1). Received: {label_smoothing}")
        self.label_smoothing = float(label_smoothing)

    def token_losses(self, y_true, y_pred):
        vocab = ops.shape(y_pred)[-1]
        log_probs = ops.log_softmax(y_pred, axis=-1)  # (batch, tgt_len, vocab)
        smoothed = ops.one_hot(y_true, vocab, dtype=y_pred.dtype) * (1.0 - self.label_smoothing) + (
            self.label_smoothing / ops.cast(vocab, y_pred.dtype)
        )  # (batch, tgt_len, vocab)
        return -ops.sum(smoothed * log_probs, axis=-1)  # (batch, tgt_len)

    def get_config(self):
        return {**super().get_config(), "label_smoothing": self.label_smoothing}


@keras.saving.register_keras_serializable(package="course_lib")
class MaskedTokenAccuracy(keras.metrics.Metric):
    """Share of real (non-padding) target tokens predicted correctly (weighted by `sample_weight`).

    Args:
        pad_id: the padding id of the targets.
        name: the metric's name.
        **kwargs: other `keras.metrics.Metric` arguments (e.g. `dtype`).
    """

    def __init__(self, pad_id=0, name="token_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(ops.convert_to_tensor(y_true), "int32")  # (batch, tgt_len)
        y_pred = ops.convert_to_tensor(y_pred)  # (batch, tgt_len, vocab)
        check_token_predictions(y_true, y_pred)
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")  # (batch, tgt_len)
        weights = token_weights(y_true, self.pad_id, sample_weight, "float32")  # (batch, tgt_len)
        hits = ops.cast(ops.equal(predicted, y_true), "float32")
        self.correct.assign_add(ops.sum(hits * weights))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return self.correct / ops.maximum(self.count, keras.config.epsilon())

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
            positions (a set/list of ints, a position listed twice counting
            once, or an empty set).
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
            links = sorted(set(links or ()))  # a link given twice is one source word
            if links and (links[0] < 0 or links[-1] >= source_length):
                raise ValueError(
                    f"Example {example}, target word {step} links source position "
                    f"{links[0] if links[0] < 0 else links[-1]}, outside [0, source_length). "
                    f"Received: source_length={source_length}"
                )
            weights[example, step, links] = 1.0 / max(len(links), 1)
    return weights


def attention_supervision_loss(oracle, alignments):
    """Squared error between oracle and predicted attention weights.

    `L_att = (1/N) sum_{t with links} sum_j (alpha_true_jt - alpha_jt)^2`, the
    loss the lecture would add to the translation loss if the true weights
    were known during training; `N` counts target steps that have gold links
    (in the whole batch under several replicas, `count_over_replicas`: each
    replica returns its share of the batch's mean).

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
    count = count_over_replicas(ops.sum(linked))  # the whole batch's, under several replicas
    return ops.sum(per_step * linked) / ops.maximum(count, 1.0)
