"""The generated shapes captioning data."""

import itertools

import numpy as np
import pytest

from colour_vision import VISION, difference_as_seen
from course_lib.data.shapes import (
    BACKGROUND, COLOUR_NAMES, COLOURS, SHAPES, describe, generate_shapes, load_shapes, object_location_masks,
)

APART = 30.0  # CIELAB units: colours a reader must name in a 48-pixel noisy picture


def test_same_seed_same_data_and_other_seed_other_data():
    first, again, other = generate_shapes(40, seed=3), generate_shapes(40, seed=3), generate_shapes(40, seed=4)
    np.testing.assert_array_equal(first.images, again.images)
    assert first.captions == again.captions
    assert not np.array_equal(first.images, other.images)


def test_splits_differ_and_have_the_requested_sizes():
    parts = load_shapes(train=30, valid=10, test=20, seed=1)
    assert [len(parts[p]) for p in ("train", "valid", "test")] == [30, 10, 20]
    assert not np.array_equal(parts["valid"].images, parts["test"].images[:10])


def test_caption_matches_the_objects_in_reading_order():
    data = generate_shapes(300, seed=0)
    counts = (data.shapes >= 0).sum(axis=1)
    assert set(counts.tolist()) == {1, 2, 3}
    for n in range(len(data)):
        k = counts[n]
        cells = data.rows[n, :k] * 3 + data.cols[n, :k]
        assert np.all(np.diff(cells) > 0), "objects must be distinct cells in reading order"
        objects = [(COLOUR_NAMES[data.colours[n, i]], SHAPES[data.shapes[n, i]], data.rows[n, i], data.cols[n, i])
                   for i in range(k)]
        assert data.captions[n] == describe(objects)
        words = data.captions[n].split()
        assert words.count("a") == k
    assert "a red circle above a blue square" == describe([("red", "circle", 0, 1), ("blue", "square", 1, 0)])
    assert "a red circle left of a blue square" == describe([("red", "circle", 0, 1), ("blue", "square", 0, 2)])


def test_pixels_inside_each_box_have_the_named_colour():
    data = generate_shapes(50, seed=2, noise=0.0)
    for n in range(len(data)):
        for k in range(3):
            if data.shapes[n, k] < 0:
                continue
            x0, y0, x1, y1 = data.boxes[n, k].astype(int)
            centre = data.images[n, (y0 + y1) // 2 + 1, (x0 + x1) // 2].astype(float)
            target = np.asarray(COLOURS[COLOUR_NAMES[data.colours[n, k]]], float)
            assert np.abs(centre - target).max() < 45, (centre, target)
            assert data.rows[n, k] * 16 <= (y0 + y1) / 2 < (data.rows[n, k] + 1) * 16


def test_the_simulation_keeps_grey_and_finds_the_classic_confusion():
    for vision in VISION:
        assert difference_as_seen((128, 128, 128), (128, 128, 128), vision) == 0.0
        assert difference_as_seen((255, 255, 255), (0, 0, 0), vision) == pytest.approx(100.0, abs=0.5)
    # A mid red and a mid green, the colours this data used to draw: far apart in normal vision, one olive for
    # deuteranopes. The check below would fail for them.
    assert difference_as_seen((220, 45, 45), (40, 175, 60)) > 100
    assert difference_as_seen((220, 45, 45), (40, 175, 60), "deuteranopia") < 15


@pytest.mark.parametrize("vision", sorted(VISION))
def test_every_colour_stays_nameable_for_colour_blind_readers(vision):
    background = (BACKGROUND,) * 3
    pairs = [(first, second, difference_as_seen(COLOURS[first], COLOURS[second], vision))
             for first, second in itertools.combinations(COLOURS, 2)]
    pairs += [(name, "background", difference_as_seen(COLOURS[name], background, vision)) for name in COLOURS]
    closest = min(pairs, key=lambda pair: pair[2])
    assert closest[2] >= APART, f"{closest[0]} and {closest[1]} are {closest[2]:.1f} apart under {vision}"


def test_location_masks_cover_the_object_cells():
    boxes = np.array([[[16, 16, 32, 32], [0, 0, 0, 0]]], "float32")  # centre cell of a 48-px image
    masks = object_location_masks(boxes, 48, 6, 6)
    assert masks.shape == (1, 2, 36)
    grid = masks[0, 0].reshape(6, 6)
    expected = np.zeros((6, 6), bool)
    expected[2:4, 2:4] = True
    np.testing.assert_array_equal(grid, expected)
    assert not masks[0, 1].any(), "an absent object lies on no location"
    # The same boxes on VGG16's 14 x 14 grid after scaling the image to 224.
    big = object_location_masks(boxes * 224 / 48, 224, 14, 14)
    assert big[0, 0].sum() >= 16


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="count"):
        generate_shapes(0)
    with pytest.raises(ValueError, match="max_objects"):
        generate_shapes(3, max_objects=4)
    with pytest.raises(ValueError, match="boxes.shape"):
        object_location_masks(np.zeros((2, 4)), 48, 6, 6)
