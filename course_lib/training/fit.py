"""Training loops shared by every task: fixed step budgets with progress."""

import math
import time

import keras

from course_lib.models.building import build_from_spec, steps_per_execution
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
        # Through the params Keras reads, not the attribute it keeps them in (a private detail).
        super().set_params({**params, "epochs": self.total})


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
    epoch's length within one `fit`, so that epoch is a second `fit`, which
    runs the same `callbacks` (they see a second train begin and end) and is
    appended to the returned history. On a `tf.data` dataset it iterates
    the dataset afresh and skips the batches already trained (`skip`, which
    also reads them): that continues where the first `fit` stopped only
    for a dataset that gives the same batches in the same order on every
    new iteration (an unshuffled `array_dataset`). One that draws anew (a
    shuffled `array_dataset`, in a new order; `reversal.as_dataset`, whose
    passes go on drawing new strings) trains the remainder on batches of
    that new draw, not on the rest of the first `fit`'s last pass (of a
    shuffled `array_dataset`, some rows of that pass are then trained twice,
    others not at all). A Python generator simply goes on.

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
    per_execution = steps_per_execution(model)
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
    if remainder:  # one shorter epoch; tf.data: a fresh iteration past the batches trained
        rest = stream.skip(epochs * report_every) if hasattr(stream, "skip") else stream
        extra, extra_seconds = fit(rest, epochs, epochs + 1, remainder)
        seconds += extra_seconds
        history.epoch.extend(extra.epoch)
        for name, values in extra.history.items():
            history.history.setdefault(name, []).extend(values)
    return history, seconds


def fit_arrays(model, inputs, targets, batch_size, epochs, validation_data=None, shuffle=True, seed=0,
               sample_weight=None, validation_split=0.0, **kwargs):
    """`model.fit` on NumPy arrays, through `data.tf_data.array_dataset` on TensorFlow.

    Args:
        model: a compiled Keras model.
        inputs: the input arrays (a nest of them), one row per example.
        targets: the target arrays, one row per example.
        batch_size: examples per batch, of the validation arrays too.
        epochs: passes over the data.
        validation_data: `(inputs, targets)` or `(inputs, targets, sample_weight)` arrays, or a dataset
            (`tf.data.Dataset`, or anything else Keras takes), which is passed on as it is.
        shuffle: whether the training rows are drawn in a new order every epoch.
        seed: the seed of that order.
        sample_weight: optional weights of the training rows, `(batch,)` or `(batch, tgt_len)`.
        validation_split: the fraction of the rows, the last ones before any shuffling (as Keras takes
            them), held out for validation; ignored when `validation_data` is given, as in Keras.
        **kwargs: other `model.fit` arguments (`verbose`, `callbacks`, ...).

    Returns:
        The `History`. Other backends get the arrays as they are.
    """
    from course_lib.data.tf_data import array_dataset

    if keras.backend.backend() != "tensorflow":
        return model.fit(inputs, targets, batch_size=batch_size, epochs=epochs, validation_data=validation_data,
                         shuffle=shuffle, sample_weight=sample_weight, validation_split=validation_split, **kwargs)
    if validation_split and validation_data is None:
        (inputs, targets, sample_weight), validation_data = _split_off_the_last_rows(
            (inputs, targets, sample_weight), validation_split)

    def batched(inputs, targets, sample_weight=None, **options):
        if sample_weight is None:
            return array_dataset(inputs, targets, batch_size, **options)
        # The weights travel with the targets (rows checked and gathered together), then come out third.
        return array_dataset(inputs, (targets, sample_weight), batch_size, **options).map(
            lambda x, target_and_weight: (x, *target_and_weight))

    if isinstance(validation_data, (tuple, list)):
        if len(validation_data) not in (2, 3):
            raise ValueError(
                "`validation_data` must be (inputs, targets), (inputs, targets, sample_weight) or a dataset. "
                f"Received: a {type(validation_data).__name__} of length {len(validation_data)}"
            )
        validation_data = batched(*validation_data)
    dataset = batched(inputs, targets, sample_weight, shuffle=shuffle, seed=seed)
    build_before_fit(model, dataset)
    return model.fit(dataset, epochs=epochs, validation_data=validation_data, shuffle=False,
                     **kwargs)  # the dataset shuffles itself


def _split_off_the_last_rows(arrays, fraction):
    """`(training, held_out)`: `arrays` (nests of arrays with one row per example, or None) split as Keras's
    `validation_split` splits them, the last `fraction` of the rows held out."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"`validation_split` must lie in (0, 1). Received: validation_split={fraction}")
    rows = len(keras.tree.flatten(arrays[1])[0])
    split_at = math.floor(rows * (1.0 - fraction))
    if split_at in (0, rows):
        raise ValueError(
            f"`validation_split` leaves no row for training or none for validation out of {rows}. "
            f"Received: validation_split={fraction}"
        )

    def rows_of(part):
        return tuple(None if nest is None else keras.tree.map_structure(lambda array: array[part], nest)
                     for nest in arrays)

    return rows_of(slice(None, split_at)), rows_of(slice(split_at, None))


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
