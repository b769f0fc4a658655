"""One way for every subclassed model here to create its weights (and to refuse a diverged fit)."""

import math

import keras
import numpy as np


class BuildsSublayers:
    """Mixin for a `keras.Model` that builds its sublayers itself, for any batch size and length.

    Subclassed models with several inputs cannot be built from an input shape
    alone, and Keras must build a model before loading a `.keras` file into
    it. A model using this mixin implements `build_sublayers()`, which builds
    each sublayer for open batch and length sizes (`None`), in the order its
    forward pass uses them, so a seed gives the same weights as a first call
    would, and `summary()` shows `None` for those sizes. `build()`, the build
    config and loading all go through it.
    """

    def build_sublayers(self):
        raise NotImplementedError(f"{type(self).__name__} must implement build_sublayers()")

    def build(self, input_shape=None):
        if self.built:
            return
        self.build_sublayers()
        self.built = True

    def mark_built(self, outputs):
        """Returns `outputs` of a pass run outside `__call__` (`forward`), marking the model built.

        Such a pass creates every weight, as `build()` would, but only
        `__call__` sets `built`; a model left unbuilt makes `save` warn that it
        may hold no weights.
        """
        self.built = True
        return outputs

    def make_train_function(self, force=False):
        """Keras's `make_train_function`, after creating the weights and the optimizer's slots eagerly.

        Without a distribution strategy, Keras creates them inside the first
        trace of the train step, and `tf.function` then traces the step a
        second time because the first trace created variables. Created here
        first (`build()`, and the slots for the trainable variables of this
        `fit`, as Keras would), the step is traced once: the first `fit` of
        a small dialog model on NumPy arrays took 4.4 s instead of 9.7 s. (Other
        backends build everything before tracing already.)
        """
        if keras.backend.backend() == "tensorflow":
            with self.distribute_strategy.scope():
                self.build()
                optimizer = getattr(self, "optimizer", None)
                if optimizer is not None and not optimizer.built:
                    optimizer.build(self.trainable_variables)
        return super().make_train_function(force)

    def fit(self, x=None, y=None, *args, **kwargs):
        """Keras's `fit`, stopped with a `ValueError` when the loss stops being a finite number.

        `RefuseNonFiniteLoss` runs first at the end of every epoch, before any
        other callback, so a checkpoint callback never saves a diverged model
        over the last good one.
        """
        self.build_from_data(x, y)
        kwargs["callbacks"] = [RefuseNonFiniteLoss(), *(kwargs.get("callbacks") or ())]
        return super().fit(x, y, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        self.build_from_data(x, y)
        return super().evaluate(x, y, *args, **kwargs)

    def build_from_data(self, x, y=None):
        """Under several replicas, builds the model, its loss and metrics from the data's shapes and dtypes.

        Keras 3.15 on TensorFlow, under a strategy with several replicas,
        builds them from the first batch *averaged* across the replicas
        ("MEAN"), which turns token ids into floats that the models refuse
        (`ValueError: ... Received: source.dtype=float32`) in an `evaluate`
        or `fit` that comes first (a model just loaded, say; `predict` builds
        only the weights, from the real dtypes, and needs nothing). Built
        here from a dataset's element spec, or from NumPy arrays' shapes and
        dtypes, they see the ids' real dtype; no batch is read. Anything else
        (a generator, a model already built) is left to Keras.
        """
        if keras.backend.backend() != "tensorflow" or self.distribute_strategy.num_replicas_in_sync < 2:
            return
        if hasattr(x, "element_spec"):
            data_batch = x.element_spec
        else:
            data_batch = (x, y)
            if not all(hasattr(leaf, "shape") and hasattr(leaf, "dtype") for leaf in keras.tree.flatten(data_batch)):
                return  # a generator, lists, or no targets: left to Keras
        if not isinstance(data_batch, tuple) or len(data_batch) < 2 or data_batch[1] is None:
            return  # no targets to build the loss from: Keras says what is missing
        build_from_spec(self, data_batch)

    def get_build_config(self):
        return {"built": True}

    def build_from_config(self, config):
        self.build()


def build_from_spec(model, data_batch):
    """Builds `model` (weights, compiled loss and metrics) from `data_batch`'s shapes and dtypes, on TensorFlow.

    `data_batch` is `(x, y)`, `(x, y, sample_weight)` or `x`, of `tf.TensorSpec`s, arrays or anything with
    `shape` and `dtype`. A course model not built yet first creates its weights eagerly (`build()`). Other
    backends build before tracing already; there this does nothing.
    """
    if keras.backend.backend() != "tensorflow":
        return
    with model.distribute_strategy.scope():
        if hasattr(model, "build_sublayers") and not model.built:
            model.build()
        model._symbolic_build(data_batch=data_batch)


class RefuseNonFiniteLoss(keras.callbacks.Callback):
    """Ends `fit` with a `ValueError` at the end of an epoch whose mean loss is NaN or infinite.

    A learning rate far too large makes the loss overflow; Keras would train
    on and save a model whose weights are NaN, which then decodes empty
    strings without an error. Raised at the epoch's end (one check per epoch,
    no cost per step), before the callbacks after it, so that epoch is not
    saved; a run with checkpoints keeps its last good one. (Keras's own
    `TerminateOnNaN` only stops the loop, and the task would then save.)
    """

    def on_epoch_end(self, epoch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(np.asarray(loss))
        if math.isfinite(loss):
            return
        rate = getattr(self.model.optimizer, "learning_rate", None)
        try:
            rate = f"{float(np.asarray(rate)):.3g}"
        except (TypeError, ValueError):
            rate = type(rate).__name__  # a schedule
        raise ValueError(
            f"Training diverged: the mean loss of epoch {epoch + 1} is {loss}. That epoch is not "
            f"saved (an earlier checkpoint, if any, is kept); try a smaller learning rate. Received: learning_rate={rate}"
        )
