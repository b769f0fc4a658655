"""Token-level loss and accuracy that ignore padding (id 0)."""

import keras
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
