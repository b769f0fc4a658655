"""A `keras.layers.Bidirectional` that a layer can safely build in its `__init__`.

Keras 3.15 loads a `.keras` file inside an "object-sharing scope" that
remembers objects by their `id()`, so that an object used twice in the model
is rebuilt once. A custom layer's `__init__` runs inside that scope when the
model is loaded, and `Bidirectional.__init__` serializes the layer it is given
and deserializes it again (twice when it makes the backward copy itself). The
scope records those round trips too. The layer it was given is a temporary:
once it is garbage-collected, CPython can give the next temporary the same
address, and the next `Bidirectional` then receives the *previous* one's
forward or backward GRU. Loading fails ("Forward layer and backward layer
should have different `go_backwards` value"), or, when the directions happen
to match, two encoders silently share one GRU. Whether it happens depends on
when the garbage collector runs, so it appears now and then (it failed one
test run of `course-lib evaluate documents` out of several).

`make_bidirectional` builds the wrapper with the sharing scope suspended: its
internal round trip is private to the wrapper, never part of the saved file.
"""

import contextlib

import keras

try:  # the sharing scope's state lives in Keras internals (Keras 3.0 to 3.15 at least)
    from keras.src.backend.common import global_state
except ImportError:  # a Keras without it: build the wrapper as Keras does
    global_state = None

_SHARING_STATE = ("shared_objects/id_to_obj_map", "shared_objects/id_to_config_map")


@contextlib.contextmanager
def outside_object_sharing():
    """Suspends Keras's object-sharing scope (if one is active) for the block."""
    if global_state is None:
        yield
        return
    saved = {key: global_state.get_global_attribute(key) for key in _SHARING_STATE}
    for key in _SHARING_STATE:
        global_state.set_global_attribute(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            global_state.set_global_attribute(key, value)


def make_bidirectional(layer, name=None, **kwargs):
    """`keras.layers.Bidirectional(layer, name=name, **kwargs)`, built outside the sharing scope."""
    with outside_object_sharing():
        return keras.layers.Bidirectional(layer, name=name, **kwargs)
