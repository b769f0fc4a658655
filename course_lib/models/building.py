"""One way for every subclassed model here to create its weights (and to refuse a diverged fit)."""

import inspect
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
        backends build everything before tracing already.) A sublayer that
        `build()` does not create (one a subclass adds and uses only in `call`)
        would be created in the trace, after the optimizer, which would then
        refuse its gradients (`Unknown variable`); until every layer is built,
        the optimizer is left to Keras, which builds it inside the trace.

        Under a strategy with several replicas, a model compiled with
        `steps_per_execution` above 1 is refused with a `ValueError`: Keras 3.15
        on TensorFlow 2.21 would fail in the first step with an
        `InvalidArgumentError` about a placeholder in its loop (measured, also
        for a plain `Dense` model; see `training.strategy.get_strategy`).
        """
        if keras.backend.backend() == "tensorflow":
            replicas = self.distribute_strategy.num_replicas_in_sync
            per_execution = steps_per_execution(self)
            if replicas > 1 and per_execution > 1:
                raise ValueError(
                    "Compile a model trained under a strategy with several replicas with steps_per_execution=1: "
                    "with more, Keras 3.15 on TensorFlow fails in its first step (InvalidArgumentError about a "
                    f"placeholder). Received: steps_per_execution={per_execution}, replicas={replicas}"
                )
            with self.distribute_strategy.scope():
                self.build()
                optimizer = getattr(self, "optimizer", None)
                if optimizer is not None and not optimizer.built and every_layer_built(self):
                    optimizer.build(self.trainable_variables)
        return super().make_train_function(force)

    def fit(self, *args, **kwargs):
        """Keras's `fit`, stopped with a `ValueError` when the loss stops being a finite number.

        `RefuseNonFiniteLoss` runs first at the end of every epoch, before any
        other callback, so a checkpoint callback never saves a diverged model
        over the last good one. `callbacks` may be given by position or name,
        as a list, one callback or a `keras.callbacks.CallbackList` (which
        Keras uses as it is, so the check is put first in it). When they hold
        a `keras.callbacks.TerminateOnNaN`, NaN handling is left to it and the
        check is not added.
        """
        # Bound as Keras's `fit` binds them, so callbacks given by position are found too.
        arguments = inspect.signature(super().fit).bind(*args, **kwargs)
        self.build_from_data(arguments.arguments.get("x"), arguments.arguments.get("y"))
        arguments.arguments["callbacks"] = self._with_finite_loss_check(arguments.arguments.get("callbacks"))
        return super().fit(*arguments.args, **arguments.kwargs)

    def _with_finite_loss_check(self, callbacks):
        """`callbacks` with `RefuseNonFiniteLoss` first, unless they check the loss already."""
        given = callbacks.callbacks if isinstance(callbacks, keras.callbacks.CallbackList) else (
            keras.tree.flatten(callbacks) if callbacks else [])
        if any(isinstance(callback, (RefuseNonFiniteLoss, keras.callbacks.TerminateOnNaN)) for callback in given):
            return callbacks
        check = RefuseNonFiniteLoss()
        if isinstance(callbacks, keras.callbacks.CallbackList):
            check.set_model(self)  # Keras neither wraps a CallbackList nor sets its callbacks' model
            callbacks.callbacks.insert(0, check)
            return callbacks
        return [check, *given]

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


def steps_per_execution(model):
    """The training steps `model` runs per execution (`compile(steps_per_execution=...)`; 1 when not set)."""
    return int(getattr(model, "steps_per_execution", 1) or 1)


def every_layer_built(model):
    """True when `model` and all its layers, nested ones included, have created their weights.

    Keras's `_flatten_layers` lists them, as Keras's own build check does; a Keras without it gives False,
    and the caller leaves building to Keras.
    """
    flatten_layers = getattr(model, "_flatten_layers", None)
    return flatten_layers is not None and all(layer.built for layer in flatten_layers())


def build_from_spec(model, data_batch):
    """Builds `model` (weights, compiled loss and metrics) from `data_batch`'s shapes and dtypes, on TensorFlow.

    `data_batch` is `(x, y)`, `(x, y, sample_weight)` or `x`, of `tf.TensorSpec`s, arrays or anything with
    `shape` and `dtype`. A course model not built yet first creates its weights eagerly (`build()`). Other
    backends build before tracing already; there this does nothing.
    """
    if keras.backend.backend() != "tensorflow":
        return
    # A private Keras method (3.x): a release without it builds in its own way, in `fit`.
    symbolic_build = getattr(model, "_symbolic_build", None)
    with model.distribute_strategy.scope():
        if hasattr(model, "build_sublayers") and not model.built:
            model.build()
        if symbolic_build is not None:
            symbolic_build(data_batch=data_batch)


class RefuseNonFiniteLoss(keras.callbacks.Callback):
    """Ends `fit` with a `ValueError` at the end of an epoch whose mean loss is NaN or infinite.

    A learning rate far too large makes the loss overflow; Keras would train
    on and save a model whose weights are NaN, which then decodes empty
    strings without an error. Raised at the epoch's end (one check per epoch,
    no cost per step), before the callbacks after it, so that epoch is not
    saved; a run with checkpoints keeps its last good one. (Keras's own
    `TerminateOnNaN` checks every batch; by default it only stops the loop,
    and the task would then save the NaN model, but with `raise_error=True`
    it raises a `RuntimeError`. `BuildsSublayers.fit` leaves NaN handling to
    a `TerminateOnNaN` it is given.)
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
