"""`run_layer_test`: the checks every course_lib layer gets for free.

Modelled on Keras's own `run_layer_test`: given a layer class, its
constructor arguments and example call inputs, it checks
  * output shapes, and the same shapes from a symbolic call on `keras.Input`s,
  * `get_config` holds every constructor argument, with the value given,
  * `get_config` / `from_config` round trip with identical outputs,
  * `.keras` save and load of a model around the layer, identical outputs,
  * training: every trainable weight receives a finite, non-zero gradient
    and a few optimizer steps lower a simple loss,
  * freezing: `trainable=False` in the constructor leaves no trainable weight,
    not even in the sub-layers,
  * masking (optional): padding appended to the inputs changes no output,
  * summary: a subclassed model holding the layer prints `summary()`, which
    asks the layer for its output shapes from the shapes it was built with.

It runs on TensorFlow (CI) and on JAX (`KERAS_BACKEND=jax`), with the
gradients from `course_lib.gradients.value_and_gradients`.

Also: inputs that several test files share (`documents_with_an_empty_sentence`), and
`needs_float64`, the mark of the tests that run under a float64 policy; `check_output_shapes`
(`compute_output_shape` against a real call) and `check_reload_keeps_training` (a compiled model
saved and loaded trains on).
"""

import copy
import os
import tempfile

import keras
import numpy as np
import pytest
from keras import ops

from course_lib.gradients import value_and_gradients


def _float64_available():
    """JAX makes float64 arrays float32 unless `JAX_ENABLE_X64` is set; TensorFlow always has float64."""
    if keras.backend.backend() != "jax":
        return True
    import jax

    return bool(jax.config.jax_enable_x64)


needs_float64 = pytest.mark.skipif(not _float64_available(), reason="JAX without JAX_ENABLE_X64 has no float64")


def _as_list(outputs):
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    return [outputs]


def _numpy(outputs):
    return [np.asarray(o) for o in _as_list(outputs)]


def _call(layer, call_kwargs, training=False):
    return layer(**call_kwargs, training=training) if _accepts_training(layer) else layer(**call_kwargs)


def _accepts_training(layer):
    import inspect

    return "training" in inspect.signature(layer.call).parameters


def check_config_holds_arguments(layer_cls, init_kwargs, config):
    """A `get_config` that leaves out an argument rebuilds the layer with that argument's default:
    invisible when the test passes the default, wrong for everybody else."""
    import inspect

    parameters = inspect.signature(layer_cls.__init__).parameters
    named = [name for name, parameter in parameters.items()
             if name != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
    missing = [name for name in named if name not in config]
    assert not missing, f"{layer_cls.__name__}.get_config() leaves out {missing}"
    for name, value in init_kwargs.items():
        if name in named and isinstance(value, (bool, int, float, str, tuple, list)):
            saved = config[name]
            same = list(saved) == list(value) if isinstance(value, (tuple, list)) else saved == value
            assert same, f"{layer_cls.__name__}.get_config()[{name!r}] is {saved!r}, the layer was made with {value!r}"


def run_layer_test(
    layer_cls,
    init_kwargs,
    call_kwargs,
    expected_output_shapes=None,
    padding_check=None,
    atol=1e-6,
    has_weights=True,
):
    """Runs the standard checks on `layer_cls(**init_kwargs)(**call_kwargs)`.

    Args:
        layer_cls: the layer class.
        init_kwargs: constructor arguments.
        call_kwargs: dict of NumPy inputs for `call`, in call-signature order.
        expected_output_shapes: list of shapes, one per output.
        padding_check: optional `(padded_call_kwargs, compare)` where
            `compare(original_outputs, padded_outputs)` asserts that the padding
            changed nothing the layer promised to keep.
        has_weights: False for a layer without weights (`LocationCoordinates`):
            the test then asserts it has none, and skips the training and
            freezing checks, which need weights.

    Returns:
        The layer, built, for further checks.
    """
    keras.utils.set_random_seed(0)  # an unlucky draw can leave a ReLU layer dead, with zero gradients
    layer = layer_cls(**init_kwargs)
    outputs = _numpy(_call(layer, call_kwargs))

    # Shapes.
    if expected_output_shapes is not None:
        got = [tuple(o.shape) for o in outputs]
        assert got == [tuple(s) for s in expected_output_shapes], f"shapes {got} != {expected_output_shapes}"
    for value in outputs:
        assert np.all(np.isfinite(value)), "layer produced NaN or inf"

    # Config round trip: every constructor argument is in the config, with the value given.
    config = layer.get_config()
    check_config_holds_arguments(layer_cls, init_kwargs, config)
    # A copy: `keras.layers.RNN.from_config` pops "cell" from the dict it is given.
    clone = layer_cls.from_config(copy.deepcopy(config))
    _call(clone, call_kwargs)
    clone.set_weights(layer.get_weights())
    for a, b in zip(outputs, _numpy(_call(clone, call_kwargs))):
        np.testing.assert_allclose(a, b, atol=atol, err_msg="from_config clone differs")
    assert clone.get_config() == config

    # .keras save and load, inside a functional model.
    inputs = {
        name: keras.Input(shape=np.asarray(value).shape[1:], dtype=str(np.asarray(value).dtype), name=name)
        for name, value in call_kwargs.items()
    }
    model = keras.Model(inputs, layer(**inputs))
    # Symbolic shapes: every size the inputs fix (all but the batch) is known, and right, before any data.
    symbolic = [tuple(output.shape[1:]) for output in model.outputs]
    assert symbolic == [o.shape[1:] for o in outputs], f"symbolic shapes {symbolic}, real {[o.shape for o in outputs]}"
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "layer.keras")
        model.save(path)
        reloaded = keras.models.load_model(path)
    for a, b in zip(_numpy(model(call_kwargs)), _numpy(reloaded(call_kwargs))):
        np.testing.assert_allclose(a, b, atol=atol, err_msg=".keras reload differs")

    if has_weights:
        _check_training_and_freezing(layer, layer_cls, init_kwargs, call_kwargs, inputs)
    else:
        assert not layer.weights, f"{layer_cls.__name__} has weights {[w.path for w in layer.weights]}"

    # Masking.
    if padding_check is not None:
        padded_kwargs, compare = padding_check
        compare(_numpy(_call(layer, call_kwargs)), _numpy(_call(layer, padded_kwargs)))

    check_summary(_Holder(layer_cls(**init_kwargs)), lambda holder: holder(call_kwargs))
    return layer


