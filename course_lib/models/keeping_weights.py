"""`KeepsWeightsOnError`: a failed `predict` or `evaluate` must not cost a model its weights.

On JAX, Keras (3.15) moves a model's weights out of its variables while
`predict` and `evaluate` run and puts them back at the end; `fit` also puts
them back when an error is raised inside its loop, the other two do not. A
bad batch would leave the trained model with no weights at all.
"""

import keras


class KeepsWeightsOnError:
    """Mixin for a `keras.Model`: `predict` and `evaluate` put the weights back when they raise.

    On other backends Keras never moves the weights, and both are Keras's
    own, unchanged.
    """

    def predict(self, *args, **kwargs):
        return self._keeping_weights(super().predict, *args, **kwargs)

    def evaluate(self, *args, **kwargs):
        return self._keeping_weights(super().evaluate, *args, **kwargs)

    def _keeping_weights(self, method, *args, **kwargs):
        if keras.backend.backend() != "jax":
            return method(*args, **kwargs)
        values = [variable.value for variable in self.variables]  # JAX arrays: references, not copies
        try:
            return method(*args, **kwargs)
        except Exception:
            for variable, value in zip(self.variables, values):
                variable.assign(value)
            raise
