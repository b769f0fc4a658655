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
    _draw_strictly(figure)
    plt.close(figure)
    with pytest.raises(ValueError, match="lacks keys"):
        attention_grid([{"weights": np.ones((1, 1))}])
