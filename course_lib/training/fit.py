"""Training loops shared by every task: fixed step budgets with progress."""

import time

import keras

from course_lib.models.building import build_from_spec
from course_lib.training.devices import warn_if_gpu_unused


class StepTimer(keras.callbacks.Callback):
    """Records wall time of training, for the benchmark figures."""

    def on_train_begin(self, logs=None):
        self.start = time.perf_counter()

    def on_train_end(self, logs=None):
        self.seconds = time.perf_counter() - self.start


class _ProgressOutOf(keras.callbacks.ProgbarLogger):
    """Keras's progress bar, numbering epochs out of `total` (the remainder's own `fit` included)."""

    def __init__(self, total):
        super().__init__()
        self.total = total

    def set_params(self, params):
        super().set_params(params)
        self.epochs = self.total


def steps_per_execution_for(steps_per_epoch, most):
    """The largest number of steps per execution, at most `most`, that divides `steps_per_epoch`.

    Keras runs whole executions: on an endless dataset, an epoch of 32 steps
    at 20 steps per execution trains 40 (Keras 3.15, measured). Compiling with
    a divisor keeps every epoch exactly `steps_per_epoch` long.
    """
    if int(steps_per_epoch) != steps_per_epoch or int(most) != most or steps_per_epoch < 1 or most < 1:
        raise ValueError(
            "`steps_per_epoch` and `most` must be positive integers. "
            f"Received: steps_per_epoch={steps_per_epoch}, most={most}"
        )
    steps_per_epoch, most = int(steps_per_epoch), int(most)
    return max(k for k in range(1, min(most, steps_per_epoch) + 1) if steps_per_epoch % k == 0)


def fit_steps(model, dataset, steps, report_every=250, verbose=2, callbacks=(), validation_data=None):
    """Trains `model` for exactly `steps` batches from `dataset`.

    Progress is printed every `report_every` steps (one Keras "epoch"), so a
    long run is visible in a notebook or terminal without a line per step.
    When `steps` is not a multiple of `report_every`, the last `steps %
    report_every` batches make one shorter epoch. Keras cannot vary an
    epoch's length within one `fit`, so that epoch is a second `fit` which
    continues `dataset` where the first stopped, runs the same `callbacks`
    (they see a second train begin and end) and is appended to the returned
    history.

    Returns:
        `(history, seconds)`.
    """
    if int(steps) != steps or steps < 1 or int(report_every) != report_every or report_every < 1:
        raise ValueError(
            f"`steps` and `report_every` must be positive integers. Received: steps={steps}, report_every={report_every}"
        )
    steps, report_every = int(steps), int(report_every)
    report_every = min(report_every, steps)
    epochs, remainder = divmod(steps, report_every)
    per_execution = int(getattr(model, "steps_per_execution", 1) or 1)
    if report_every % per_execution or remainder % per_execution:
        # Keras would round each fit up to whole executions and train more than `steps`.
        raise ValueError(
            "`report_every` and the remainder of `steps` must be multiples of the model's steps_per_execution. "
            f"Received: steps={steps}, report_every={report_every}, steps_per_execution={per_execution}"
        )
    build_started = time.perf_counter()
    build_before_fit(model, dataset)
    build_seconds = time.perf_counter() - build_started  # counted as training time
    # A tf.data dataset is repeated (a second fit would start it again from its
    # first batch); a Python generator simply goes on.
    stream = dataset.repeat() if hasattr(dataset, "repeat") else dataset

    def fit(data, first_epoch, last_epoch, length):
        timer = StepTimer()
        # With a remainder: "Epoch 5/6" then "Epoch 6/6", not "Epoch 5/5" then "Epoch 6/6".
        progress = [_ProgressOutOf(epochs + 1)] if remainder and verbose else []
        history = model.fit(
            data,
            initial_epoch=first_epoch,
            epochs=last_epoch,
            steps_per_epoch=length,
            verbose=verbose,
            callbacks=[timer, *progress, *callbacks],
            validation_data=validation_data,
            shuffle=False,  # a dataset brings its own order; Keras would only warn that it ignores the flag
        )
        return history, timer.seconds

    history, seconds = fit(stream, 0, epochs, report_every)
    seconds += build_seconds
    if remainder:  # one shorter epoch that continues the stream
        rest = stream.skip(epochs * report_every) if hasattr(stream, "skip") else stream
        extra, extra_seconds = fit(rest, epochs, epochs + 1, remainder)
        seconds += extra_seconds
        history.epoch.extend(extra.epoch)
        for name, values in extra.history.items():
            history.history.setdefault(name, []).extend(values)
    return history, seconds


def fit_arrays(model, inputs, targets, batch_size, epochs, validation_data=None, shuffle=True, seed=0, **kwargs):
    """`model.fit` on NumPy arrays, through `data.tf_data.array_dataset` on TensorFlow.

    Other backends get the arrays as they are. Returns the `History`.
    """
    from course_lib.data.tf_data import array_dataset

    if keras.backend.backend() != "tensorflow":
        return model.fit(inputs, targets, batch_size=batch_size, epochs=epochs,
                         validation_data=validation_data, shuffle=shuffle, **kwargs)
    if validation_data is not None:
        validation_data = array_dataset(*validation_data, batch_size=batch_size)
    dataset = array_dataset(inputs, targets, batch_size, shuffle=shuffle, seed=seed)
    build_before_fit(model, dataset)
    return model.fit(dataset, epochs=epochs, validation_data=validation_data, shuffle=False,
                     **kwargs)  # the dataset shuffles itself


def build_before_fit(model, dataset):
    """Builds the model, its compiled loss and metrics and its optimizer from `dataset`'s element spec.

    Call it just before `model.fit(dataset, ...)` on TensorFlow (elsewhere it
    does nothing). Keras 3.15 builds these inside the first trace of the train
    step, and `tf.function` traces a function that created variables a second
    time. Built first, the step is traced once: three fast-profile epochs of
    transliteration took 9.0 s and 7.4 s instead of 13.0 s and 13.3 s, with
    the same losses. Under a strategy with several replicas Keras
    would also build from the first batch averaged across replicas ("MEAN"),
    turning integer token ids into floats, which trips the course's dtype
    checks. Only the spec's shapes and dtypes are used: no batch is read, so
    a shuffled dataset's order and a generator's stream are left as they are.
    Data without an `element_spec` (NumPy arrays, a Python generator) is
    left to `fit`.

    A course model (`models.building.BuildsSublayers`) that is not built yet
    first creates its weights eagerly, with `build()`: left to Keras's
    symbolic pass, it would trace its whole forward pass twice there, once to
    create the weights and once for the output spec. This takes 0.4 to 0.9 s
    less per fit (seq2seq 0.96 -> 0.58 s, dialog 1.39 -> 0.85 s, document
    classifier 1.02 -> 0.62 s), and the weights are the same: the same seed
    gave identical weights after an epoch either way.
    """
    warn_if_gpu_unused()  # every task trains through here: say so when a GPU is attached but unused
    if hasattr(dataset, "element_spec"):
        build_from_spec(model, dataset.element_spec)
