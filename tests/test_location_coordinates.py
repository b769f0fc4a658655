"""`LocationCoordinates` and the captioner's `location_coordinates` option."""

import numpy as np
import pytest

from course_lib.layers.location_coordinates import LocationCoordinates, grid_coordinates
from course_lib.models.captioner import ImageCaptioner
from layer_testing import check_output_shapes, run_layer_test

RNG = np.random.default_rng(5)


def test_coordinates_layer_passes_the_layer_checks():
    locations = RNG.normal(size=(2, 6, 4)).astype("float32")
    run_layer_test(LocationCoordinates, {"grid": (2, 3)}, {"locations": locations},
                   expected_output_shapes=[(2, 6, 6)], has_weights=False)
    check_output_shapes(LocationCoordinates((2, 3)), {"locations": locations}, {"locations": (None, None, 4)})


def test_each_location_gets_its_row_and_column_in_reading_order():
    locations = RNG.normal(size=(3, 6, 4)).astype("float32")
    out = np.asarray(LocationCoordinates((2, 3))(locations))
    np.testing.assert_array_equal(out[..., :4], locations)  # the features are untouched
    expected = np.array([[-1, -1], [-1, 0], [-1, 1], [1, -1], [1, 0], [1, 1]], "float32")  # (y, x), top row first
    for row in out:
        np.testing.assert_array_equal(row[:, 4:], expected)


def test_an_axis_of_one_location_sits_at_zero():
    np.testing.assert_array_equal(grid_coordinates(1, 3), [[0, -1], [0, 0], [0, 1]])
    np.testing.assert_array_equal(grid_coordinates(1, 1), [[0, 0]])


@pytest.mark.parametrize("grid, shape, received", [
    ((2, 3), (2, 5, 4), r"\(batch, 6, channels\).*Received: locations.shape=\(2, 5, 4\)"),
    ((2, 3), (2, 6), r"Received: locations.shape=\(2, 6\)"),
])
def test_locations_that_do_not_fit_the_grid_are_refused(grid, shape, received):
    with pytest.raises(ValueError, match=received):
        LocationCoordinates(grid)(np.zeros(shape, "float32"))


@pytest.mark.parametrize("grid,received", [
    ((2,), r"must be \(height, width\). Received: grid=\(2,\)"),
    ("23", r"must be \(height, width\). Received: grid='23'"),
    ((2, 0), r"Received: grid\[1\]=0$"),
    ((2, 1.5), r"Received: grid\[1\]=1.5"),
])
def test_a_grid_that_is_not_two_sizes_is_refused(grid, received):
    with pytest.raises(ValueError, match=received):
        LocationCoordinates(grid)


def _images(count=2):
    return RNG.uniform(0, 255, (count, 24, 24, 3)).astype("float32")


def test_the_captioner_decoder_reads_the_coordinates_and_s0_does_not():
    common = dict(image_size=24, cnn_filters=(4, 8), embedding_dim=4, units=6, deep_output=True)
    model = ImageCaptioner(12, location_coordinates=True, **common)
    inputs = {"image": _images(), "target_in": np.array([[1, 5, 6], [1, 7, 0]], "int32")}
    model(inputs)
    locations, vector = model.encode(inputs)
    values, initial_state = model.decoder_inputs(locations, vector)
    assert tuple(values.shape) == (2, 36, 10)  # 6 x 6 locations, 8 channels + (y, x)
    np.testing.assert_array_equal(np.asarray(values)[..., 8:], np.broadcast_to(grid_coordinates(6, 6), (2, 36, 2)))
    # s_0 = tanh(W_init mean_j a_j + b) reads the features alone.
    kernel, bias = np.asarray(model.bridge.kernel), np.asarray(model.bridge.bias)
    expected = np.tanh(np.asarray(locations).mean(axis=1) @ kernel + bias)
    np.testing.assert_allclose(np.asarray(initial_state), expected, atol=1e-5)
    assert tuple(model.decoder.attention.key_kernel.shape)[0] == 10  # W_att reads [a_j; y_j; x_j]
    # Greedy decoding goes through the same locations.
    decoded = model.generate({"image": inputs["image"]}, max_length=4)
    assert decoded["alignments"].shape == (2, 4, 36)


def test_the_coordinates_change_what_the_captioner_computes():
    common = dict(image_size=24, cnn_filters=(4, 8), embedding_dim=4, units=6)
    plain, located = ImageCaptioner(12, **common), ImageCaptioner(12, location_coordinates=True, **common)
    inputs = {"image": _images(), "target_in": np.array([[1, 5, 6], [1, 7, 0]], "int32")}
    plain(inputs), located(inputs)
    located.set_weights([  # the same weights, with W_att's two extra rows set to zero
        np.concatenate([w, np.zeros((2,) + w.shape[1:], w.dtype)]) if w.shape != v.shape else w
        for w, v in zip(plain.get_weights(), located.get_weights())
    ])
    np.testing.assert_allclose(np.asarray(located(inputs)), np.asarray(plain(inputs)), atol=1e-5)
    kernel = located.decoder.attention.key_kernel
    kernel.assign(np.asarray(kernel) + np.pad(np.ones((2, kernel.shape[1]), "float32"), ((8, 0), (0, 0))))
    assert np.abs(np.asarray(located(inputs)) - np.asarray(plain(inputs))).max() > 1e-3


@pytest.mark.parametrize("decoder", ["option1", "option2"])
def test_plain_captioners_refuse_coordinates(decoder):
    with pytest.raises(ValueError, match=rf"attentional decoder only. Received: location_coordinates=True, "
                                         rf"decoder='{decoder}'"):
        ImageCaptioner(12, decoder=decoder, location_coordinates=True)


def test_location_coordinates_must_be_a_bool():
    with pytest.raises(ValueError, match="Received: location_coordinates='no'"):
        ImageCaptioner(12, location_coordinates="no")
