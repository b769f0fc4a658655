"""Hindi heat maps: every glyph present, conjuncts and matras shaped."""

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from course_lib.plots import attention_heatmap  # noqa: E402
from course_lib.plots.fonts import (  # noqa: E402
    FAMILY,
    check_devanagari_shaping,
    devanagari_font,
    devanagari_font_files,
    glyphs,
    missing_glyphs,
    text_width,
)
from course_lib.plots.grid import attention_grid  # noqa: E402

# Nukta, chandrabindu, anusvara, conjuncts, left-side matra, a Latin special token.
HINDI_WORDS = ["मैं", "घर", "जा", "रहा", "हूँ", "क्षत्रिय", "ज़िंदगी", "हिन्दी", "श्री", "<stop>"]


def _draw_strictly(figure):
    """Renders with Agg; any 'Glyph ... missing' warning becomes a test failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure.canvas.draw()
    image = np.asarray(figure.canvas.buffer_rgba())
    assert image.shape[0] > 0 and image[..., :3].std() > 0  # something was drawn


def test_font_comes_from_the_python_package():
    files = devanagari_font_files()
    devanagari_font()  # registers the files with matplotlib
    assert files and all("fontpkg_noto_sans_devanagari" in path for path in files)
    found = font_manager.findfont(font_manager.FontProperties(family=FAMILY), fallback_to_default=False)
    assert found in files


def test_hindi_heatmap_renders_every_glyph():
    font = devanagari_font()
    weights = np.random.default_rng(0).dirichlet(np.ones(5), size=len(HINDI_WORDS))
    ax = attention_heatmap(weights, ["I", "am", "going", "home", "<stop>"], HINDI_WORDS, fontproperties=font)
    ax.set_title("मैं घर जा रहा हूँ", fontproperties=font)
    _draw_strictly(ax.figure)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert labels == HINDI_WORDS
    assert all(FAMILY in label.get_fontfamily() for label in ax.get_yticklabels())
    assert missing_glyphs(labels, font) == []
    plt.close(ax.figure)


def test_default_font_would_show_boxes():
    """The check can fail: matplotlib's own font has no Devanagari."""
    dejavu = font_manager.FontProperties(family="DejaVu Sans")
    assert missing_glyphs(["घर"], dejavu) == ["घ", "र"]
    figure, ax = plt.subplots()
    ax.set_title("घर", fontproperties=dejavu)
    with pytest.raises(UserWarning, match="missing from font"):
        _draw_strictly(figure)
    plt.close(figure)


def test_text_is_shaped_not_drawn_code_point_by_code_point():
    check_devanagari_shaping()
    font = devanagari_font()
    # Conjunct: three code points (क + virama + ष) become one glyph.
    conjunct = glyphs("क्ष", font)
    assert len(conjunct) == 1 and conjunct[0][1] != 0 and missing_glyphs(["क्ष"], font) == []
    unshaped = [glyphs(character, font)[0] for character in "क्ष"]
    assert conjunct[0] not in unshaped
    # Left-side matra: typed after क, drawn before it.
    ki = glyphs("कि", font)
    assert ki[1] == glyphs("क", font)[0]
    assert ki[0][0].startswith("uni093F")
    # Widths: the shaped conjunct is narrower than its parts side by side.
    assert text_width("क्ष", font) < sum(text_width(c, font) for c in ["क", "्", "ष"])


def test_attention_grid_of_nine_words():
    rng = np.random.default_rng(1)
    examples = []
    for roman, native in [("ghar", "घर"), ("kshatriya", "क्षत्रिय"), ("hindi", "हिन्दी")] * 3:
        weights = rng.dirichlet(np.ones(len(roman)), size=len(native) + 1)
        examples.append(
            {"weights": weights, "input_labels": list(roman), "output_labels": list(native) + ["<stop>"],
             "title": f"{roman} → {native}"}
        )
    figure = attention_grid(examples, ncols=3, suptitle="नौ शब्द")
    heatmaps = [ax for ax in figure.axes if ax.get_images()]
    assert len(heatmaps) == 9
    assert heatmaps[1].get_title() == "kshatriya → क्षत्रिय"
    # One colour bar per row (the same 0-1 scale everywhere), and one row-label size for every panel.
    assert [index for index, ax in enumerate(heatmaps) if ax.images[0].colorbar] == [2, 5, 8]
    sizes = {label.get_fontsize() for ax in heatmaps for label in ax.get_yticklabels()}
    assert len(sizes) == 1, sizes
    # The figure's title stands above the panels' (it was 10 points under 12-point Devanagari panel titles).
    panel_title_size = max(ax.title.get_fontsize() for ax in heatmaps)
    assert figure.get_suptitle() == "नौ शब्द" and figure._suptitle.get_fontsize() > panel_title_size
    _draw_strictly(figure)
    plt.close(figure)
    with pytest.raises(ValueError, match="lacks keys"):
        attention_grid([{"weights": np.ones((1, 1))}])


# ---------------------------------------------------------------------------------------------------------------
# What the labels look like, pixel by pixel, against an independent shaper (Pillow with libraqm).

SHAPED_WORDS = ["हूँ", "हिंदी", "क्ष", "कि", "चाँद"]


