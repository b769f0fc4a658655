"""Choosing a `tf.distribute` strategy: TPU, several GPUs, or the default."""


def get_strategy(kind="auto"):
    """Returns a distribution strategy.

    Args:
        kind: "auto" (TPU if one is attached, MirroredStrategy over all GPUs
            when there are two or more, else the default strategy),
            "mirrored" (MirroredStrategy over all visible devices of the
            fastest kind, e.g. two logical CPUs in tests), "tpu" or "default".

    Note: under a strategy with several replicas, Keras 3.15 builds a model's compiled loss and metrics
    from the first batch averaged across the replicas, which turns token ids into floats that the
    course's models refuse (`ValueError: ... Received: source.dtype=float32`). The course's models build
    from the data's dtypes instead, in their own `fit` and `evaluate`
    (`models.building.BuildsSublayers.build_from_data`), and every task trains through
    `training.fit.build_before_fit`; a model of your own needs the same (`models.building.build_from_spec`).

    Compile a model trained under a strategy with several replicas with `steps_per_execution=1` (Keras's
    default): with more, Keras 3.15 on TensorFlow 2.21 fails in the first `fit` (`InvalidArgumentError: You
    must feed a value for placeholder tensor 'while/cond/Placeholder'`; a plain `Dense` model on two logical
    CPUs does too, so it is Keras's, not the course's; keras-team/keras#19246 looks related). A course model
    refuses it with a `ValueError` before the first step (`models.building.BuildsSublayers.make_train_function`).
    """
    import tensorflow as tf

    if kind not in ("auto", "mirrored", "tpu", "default"):
        raise ValueError(f"Unknown strategy kind. Received: kind={kind!r}")
    if kind in ("auto", "tpu"):
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
            tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)
            return tf.distribute.TPUStrategy(resolver)
        except (ValueError, RuntimeError, tf.errors.NotFoundError):
            if kind == "tpu":
                raise
    gpus = tf.config.list_logical_devices("GPU")
    if kind == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    if len(gpus) > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()
