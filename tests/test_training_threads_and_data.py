"""Thread settings for small CPUs and the tf.data options of the training loop."""

import numpy as np
import pytest
import tensorflow as tf

from course_lib.data import reversal
from course_lib.training import threads
from course_lib.data.tf_data import array_dataset, without_autotune


def test_thread_counts_must_be_positive():
    with pytest.raises(ValueError, match="intra_op=0"):
        threads.tune_for_small_cpu(intra_op=0)


def test_tuning_is_skipped_on_a_larger_machine(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 64)
    assert threads.tune_for_small_cpu(max_cores=2) is False


@pytest.mark.skipif(not hasattr(__import__("os"), "sched_getaffinity"), reason="no CPU affinity on this OS")
def test_the_cores_counted_are_those_the_process_may_run_on(monkeypatch):
    """A process limited to 2 of a machine's 64 cores (a container, `taskset`) is on a small CPU; `os.cpu_count()`
    counted the machine's cores, so the tuning was skipped there."""
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])  # no GPU
    applied = []  # the runtime of this test process is up already: record the settings instead
    monkeypatch.setattr(tf.config.threading, "set_intra_op_parallelism_threads", lambda n: applied.append(("intra", n)))
    monkeypatch.setattr(tf.config.threading, "set_inter_op_parallelism_threads", lambda n: applied.append(("inter", n)))
    assert threads.tune_for_small_cpu(max_cores=2) is True
    assert applied == [("intra", 1), ("inter", 2)]


def test_tuning_is_refused_once_the_runtime_runs(monkeypatch):
    monkeypatch.setattr(threads, "usable_cores", lambda: 1)
    tf.constant(1.0) + 1.0  # the runtime is up in a test process
    before = tf.config.threading.get_inter_op_parallelism_threads()
    assert threads.tune_for_small_cpu(max_cores=2, inter_op=before + 3) is False
    assert tf.config.threading.get_inter_op_parallelism_threads() == before


def test_without_autotune_switches_autotuning_off_and_keeps_the_elements():
    dataset = tf.data.Dataset.range(5).map(lambda x: x * 2)
    tuned = without_autotune(dataset)
    assert tuned.options().autotune.enabled is False
    assert [int(x) for x in tuned] == [0, 2, 4, 6, 8]
    arrays = (np.zeros((2, 3)), np.ones(2))
    assert without_autotune(arrays) is arrays  # not a tf.data input: unchanged


def test_reversal_dataset_holds_the_generator_batches_one_length_each():
    dataset = reversal.as_dataset(12, batch_size=8, min_length=5, max_length=10, seed=4)
    expected = list(reversal.training_batches(12, batch_size=8, min_length=5, max_length=10, seed=4))
    assert dataset.element_spec[1].shape.as_list() == [None, None]  # one trace for every length
    assert int(dataset.cardinality()) == 12  # fit knows the epoch's length (no "ran out of data")
    count = 0
    for (inputs, target_out), (want_inputs, want_out) in zip(dataset, expected):
        np.testing.assert_array_equal(inputs["source"], want_inputs["source"])
        np.testing.assert_array_equal(inputs["target_in"], want_inputs["target_in"])
        np.testing.assert_array_equal(target_out, want_out)
        assert 0 not in inputs["source"].numpy()  # no padding left in a batch
        count += 1
    assert count == 12


def test_reversal_dataset_draws_new_strings_each_pass_and_the_same_passes_again():
    def passes(dataset):
        return [np.concatenate([inputs["source"].numpy().ravel() for inputs, _ in dataset]) for _ in range(3)]

    first = passes(reversal.as_dataset(6, batch_size=8, seed=4))
    again = passes(reversal.as_dataset(6, batch_size=8, seed=4))
    want = list(reversal.training_batches(6, batch_size=8, seed=4))
    np.testing.assert_array_equal(first[0], np.concatenate([inputs["source"].ravel() for inputs, _ in want]))
    for one, other in zip(first, again):  # reproducible pass by pass
        np.testing.assert_array_equal(one, other)
    assert not np.array_equal(first[0][:48], first[1][:48])  # a second epoch is not the first again
    assert not np.array_equal(first[1][:48], first[2][:48])


