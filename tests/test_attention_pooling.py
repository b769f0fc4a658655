"""AttentionPooling: the HAN equations, masking, the standard layer checks."""

import numpy as np
import pytest

from course_lib.layers.attention_pooling import AttentionPooling
from layer_testing import run_layer_test
from numpy_reference import numpy_pooling


def make_inputs(seed=0, batch=3, length=5, dim=4):
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(batch, length, dim)).astype("float32")
    mask = np.ones((batch, length), bool)
    mask[0, 3:] = False
    mask[2, 1:] = False
    return values, mask


def test_matches_numpy_reference():
    values, mask = make_inputs()
    layer = AttentionPooling(6, context_name="u_s")
    layer(values, mask=mask)
    assert [w.name for w in layer.weights] == ["W_s", "b_s", "u_s"]
    layer.weights[1].assign(np.random.default_rng(1).normal(size=6))  # b_s starts at zero: test it at a real value
    pooled, weights = layer(values, mask=mask)
    kernel, bias, context = [w.numpy() for w in layer.weights]
    ref_pooled, ref_weights = numpy_pooling(values, kernel, bias, context, mask)
    np.testing.assert_allclose(np.asarray(weights), ref_weights, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pooled), ref_pooled, atol=1e-5)
    assert np.all(np.asarray(weights)[~mask] == 0.0)
    np.testing.assert_allclose(np.asarray(weights).sum(axis=1), 1.0, atol=1e-6)


def test_all_padding_row_gives_zeros_not_nan():
    values, mask = make_inputs()
    mask[1] = False
    pooled, weights = AttentionPooling(3)(values, mask=mask)
    assert np.all(np.isfinite(np.asarray(pooled)))
    assert np.all(np.asarray(weights)[1] == 0.0) and np.all(np.asarray(pooled)[1] == 0.0)



def test_mixed_float16_all_padding_row_gives_zeros_not_nan():
    values, mask = make_inputs()
    mask[1] = False
    pooled, weights = AttentionPooling(3, dtype="mixed_float16")(values, mask=mask)
    pooled, weights = np.asarray(pooled).astype("float32"), np.asarray(weights).astype("float32")
    assert np.all(np.isfinite(pooled)) and np.all(np.isfinite(weights))
    assert np.all(weights[1] == 0.0) and np.all(pooled[1] == 0.0)
    np.testing.assert_allclose(weights[[0, 2]].sum(axis=1), 1.0, atol=1e-2)


def test_standard_layer_checks_with_padding():
    values, mask = make_inputs()
    padded_values = np.concatenate([values, np.full((3, 2, 4), 7.0, "float32")], axis=1)
    padded_mask = np.concatenate([mask, np.zeros((3, 2), bool)], axis=1)

    def compare(original, padded):
        np.testing.assert_allclose(original[0], padded[0], atol=1e-6)  # pooled
        np.testing.assert_allclose(original[1], padded[1][:, :5], atol=1e-6)  # weights
        assert np.all(padded[1][:, 5:] == 0.0)

    run_layer_test(
        AttentionPooling,
        {"units": 5, "context_name": "u_w"},
        {"values": values, "mask": mask},
        expected_output_shapes=[(3, 4), (3, 5)],
        padding_check=({"values": padded_values, "mask": padded_mask}, compare),
    )


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="units"):
        AttentionPooling(0)
    layer = AttentionPooling(3)
    with pytest.raises(ValueError, match=r"values.shape=\(2, 4\)"):
        layer(np.zeros((2, 4), "float32"))
    values, _ = make_inputs()
    with pytest.raises(ValueError, match="mask.shape"):
        layer(values, mask=np.ones((3, 4), bool))


def test_values_of_another_size_after_build_raise_value_error():
    layer = AttentionPooling(3)
    values, _ = make_inputs(dim=4)
    layer(values)
    with pytest.raises(ValueError, match=r"Received: values.shape=\(3, 5, 6\)"):
        layer(np.zeros((3, 5, 6), "float32"))


def test_the_layers_package_exports_the_layers_the_course_names():
    """A5 and the README name `course_lib.layers.AttentionPooling`; the package did not export it."""
    import course_lib.layers as layers
    from course_lib.layers.location_coordinates import LocationCoordinates

    assert layers.AttentionPooling is AttentionPooling
    assert layers.LocationCoordinates is LocationCoordinates
    assert {"AttentionPooling", "BahdanauAttention", "LocationCoordinates"} <= set(layers.__all__)
