"""`trainable=False` given to a layer's constructor, passed on to the sub-layers the constructor made."""

import keras


def pass_trainable_down(layer):
    """Freezes `layer`'s sub-layers when `layer` was made with `trainable=False`.

    Call it at the end of the `__init__` of a layer (or model) that makes
    sub-layers there. Keras hands `trainable` down to the sub-layers when the
    attribute is set, but the constructor stores it before any sub-layer
    exists, and setting `layer.trainable = False` again does nothing on
    TensorFlow: its attribute tracking skips an assignment of the value the
    attribute already holds. Without this, a frozen layer's sub-layers kept
    trainable weights, and `fit` trained them inside a model.
    """
    if not layer.trainable:
        keras.layers.Layer.trainable.fset(layer, False)