def test_array_dataset_batches_every_row_once_and_reshuffles_each_epoch():
    inputs = {"a": np.arange(10), "b": np.arange(10) * 10}
    targets = np.arange(10) + 100
    plain = array_dataset(inputs, targets, batch_size=4)
    assert plain.options().autotune.enabled is False
    batches = list(plain)
    assert [len(t) for _, t in batches] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([x["a"] for x, _ in batches]), np.arange(10))
    shuffled = array_dataset(inputs, targets, batch_size=4, shuffle=True, seed=3)
    first = np.concatenate([t for _, t in shuffled])
    second = np.concatenate([t for _, t in shuffled])
    assert sorted(first) == list(range(100, 110)) and not np.array_equal(first, second)
    for x, t in shuffled:  # rows stay together
        np.testing.assert_array_equal(x["a"] + 100, t)
        np.testing.assert_array_equal(x["b"], x["a"] * 10)
    with pytest.raises(ValueError, match=r"row counts \[9, 10\]"):
        array_dataset(inputs, targets[:9], batch_size=4)


def test_epochs_are_exactly_as_long_as_asked_whatever_the_steps_per_execution():
    import keras

    from course_lib.training.fit import fit_steps, steps_per_execution_for

    assert steps_per_execution_for(32, 20) == 16 and steps_per_execution_for(300, 25) == 25
    assert steps_per_execution_for(7, 20) == 7 and steps_per_execution_for(13, 5) == 1
    with pytest.raises(ValueError, match="Received: steps_per_epoch=0"):
        steps_per_execution_for(0, 20)
    features = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((features, features[:, :1])).batch(4).repeat()

    def trained_steps(steps_per_execution, steps_per_epoch, epochs=2):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse", steps_per_execution=steps_per_execution)
        model.fit(dataset, epochs=epochs, steps_per_epoch=steps_per_epoch, verbose=0)
        return int(model.optimizer.iterations), model

    # What the helper guards against: Keras rounds an epoch up to whole executions.
    assert trained_steps(20, 32)[0] == 80
    assert trained_steps(steps_per_execution_for(32, 20), 32)[0] == 64
    # fit_steps refuses a budget that Keras would silently round up.
    _, model = trained_steps(5, 5, epochs=1)
    with pytest.raises(ValueError, match="multiples of the model's steps_per_execution"):
        fit_steps(model, dataset, 12, report_every=5, verbose=0)


def test_fit_steps_remainder_continues_the_data_and_is_in_the_history(capsys):
    import keras

    from course_lib.training.fit import fit_steps

    # 12 batches of 4 rows; every row of batch i has target i. A zero model
    # that never learns (SGD at rate 0) then reports, as an epoch's loss, the
    # mean of i^2 over the batches it trained on.
    targets = np.repeat(np.arange(12, dtype="float32"), 4)[:, None]
    dataset = tf.data.Dataset.from_tensor_slices((np.zeros((48, 3), "float32"), targets)).batch(4)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(keras.optimizers.SGD(0.0), "mse")

    class Epochs(keras.callbacks.Callback):
        ended = []

        def on_epoch_end(self, epoch, logs=None):
            self.ended.append(epoch)

    history, seconds = fit_steps(model, dataset, 12, report_every=5, verbose=0, callbacks=[Epochs()])
    assert int(model.optimizer.iterations) == 12 and seconds > 0
    assert history.epoch == [0, 1, 2] and Epochs.ended == [0, 1, 2]
    expected = [np.mean(np.arange(0, 5) ** 2), np.mean(np.arange(5, 10) ** 2), np.mean([10**2, 11**2])]
    np.testing.assert_allclose(history.history["loss"], expected, rtol=1e-6)
    # The progress lines count all three epochs.
    capsys.readouterr()
    fit_steps(model, dataset, 12, report_every=5, verbose=2)
    printed = capsys.readouterr().out
    assert [line for line in printed.splitlines() if line.startswith("Epoch")] == ["Epoch 1/3", "Epoch 2/3", "Epoch 3/3"]


