"""How the course compiles: `compile_once` for decoding, `training_jit_compile` for `fit`.

Decoding and explaining run a model on batches whose size and length change
from call to call. On TensorFlow a `tf.function` with an input signature of
unknown sizes is traced once and serves them all. Other backends get the
plain function back (Seq2Seq's greedy decoding adds its own `jax.jit`).

Keras is imported inside the functions: the task modules import this one at
their top, and the command line imports them all to build its parser.
"""


def compile_once(function, signature):
    """Compiles `function` once for all the shapes its signature allows (TensorFlow).

    Args:
        function: a function of one positional argument per entry of `signature`.
        signature: a list with one entry per argument: `(shape, dtype)`, with
            None for every size that varies, or a dict of such pairs for an
            argument that is a dict of tensors.

    Returns:
        On TensorFlow, a `tf.function` with that input signature; on other
        backends, `function` itself.
    """
    import keras

    if keras.backend.backend() != "tensorflow":
        return function
    import tensorflow as tf

    def spec(entry):
        if isinstance(entry, dict):
            return {name: spec(value) for name, value in entry.items()}
        shape, dtype = entry
        return tf.TensorSpec(shape, dtype)

    compiled = tf.function(function, input_signature=[spec(entry) for entry in signature])
    # TensorFlow warns of "retracing" when 5 of the last 10 calls of one Python function traced, counting
    # every tf.function made from it together (it keys on the code object). Each model compiles its own
    # decoding function, traced once for its own weights; with a fixed signature none traces twice. So a
    # notebook that trains six captioners and decodes with each would be told, wrongly, that it retraces.
    # The flag is private to TensorFlow (2.21 reads it); setting it on a release that does not only
    # leaves the warning on: `Function` takes any attribute.
    compiled._omit_frequent_tracing_warning = True
    return compiled


def training_jit_compile():
    """The `jit_compile` every task passes to `Model.compile`.

    On TensorFlow, Keras's default (`"auto"`) turns XLA on whenever a GPU is
    visible, as on Colab. XLA compiles the train step again for every new
    batch shape, and some of the course's batches change length from batch to
    batch (reversal: six lengths; transliteration: length buckets), so a short
    run could spend more time compiling than training; on the CPU, XLA made
    the reversal run slower even when it had compiled (docs/reversal.md). The
    tasks therefore train without XLA on TensorFlow, as they do on the CPU in
    CI (translation and captions, padded to one width, would compile twice:
    full batches and the last one). The models do compile under XLA (`tests/test_xla_training.py`): pass
    `jit_compile=True` yourself for fixed-shape data. On JAX, `fit` is always
    jitted (`"auto"`); `False` there would run every step eagerly.
    """
    import keras

    return False if keras.backend.backend() == "tensorflow" else "auto"
