"""Options every `tf.data` pipeline of the course shares, and batches of NumPy arrays.

Each pipeline builder (`reversal.as_dataset`, `buckets.as_dataset`, the
translation and language-model inputs, `array_dataset`) returns its dataset
through `without_autotune`, so whatever trains on it, `fit_steps`, a task or a
student's own `model.fit`, gets the same pipeline.
"""

from course_lib.counts import check_count


def without_autotune(dataset):
    """Turns off tf.data's autotuning thread for `dataset`.

    Deleting an iterator waits for that thread, which sleeps between tuning
    rounds: at the end of a long `fit` on a 2-core CPU this wait was measured
    at 31-35 s of idle time in three runs out of five, longer than the whole
    evaluation. Our pipelines set their own prefetch sizes, so there is
    nothing to tune.
    """
    if not hasattr(dataset, "with_options"):  # NumPy batches on other backends
        return dataset
    import tensorflow as tf

    options = tf.data.Options()
    options.autotune.enabled = False
    return dataset.with_options(options)


def array_dataset(inputs, targets, batch_size, shuffle=False, seed=0):
    """NumPy inputs and targets (nests of arrays) as a batched `tf.data.Dataset`.

    What Keras builds from arrays, minus the autotuning thread: the arrays
    are held once, and each batch gathers its rows; with `shuffle`, the row
    order is drawn again every epoch from `seed`.

    Raises `ValueError` unless `batch_size` is a whole number >= 1 and the
    arrays share one number of rows, at least one (a dataset with no batch
    would train on nothing).
    """
    import tensorflow as tf

    batch_size = check_count(batch_size, "batch_size")
    rows = {len(array) for array in tf.nest.flatten((inputs, targets))}
    if len(rows) != 1:
        raise ValueError(f"Inputs and targets must have the same number of rows. Received: row counts {sorted(rows)}")
    count = rows.pop()
    if count == 0:
        raise ValueError("Need at least one row of inputs and targets. Received: 0 rows")
    tensors = tf.nest.map_structure(tf.convert_to_tensor, (inputs, targets))
    indices = tf.data.Dataset.range(count)
    if shuffle:
        indices = indices.shuffle(count, seed=seed, reshuffle_each_iteration=True)
    batches = indices.batch(batch_size).map(
        lambda index: tf.nest.map_structure(lambda tensor: tf.gather(tensor, index), tensors)
    )
    return without_autotune(batches.prefetch(2))