def _ink(gray):
    """The smallest box holding every dark pixel of a grey image (0 = black); True where dark."""
    dark = np.asarray(gray) < 128
    rows, columns = np.nonzero(dark)
    assert rows.size, "nothing was drawn"
    return dark[rows.min():rows.max() + 1, columns.min():columns.max() + 1]


def _overlap(a, b):
    """Intersection over union of two ink boxes, aligned at their top-left corners."""
    height, width = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    padded = [np.zeros((height, width), bool) for _ in range(2)]
    padded[0][:a.shape[0], :a.shape[1]] = a
    padded[1][:b.shape[0], :b.shape[1]] = b
    return (padded[0] & padded[1]).sum() / (padded[0] | padded[1]).sum()


def _pillow_ink(text, pixels, layout):
    image_module = pytest.importorskip("PIL.Image")
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(devanagari_font_files()[0], size=pixels, layout_engine=layout)
    image = image_module.new("L", (int(pixels * len(text) * 1.5) + 40, int(pixels * 3)), 255)
    ImageDraw.Draw(image).text((20, pixels // 2), text, font=font, fill=0)
    return _ink(image)


def _heatmap_label_inks(words, dpi):
    """Draws a heat map whose row labels are `words`; returns each label's ink as matplotlib's Agg drew it."""
    font = devanagari_font()
    ax = attention_heatmap(np.full((len(words), 2), 0.5), ["a", "b"], words, fontproperties=font, annotate=False,
                           colorbar=False)
    figure = ax.figure
    figure.set_dpi(dpi)
    figure.canvas.draw()
    gray = np.asarray(figure.canvas.buffer_rgba())[..., 0]
    height = gray.shape[0]
    inks, sizes = [], []
    for label in ax.get_yticklabels():
        box = label.get_window_extent()
        inks.append(_ink(gray[int(height - box.y1) - 1:int(height - box.y0) + 2, int(box.x0) - 1:int(box.x1) + 2]))
        sizes.append(label.get_fontsize())
    plt.close(figure)
    return inks, sizes


def test_heatmap_labels_look_like_pillow_raqm_shaping():
    """Each Hindi row label, as drawn, matches an independent HarfBuzz rendering of the same word.

    A review once read the tiny हूँ label (candrabindu above the headline, u-matra hooked under ह: a tall,
    narrow cluster) as a garbled, sideways glyph. Pixel for pixel it is what Pillow + libraqm draws; an
    unshaped (code point by code point) or rotated drawing overlaps far less.
    """
    image_font = pytest.importorskip("PIL.ImageFont")
    from PIL import features

    if not features.check("raqm"):
        pytest.skip("Pillow was built without libraqm")
    dpi = 400
    inks, sizes = _heatmap_label_inks(SHAPED_WORDS, dpi)
    for word, drawn, size in zip(SHAPED_WORDS, inks, sizes):
        pixels = size * dpi / 72
        reference = _pillow_ink(word, pixels, image_font.Layout.RAQM)
        assert abs(drawn.shape[0] - reference.shape[0]) <= 3 and abs(drawn.shape[1] - reference.shape[1]) <= 3, (
            word, drawn.shape, reference.shape)
        assert _overlap(drawn, reference) > 0.8, (word, _overlap(drawn, reference))
        # The comparison can fail: a sideways drawing does not match.
        assert _overlap(np.rot90(drawn), reference) < 0.6, word
    # ... and so can drawing code points one by one (no conjunct, i-matra after its consonant).
    for word in ["क्ष", "कि"]:
        pixels = 12 * dpi / 72
        shaped = _pillow_ink(word, pixels, image_font.Layout.RAQM)
        assert _overlap(_pillow_ink(word, pixels, image_font.Layout.BASIC), shaped) < 0.6, word


def test_hindi_labels_are_large_enough_to_read():
    """Stacked clusters such as हूँ need more pixels than Latin letters: at matplotlib's default 10 pt and 100 dpi
    हूँ is a 9 x 17 pixel blob. Hindi tick labels get at least `DEVANAGARI_LABEL_SIZE` points, Latin ones keep
    the default."""
    from course_lib.plots.attention import DEVANAGARI_LABEL_SIZE

    font = devanagari_font()
    ax = attention_heatmap(np.full((3, 2), 0.5), ["i", "am"], ["मैं", "हूँ", "<stop>"], fontproperties=font)
    assert {label.get_fontsize() for label in ax.get_yticklabels()} == {DEVANAGARI_LABEL_SIZE}
    assert {label.get_fontsize() for label in ax.get_xticklabels()} == {plt.rcParams["font.size"]}
    plt.close(ax.figure)
    inks, _ = _heatmap_label_inks(["हूँ"], dpi=100)
    assert inks[0].shape[0] >= 20, inks[0].shape  # rows of pixels, candrabindu to the u-matra's tail
    # A caller's larger size is kept.
    big = devanagari_font(size=16)
    ax = attention_heatmap(np.full((1, 1), 1.0), ["घर"], ["हूँ"], fontproperties=big)
    assert ax.get_yticklabels()[0].get_fontsize() == 16 and ax.get_xticklabels()[0].get_fontsize() == 16
    plt.close(ax.figure)