@pytest.mark.skipif(__import__("keras").backend.backend() != "tensorflow", reason="a TensorFlow tracing detail")
def test_the_train_step_of_an_unbuilt_model_is_traced_once():
    import keras

    from course_lib.training.fit import fit_arrays, fit_steps

    class Counting(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)
            self.traces = 0

        def call(self, inputs):
            return self.dense(inputs)

        def train_step(self, data):
            self.traces += 1  # Python runs here once per trace of the step
            return super().train_step(data)

    def compiled(steps_per_execution=1):
        model = Counting()
        model.compile("sgd", "mse", steps_per_execution=steps_per_execution)
        return model

    features = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
    targets = features[:, :1]
    # What the helpers avoid: Keras builds the model and optimizer inside the first trace, so
    # tf.function traces the step a second time.
    plain = compiled()
    plain.fit(tf.data.Dataset.from_tensor_slices((features, targets)).batch(8), epochs=2, verbose=0)
    assert plain.traces == 2
    arrays = compiled()
    fit_arrays(arrays, features, targets, batch_size=8, epochs=2, verbose=0)
    steps = compiled()
    fit_steps(steps, tf.data.Dataset.from_tensor_slices((features, targets)).batch(8), 6, report_every=3, verbose=0)
    looped = compiled(steps_per_execution=2)  # Keras runs the steps in a tf.while_loop
    fit_arrays(looped, features, targets, batch_size=8, epochs=2, verbose=0)
    assert (arrays.traces, steps.traces, looped.traces) == (1, 1, 1)
    assert int(arrays.optimizer.iterations) == 8 and int(steps.optimizer.iterations) == 6
    assert int(looped.optimizer.iterations) == 8

    # Building reads no batch: a stream behind the dataset is where it was.
    from course_lib.training.fit import build_before_fit

    stream = ((features[i : i + 8], targets[i : i + 8]) for i in range(0, 32, 8))
    spec = (tf.TensorSpec((None, 3), tf.float32), tf.TensorSpec((None, 1), tf.float32))
    streamed = compiled()
    build_before_fit(streamed, tf.data.Dataset.from_generator(lambda: stream, output_signature=spec))
    assert streamed.built and streamed.optimizer.built
    np.testing.assert_array_equal(next(stream)[0], features[:8])


def test_a_course_model_is_built_eagerly_before_anything_is_traced():
    """Keras's symbolic pass would trace the forward pass of an unbuilt course model twice (to create
    the weights, then for the output spec), and a `fit` on NumPy arrays would trace the train step twice
    (its first trace creates the weights and the optimizer's slots). Both are created eagerly first."""
    import keras

    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.training.fit import build_before_fit

    class Counting(Seq2Seq):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.symbolic_passes = self.train_step_traces = 0

        def forward(self, *args, **kwargs):
            self.symbolic_passes += not tf.executing_eagerly()
            return super().forward(*args, **kwargs)

        def train_step(self, data):
            self.train_step_traces += 1
            return super().train_step(data)

    def compiled():
        model = Counting(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=4, units=8)
        model.compile(optimizer=keras.optimizers.Adam(1e-2))
        return model

    source, target_in, target_out = reversal.make_examples(np.array([[1, 2, 3], [4, 5, 6]]))
    inputs = {"source": source, "target_in": target_in}
    dataset = array_dataset(inputs, target_out, batch_size=2)
    model = compiled()
    build_before_fit(model, dataset)
    assert model.built and model.optimizer.built and model.symbolic_passes == 1
    model.fit(dataset, epochs=1, verbose=0)
    assert (model.symbolic_passes, model.train_step_traces) == (2, 1)  # the train step's one trace
    arrays = compiled()
    arrays.fit(inputs, target_out, batch_size=2, epochs=2, verbose=0)
    assert (arrays.symbolic_passes, arrays.train_step_traces) == (1, 1)


