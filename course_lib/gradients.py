"""`value_and_gradients`: a loss and its gradients, on TensorFlow or JAX.

For the course's small eager checks (a recipe's one training step, the layer
tests): `fit` needs none of this, and neither does anything inside a model.
"""

import keras


def value_and_gradients(loss_function, weights):
    """Evaluates `loss_function()` and differentiates it with respect to `weights`.

    Args:
        loss_function: a function of no arguments that reads the weights
            itself (for example `lambda: loss(targets, model(inputs))`).
        weights: a list of Keras variables.

    Returns:
        `(loss, gradients)`, one gradient tensor per weight. A weight the
        loss does not depend on gets None on TensorFlow and zeros on JAX.
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            value = loss_function()
        gradients = tape.gradient(value, weights)
        return value, [None if g is None else tf.convert_to_tensor(g) for g in gradients]  # sparse -> dense
    if backend == "jax":
        import jax

        def pure(values):
            with keras.StatelessScope(state_mapping=list(zip(weights, values))):
                return loss_function()

        return jax.value_and_grad(pure)([weight.value for weight in weights])
    raise ValueError(f"value_and_gradients runs on TensorFlow or JAX. Received: backend={backend}")
