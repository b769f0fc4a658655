"""`KeepsWeightsOnError`: a failed `predict` must not cost a model its weights.

On JAX, Keras (3.15) moves a model's weights out of its variables while
`predict` runs and puts them back at the end; `fit` also puts them back when
an error is raised inside its loop, `predict` does not. A bad batch would
leave the trained model with no weights at all.
"""

import keras


class KeepsWeightsOnError:
    """Mixin for a `keras.Model`: `predict` puts the weights back when it raises.

    On other backends Keras never moves the weights, and `predict` is
    Keras's own, unchanged.
    """

    def predict(self, *args, **kwargs):
        if keras.backend.backend() != "jax":
            return super().predict(*args, **kwargs)
        values = [variable.value for variable in self.variables]  # JAX arrays: references, not copies
        try:
            return super().predict(*args, **kwargs)
        except Exception:
            for variable, value in zip(self.variables, values):
                variable.assign(value)
            raise