def _dense_model():
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    return model


def _regression_rows(count, seed):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(count, 3)).astype("float32")
    return features, features.sum(1, keepdims=True), rng.uniform(0.0, 2.0, size=count).astype("float32")


@pytest.mark.parametrize("given", ["weights_and_a_validation_triple", "a_validation_dataset", "a_validation_split"])
def test_fit_arrays_trains_and_validates_as_keras_does_on_the_arrays(given):
    """Each used to fail on TensorFlow: the triple (TypeError), a dataset (AttributeError), and `sample_weight`
    and `validation_split` (Keras refuses both for the dataset that `fit_arrays` hands it)."""
    from course_lib.training.fit import fit_arrays

    features, targets, weights = _regression_rows(40, seed=0)
    held_out = _regression_rows(12, seed=1)
    arguments = {
        "weights_and_a_validation_triple": {"sample_weight": weights, "validation_data": held_out},
        "a_validation_dataset": {"validation_data": tf.data.Dataset.from_tensor_slices(held_out).batch(5)},
        "a_validation_split": {"sample_weight": weights, "validation_split": 0.25},  # the last 10 rows
    }[given]
    ours = fit_arrays(_dense_model(), features, targets, batch_size=8, epochs=2, shuffle=False, verbose=0,
                      **arguments).history
    keras_own = _dense_model().fit(features, targets, batch_size=8, epochs=2, shuffle=False, verbose=0,
                                   **arguments).history
    assert sorted(ours) == sorted(keras_own) and "val_loss" in ours, (ours, keras_own)
    for name in ours:
        np.testing.assert_allclose(ours[name], keras_own[name], rtol=1e-5)


@pytest.mark.parametrize("arguments, message", [
    ({"validation_data": (np.zeros((4, 3)),)}, "Received: a tuple of length 1"),
    ({"validation_split": 1.0}, r"Received: validation_split=1.0"),
    ({"validation_split": 0.99}, r"out of 40\. Received: validation_split=0.99"),  # 0 rows left
])
def test_fit_arrays_refuses_validation_it_cannot_take(arguments, message):
    from course_lib.training.fit import fit_arrays

    features, targets, _ = _regression_rows(40, seed=0)
    with pytest.raises(ValueError, match=message):
        fit_arrays(_dense_model(), features, targets, batch_size=8, epochs=1, verbose=0, **arguments)


def test_building_before_fit_leaves_it_to_keras_in_a_release_without_its_private_symbolic_build(monkeypatch):
    """`build_from_spec` calls Keras's private `_symbolic_build`; without it, every fit through the course's helpers
    ended in an AttributeError instead of letting Keras build the model itself."""
    from course_lib.training.fit import fit_arrays

    model = _dense_model()
    for cls in type(model).__mro__:
        if "_symbolic_build" in vars(cls):
            monkeypatch.delattr(cls, "_symbolic_build")
    assert not hasattr(model, "_symbolic_build")
    features, targets, _ = _regression_rows(16, seed=0)
    fit_arrays(model, features, targets, batch_size=8, epochs=1, verbose=0)
    assert int(model.optimizer.iterations) == 2


def test_the_progress_bar_gets_its_epoch_count_through_the_params_keras_reads(monkeypatch):
    """It used to overwrite `ProgbarLogger.epochs`, where Keras 3.15 happens to keep the count; a release that reads
    it from its params would have numbered the epochs out of the first `fit`'s count."""
    import keras

    from course_lib.training.fit import _ProgressOutOf

    def keeps_the_params(self, params):  # such a release's `set_params`
        self.params = params

    monkeypatch.setattr(keras.callbacks.ProgbarLogger, "set_params", keeps_the_params)
    progress = _ProgressOutOf(3)
    progress.set_params({"verbose": 2, "epochs": 2, "steps": 5})
    assert progress.params["epochs"] == 3
