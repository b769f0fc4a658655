"""`CompilesWithTokenDefaults`: the token loss and accuracy as `compile` defaults, kept on `.keras` reloading."""

import keras

from course_lib.losses import MaskedTokenAccuracy, MaskedTokenLoss


class CompilesWithTokenDefaults:
    """Mixin for a `keras.Model` of per-token logits: `compile` fills in the token loss and metric.

    A loss or metrics left out become `MaskedTokenLoss` and
    `[MaskedTokenAccuracy]` with the model's `pad_id`. Keras does not call a
    custom `compile` when it loads a `.keras` file (the model would come back
    marked compiled with no optimizer and no loss), so `compile_from_config`
    is given too: this `compile` only fills in defaults, so calling it again
    with the saved arguments is safe, and the optimizer is built so that its
    saved state (step count, moments) is loaded into it.
    """

    def compile(self, optimizer="adam", loss=None, metrics=None, **kwargs):
        loss = loss if loss is not None else MaskedTokenLoss(pad_id=self.pad_id)
        metrics = metrics if metrics is not None else [MaskedTokenAccuracy(pad_id=self.pad_id)]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def compile_from_config(self, config):
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if self.built:
            self.optimizer.build(self.trainable_variables)