def _check_training_and_freezing(layer, layer_cls, init_kwargs, call_kwargs, inputs):
    """Gradients reach every weight and a few steps lower a loss; `trainable=False` freezes every weight."""
    # Training: gradients reach every weight, and a few steps lower a loss.
    tensors = {k: ops.convert_to_tensor(v) for k, v in call_kwargs.items()}
    optimizer = keras.optimizers.Adam(1e-2)

    def loss_value():
        total = 0.0
        for out in _as_list(_call(layer, tensors, training=True)):
            if keras.backend.is_float_dtype(out.dtype):
                total += ops.mean(ops.square(out - 0.5))
        return total

    first, first_gradients = value_and_gradients(loss_value, layer.trainable_weights)
    for weight, gradient in zip(layer.trainable_weights, first_gradients):
        assert gradient is not None, f"no gradient reaches {weight.path}"
        gradient = np.asarray(gradient)
        assert np.all(np.isfinite(gradient)), f"non-finite gradient for {weight.path}"
        assert np.any(gradient != 0), f"zero gradient for {weight.path}"
    for _ in range(5):
        _, step_gradients = value_and_gradients(loss_value, layer.trainable_weights)
        optimizer.apply_gradients(zip(step_gradients, layer.trainable_weights))
    assert float(loss_value()) < float(first), "five optimizer steps did not lower the loss"

    # Frozen: `trainable=False` given to the constructor reaches every weight, the sub-layers' too.
    frozen = layer_cls(**init_kwargs, trainable=False)
    frozen_model = keras.Model(inputs, frozen(**inputs))
    assert frozen_model.weights and not frozen_model.trainable_weights, (
        f"{layer_cls.__name__}(trainable=False) still trains {[w.path for w in frozen_model.trainable_weights]}")


class _Holder(keras.Model):
    """A subclassed model around one layer, as the course's models hold theirs."""

    def __init__(self, layer):
        super().__init__()
        self.inner = layer

    def call(self, inputs):
        return _call(self.inner, inputs)


def check_summary(model, build):
    """`model.summary()` prints, after `build(model)`, and counts every weight.

    For a layer inside a subclassed model, Keras's summary calls
    `compute_output_shape` with the shapes the layer's `build` received, so a
    `compute_output_shape` that needs more arguments than `build` takes fails
    there (and only there).

    Returns:
        The summary's text.
    """
    build(model)
    lines = []
    model.summary(print_fn=lambda line, **kwargs: lines.append(line))
    text = "\n".join(lines)
    assert f"Total params: {model.count_params():,}" in text, text
    for layer in model.layers:  # by class: the table cuts long layer names short
        assert f"({type(layer).__name__})" in text, (type(layer).__name__, text)
    return text


