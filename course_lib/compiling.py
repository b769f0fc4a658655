"""`compile_once`: one compiled function for every batch size and length.

Decoding and explaining run a model on batches whose size and length change
from call to call. On TensorFlow a `tf.function` with an input signature of
unknown sizes is traced once and serves them all. Other backends get the
plain function back (Seq2Seq's greedy decoding adds its own `jax.jit`).
"""

import keras


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
    if keras.backend.backend() != "tensorflow":
        return function
    import tensorflow as tf

    def spec(entry):
        if isinstance(entry, dict):
            return {name: spec(value) for name, value in entry.items()}
        shape, dtype = entry
        return tf.TensorSpec(shape, dtype)

    return tf.function(function, input_signature=[spec(entry) for entry in signature])
