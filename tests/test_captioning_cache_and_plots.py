"""Feature cache (frozen backbones) and the captioning pictures."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.data.feature_cache import cached_features  # noqa: E402
from course_lib.plots.captioning import (  # noqa: E402
    attention_overlay_grid, training_curves, upsample_attention, white_region,
)


def test_features_are_computed_once_then_read_from_disk(tmp_path, capsys):
    calls = []

    def compute(start, stop):
        calls.append((start, stop))
        rows = np.arange(start, stop, dtype="float32")
        return {"locations": np.repeat(rows[:, None, None], 4, axis=1) * np.ones((1, 4, 3)), "vector": rows[:, None]}

    first = cached_features(tmp_path, "toy", ["weights-a", 224], 10, compute, batch_size=4)
    assert calls == [(0, 4), (4, 8), (8, 10)]
    assert first["locations"].shape == (10, 4, 3) and first["vector"][7, 0] == 7.0
    again = cached_features(tmp_path, "toy", ["weights-a", 224], 10, compute, batch_size=4)
    assert len(calls) == 3, "a cache hit must not recompute"
    np.testing.assert_array_equal(first["vector"], again["vector"])
    assert "Read cached toy features" in capsys.readouterr().out
    cached_features(tmp_path, "toy", ["weights-b", 224], 10, compute, batch_size=4)
    assert len(calls) == 6, "other weights, other features"
    files = sorted(tmp_path.glob("toy-*.npz"))
    assert len(files) == 2
    files[0].write_bytes(b"truncated")  # a broken cache file is recomputed, not trusted
    cached_features(tmp_path, "toy", ["weights-a", 224], 10, compute, batch_size=4)
    cached_features(tmp_path, "toy", ["weights-b", 224], 10, compute, batch_size=4)
    assert len(calls) == 9


def test_cache_rejects_wrong_row_counts(tmp_path):
    with pytest.raises(ValueError, match="expected 2"):
        cached_features(tmp_path, "bad", [], 4, lambda a, b: {"vector": np.zeros((1, 3))}, batch_size=2)
    with pytest.raises(ValueError, match="count"):
        cached_features(tmp_path, "bad", [], 0, lambda a, b: {})


def test_upsampled_map_is_brightest_over_the_attended_cell():
    weights = np.zeros(36, "float32")
    weights[2 * 6 + 4] = 1.0  # row 2, column 4 of a 6 x 6 grid
    upsampled = upsample_attention(weights, (6, 6), (48, 48))
    assert upsampled.shape == (48, 48) and upsampled.max() <= 1.0
    row, col = np.unravel_index(upsampled.argmax(), upsampled.shape)
    assert 16 <= row < 24 and 32 <= col < 40
    image = np.zeros((48, 48, 3), np.uint8)
    white = white_region(image, upsampled)
    assert white[20, 36].min() > 150 and white[2, 2].max() == 0
    with pytest.raises(ValueError, match="36 weights"):
        upsample_attention(np.zeros(35), (6, 6), (48, 48))


def test_a_shared_scale_leaves_a_diffuse_step_pale_where_panel_scaling_paints_it_white():
    image = np.zeros((48, 48, 3), np.uint8)
    sharp = np.full(36, 0.1 / 35, "float32")
    sharp[7] = 0.9
    diffuse = np.full(36, 0.9 / 35, "float32")
    diffuse[20] = 0.1  # the largest weight, but only 3.6 times the uniform level
    brightest, suptitles = {}, {}
    for scale in ("panel", "shared"):
        figure = attention_overlay_grid(image, ["sharp", "diffuse"], np.stack([sharp, diffuse]), (6, 6), scale=scale)
        panels = [axis for axis in figure.axes if axis.images][1:]
        brightest[scale] = [int(np.asarray(axis.images[0].get_array()).max()) for axis in panels]
        suptitles[scale] = figure.get_suptitle()
        plt.close(figure)
    # The figure says which scale it uses: panel scaling paints a diffuse step white, so it must be read off the titles.
    assert "each panel scaled to its own largest α" in suptitles["panel"]
    assert "each panel scaled" not in suptitles["shared"]
    assert min(brightest["panel"]) > 180  # each stretched to its own maximum: both nearly white
    assert brightest["shared"][0] == brightest["panel"][0]  # the figure's largest weight is white either way
    assert brightest["shared"][1] < 0.2 * brightest["shared"][0]  # about 0.1 / 0.9 of the way to white
    assert "white = α 0.90" in figure.get_suptitle()
    with pytest.raises(ValueError, match="Received: scale='global'"):
        attention_overlay_grid(image, ["sharp"], sharp[None], (6, 6), scale="global")
    with pytest.raises(ValueError, match="Received: top=0"):
        upsample_attention(sharp, (6, 6), (48, 48), top=0)


def test_each_panel_boxes_the_location_of_its_largest_weight():
    """The white region can light two objects about equally (a colour word, two green shapes) while the largest
    weight, which the hit test reads, sits on one; the box shows which, and every location of a tie."""
    image = np.zeros((48, 60, 3), np.uint8)
    one = np.full(30, 0.5 / 29, "float32")
    one[15] = 0.5  # row 2, column 3 of a 5 x 6 grid (15 = 2 * 6 + 3): cells of 9.6 x 10 pixels
    tied = np.full(30, 0.0, "float32")
    tied[[0, 29]] = 0.5
    figure = attention_overlay_grid(image, ["one", "tied"], np.stack([one, tied]), (5, 6))
    panels = [axis for axis in figure.axes if axis.images][1:]
    boxes = [[(patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height()) for patch in axis.patches]
             for axis in panels]
    assert boxes[0] == [pytest.approx((3 * 10 - 0.5, 2 * 9.6 - 0.5, 10, 9.6))]
    assert sorted(boxes[1]) == [pytest.approx((-0.5, -0.5, 10, 9.6)), pytest.approx((5 * 10 - 0.5, 4 * 9.6 - 0.5, 10, 9.6))]
    assert "box: the largest α" in figure.get_suptitle()
    plt.close(figure)


def test_overlay_grid_has_one_panel_per_word_and_curves_draw():
    image = np.random.default_rng(0).integers(0, 255, (48, 48, 3), dtype=np.uint8)
    weights = np.random.default_rng(1).dirichlet(np.ones(36), size=4)
    figure = attention_overlay_grid(image, ["a", "red", "circle", "<stop>"], weights, (6, 6), columns=3)
    titled = [axis.get_title() for axis in figure.axes if axis.images]
    # Each panel is scaled to its own maximum, so its title says how large that maximum is.
    assert titled == ["image"] + [f"{word}\nmax α {row.max():.3f}" for word, row in zip(["a", "red", "circle", "<stop>"], weights)]
    assert "1/36 = 0.028" in figure.get_suptitle()
    plt.close(figure)
    with pytest.raises(ValueError, match="one row of weights per word"):
        attention_overlay_grid(image, ["a", "b", "c", "d", "e"], weights, (6, 6))
    curves = training_curves({"attention": {"loss": [2.0, 1.0], "val_loss": [2.1, 1.2],
                                            "token_accuracy": [0.3, 0.6]}})
    assert len(curves.axes[0].lines) == 2 and len(curves.axes[1].lines) == 1
    curves.canvas.draw()
    assert all(float(tick).is_integer() for tick in curves.axes[0].get_xticks())  # epochs: no 1.5
    plt.close(curves)
    # A baseline (the image-blind guesser's accuracy) is a dotted line with its label on its panel.
    curves = training_curves({"attention": {"loss": [2.0, 1.0], "token_accuracy": [0.3, 0.6]}},
                             baselines={"token_accuracy": (0.55, "image-blind guesser")})
    baseline = curves.axes[1].lines[-1]
    assert baseline.get_linestyle() == ":" and list(baseline.get_ydata()) == [0.55, 0.55]
    assert "image-blind guesser" in [text.get_text() for text in curves.axes[1].get_legend().get_texts()]
    plt.close(curves)
    with pytest.raises(ValueError, match=r"Baselines must be for drawn keys. Received: baselines for \['accuracy'\]"):
        training_curves({"attention": {"loss": [1.0]}}, keys=("loss",), baselines={"accuracy": (0.5, "x")})