def check_output_shapes(layer, call_kwargs, open_shapes):
    """`compute_output_shape` agrees with what `call` returns, known sizes and open ones alike.

    Args:
        layer: the layer (built by the call if it is not).
        call_kwargs: dict of NumPy inputs for `call`, in call-signature order.
        open_shapes: the same inputs' shapes with None for each size left open (batch, lengths).

    On the concrete shapes `compute_output_shape` must give the real outputs'
    shapes; on `open_shapes` every size it knows must be the real one, and a
    symbolic call on `keras.Input`s of those shapes must give the same shapes,
    and the real outputs' dtypes.

    Returns:
        The shapes `compute_output_shape` gives for `open_shapes`, for the
        caller to check which sizes it knows.
    """
    outputs = _as_list(_call(layer, call_kwargs))
    real = [tuple(output.shape) for output in outputs]
    concrete = {f"{name}_shape": np.asarray(value).shape for name, value in call_kwargs.items()}
    assert _as_shapes(layer.compute_output_shape(**concrete)) == real
    computed = _as_shapes(layer.compute_output_shape(**{
        f"{name}_shape": tuple(shape) for name, shape in open_shapes.items()}))
    for got, want in zip(computed, real):
        assert len(got) == len(want) and all(g is None or g == w for g, w in zip(got, want)), (computed, real)
    inputs = {name: keras.Input(batch_shape=tuple(shape), dtype=str(np.asarray(call_kwargs[name]).dtype))
              for name, shape in open_shapes.items()}
    symbolic = _as_list(layer(**inputs))
    assert [tuple(t.shape) for t in symbolic] == computed
    dtypes = [keras.backend.standardize_dtype(t.dtype) for t in symbolic]
    assert dtypes == [keras.backend.standardize_dtype(o.dtype) for o in outputs], dtypes
    return computed


def _as_shapes(shapes):
    """A list of shape tuples from what `compute_output_shape` returns: one shape, or one per output."""
    if len(shapes) and isinstance(shapes[0], (tuple, list)):
        return [tuple(shape) for shape in shapes]
    return [tuple(shapes)]


def check_reload_keeps_training(model, x, y, path):
    """A compiled model trained for a step, saved to `path` (`.keras`) and loaded, trains on where it stopped.

    The loaded model must come back compiled, without Keras's warning that a
    custom `compile` was skipped: the same loss and metrics on `(x, y)`, the
    optimizer's step count and state, and one more step of `fit` on both
    leaves the same weights.

    Returns:
        The loaded model.
    """
    import warnings

    fit = dict(epochs=1, batch_size=len(y) // 2, shuffle=False, verbose=0)
    model.fit(x, y, **fit)
    model.save(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reloaded = keras.models.load_model(path)
    skipped = [str(w.message) for w in caught if "compile()` was not called" in str(w.message)]
    assert not skipped, skipped
    assert reloaded.optimizer is not None and int(reloaded.optimizer.iterations) == int(model.optimizer.iterations)
    for theirs, ours in zip(reloaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_allclose(np.asarray(theirs), np.asarray(ours), err_msg=ours.path)
    np.testing.assert_allclose(reloaded.evaluate(x, y, verbose=0), model.evaluate(x, y, verbose=0), rtol=1e-5)
    model.fit(x, y, **fit)
    reloaded.fit(x, y, **fit)
    assert int(reloaded.optimizer.iterations) == int(model.optimizer.iterations)
    for theirs, ours in zip(reloaded.weights, model.weights):
        np.testing.assert_allclose(np.asarray(theirs), np.asarray(ours), atol=1e-5, err_msg=ours.path)
    return reloaded


# -- inputs that several test files share ---------------------------------------------

DOCUMENT_VOCAB = 30


def documents_with_an_empty_sentence():
    """Two documents of 3 sentences x 4 words: right-padded sentences, and an
    empty sentence between two real ones in the second document."""
    return np.array(
        [[[5, 6, 0, 0], [7, 8, 9, 0], [4, 0, 0, 0]],
         [[5, 6, 7, 8], [0, 0, 0, 0], [9, 4, 0, 0]]], "int32")
