"""The training helper under MirroredStrategy on two logical CPU devices."""

import subprocess
import sys
import textwrap


def test_mirrored_strategy_on_two_logical_cpus():
    # Logical devices must be set before TensorFlow starts, hence a fresh process.
    script = textwrap.dedent(
        """
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import keras
        from course_lib.data import reversal
        from course_lib.models import Seq2Seq
        from course_lib.training import fit_steps, get_strategy
        strategy = get_strategy("mirrored")
        assert strategy.num_replicas_in_sync == 2, strategy.num_replicas_in_sync
        with strategy.scope():
            model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16)
            model.compile(optimizer=keras.optimizers.Adam(1e-2))
        dataset = reversal.as_dataset(60, batch_size=32, seed=1)
        history, seconds = fit_steps(model, dataset, 60, report_every=20, verbose=0)
        losses = history.history["loss"]
        assert losses[-1] < losses[0], losses
        print("REPLICAS", strategy.num_replicas_in_sync, "LOSS", losses[0], losses[-1])
        # More than one step per execution fails inside Keras under replicas: refused first, saying what to change.
        with strategy.scope():
            model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16)
            model.compile(optimizer=keras.optimizers.Adam(1e-2), steps_per_execution=2)
        try:
            fit_steps(model, dataset, 4, report_every=2, verbose=0)
        except ValueError as error:
            assert "steps_per_execution=1" in str(error) and "Received: steps_per_execution=2, replicas=2" in str(error)
            print("REFUSED")
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "REPLICAS 2" in completed.stdout
    assert "REFUSED" in completed.stdout, completed.stderr[-3000:]


def test_the_token_loss_and_its_gradients_do_not_grow_with_the_number_of_replicas():
    """Keras sums the replicas' gradients and multiplies the loss back for display, so a loss that takes its own
    mean must not return each replica's full mean (it divides by the whole batch's count of real tokens). When it
    did, two replicas showed twice the loss and took twice the SGD step (Adam hid the step, being scale-free;
    clipping and alignment weights did not)."""
    script = textwrap.dedent(
        """
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import keras
        import numpy as np
        from course_lib.data import reversal
        from course_lib.models import Seq2Seq
        from course_lib.training.fit import build_before_fit

        # every string of length 6, so each replica's half of the batch holds the same number of real tokens
        source, target_in, target_out = reversal.make_examples(np.random.default_rng(0).integers(0, 10, size=(32, 6)))
        # as a tf.data pipeline, as the course trains (Keras's adapter for NumPy arrays hands the replicas float ids)
        data = tf.data.Dataset.from_tensor_slices(({"source": source, "target_in": target_in}, target_out)).batch(32)

        def run(strategy):
            keras.utils.set_random_seed(3)
            with strategy.scope():
                model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16)
                model.compile(optimizer=keras.optimizers.SGD(0.5))
            build_before_fit(model, data)  # as every course task does (Keras would build from float-averaged ids)
            loss = model.evaluate(data, verbose=0)
            before = [w.copy() for w in model.get_weights()]
            model.fit(data, epochs=1, verbose=0)
            step = sum(float(np.abs(a - b).sum()) for a, b in zip(model.get_weights(), before))
            return (loss[0] if isinstance(loss, list) else loss), step

        one = run(tf.distribute.get_strategy())
        two = run(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
        print("ONE", one, "TWO", two)
        assert abs(two[0] / one[0] - 1) < 1e-4, (one, two)
        assert abs(two[1] / one[1] - 1) < 1e-3, (one, two)
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "ONE" in completed.stdout


def test_evaluate_and_predict_before_any_fit_under_two_replicas_see_integer_ids():
    """Keras builds a model first used under several replicas from a batch averaged across them, float ids
    that the models refuse; the course models build from the data's dtypes instead (`build_from_data`)."""
    script = textwrap.dedent(
        """
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import keras
        import numpy as np
        from course_lib.data import reversal
        from course_lib.models import Seq2Seq

        source, target_in, target_out = reversal.make_examples(np.random.default_rng(0).integers(0, 10, size=(32, 6)))
        inputs = {"source": source, "target_in": target_in}
        data = tf.data.Dataset.from_tensor_slices((inputs, target_out)).batch(32)

        def fresh(strategy):
            keras.utils.set_random_seed(3)
            with strategy.scope():
                model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16)
                model.compile(optimizer=keras.optimizers.Adam(1e-2))
            return model

        mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        on_dataset = fresh(mirrored).evaluate(data, verbose=0)
        on_arrays = fresh(mirrored).evaluate(inputs, target_out, batch_size=32, verbose=0)
        predicted = fresh(mirrored).predict(data.map(lambda x, y: x), verbose=0)
        single = fresh(tf.distribute.get_strategy())
        want = single.evaluate(data, verbose=0)
        np.testing.assert_allclose(on_dataset, want, rtol=1e-5)
        np.testing.assert_allclose(on_arrays, want, rtol=1e-5)
        np.testing.assert_allclose(predicted, single.predict(inputs, verbose=0), rtol=1e-4, atol=1e-6)
        print("SAME", on_dataset, want)
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "SAME" in completed.stdout


def test_the_token_losses_are_the_mean_over_all_real_tokens_when_replicas_hold_different_numbers():
    """Each replica used to divide its sum by its own count of real tokens, and Keras then averaged the replicas:
    the mean of the replicas' means (2.3040 instead of 2.3003 here, where one replica holds 4 real tokens and the
    other 1), with gradients to match. Dividing by the whole batch's count gives one device's loss and step."""
    script = textwrap.dedent(
        """
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import keras
        import numpy as np
        from course_lib.losses import MaskedTokenLoss, SmoothedMaskedTokenLoss
        from course_lib.models import Seq2Seq

        rng = np.random.default_rng(0)
        source = rng.integers(3, 12, (2, 5)).astype("int32")
        target_out = rng.integers(3, 10, (2, 4)).astype("int32")
        target_in = np.concatenate([np.ones((2, 1), "int32"), target_out[:, :-1]], 1)
        target_out[1, 1:] = 0  # example 0 has 4 real tokens, example 1 (the second replica's) only 1
        target_in[1, 2:] = 0
        data = tf.data.Dataset.from_tensor_slices(({"source": source, "target_in": target_in}, target_out)).batch(2)

        def run(strategy, loss):
            keras.utils.set_random_seed(0)
            with strategy.scope():
                model = Seq2Seq(12, 10, embedding_dim=4, units=6)
                model.compile(optimizer=keras.optimizers.SGD(1.0), loss=loss)
            evaluated = model.evaluate(data, verbose=0, return_dict=True)["loss"]
            before = [w.copy() for w in model.get_weights()]
            fitted = model.fit(data, epochs=1, verbose=0).history["loss"][0]
            steps = [after - w for after, w in zip(model.get_weights(), before)]  # -learning_rate * gradients
            return evaluated, fitted, steps

        for loss in (MaskedTokenLoss, lambda: SmoothedMaskedTokenLoss(0.1)):
            one = run(tf.distribute.get_strategy(), loss())
            two = run(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), loss())
            print("ONE", one[:2], "TWO", two[:2])
            np.testing.assert_allclose(two[:2], one[:2], rtol=1e-5)
            assert max(np.abs(step).max() for step in one[2]) > 1e-3  # the step is not vanishingly small
            for step_two, step_one in zip(two[2], one[2]):
                np.testing.assert_allclose(step_two, step_one, rtol=1e-4, atol=1e-6)

        # Supervised attention (`add_loss`): its mean over linked steps, 3 of them in example 0 and 1 in example 1.
        oracle = np.zeros((2, 4, 5), "float32")
        oracle[0, [0, 1, 2], [4, 3, 2]] = 1.0
        oracle[1, 0, 4] = 1.0
        supervised = tf.data.Dataset.from_tensor_slices(
            ({"source": source, "target_in": target_in, "alignment": oracle}, target_out)).batch(2)

        def fit_supervised(strategy):
            keras.utils.set_random_seed(0)
            with strategy.scope():
                model = Seq2Seq(12, 10, embedding_dim=4, units=6, alignment_loss_weight=100.0)
                model.compile(optimizer=keras.optimizers.SGD(1.0), loss=MaskedTokenLoss())
            before = [w.copy() for w in model.get_weights()]
            fitted = model.fit(supervised, epochs=1, verbose=0).history["loss"][0]
            return fitted, [after - w for after, w in zip(model.get_weights(), before)]

        one = fit_supervised(tf.distribute.get_strategy())
        two = fit_supervised(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
        print("SUPERVISED ONE", one[0], "TWO", two[0])
        np.testing.assert_allclose(two[0], one[0], rtol=1e-5)
        for step_two, step_one in zip(two[1], one[1]):
            np.testing.assert_allclose(step_two, step_one, rtol=1e-4, atol=1e-6)
        print("SAME")
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "SAME" in completed.stdout
