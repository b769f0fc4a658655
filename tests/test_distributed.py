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
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "REPLICAS 2" in completed.stdout
