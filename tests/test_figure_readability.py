"""Figures every student can read: text contrast on coloured cells, series apart without colour, keys.

From an accessibility review of the course's figures: white numbers on mid-blue cells (2.4:1), white words on
the orange word shade (3.2:1), training curves and exact-match curves told apart by hue alone (orange and green
are one colour under protanopia), an oracle outline that vanished in grey, a dark-theme HTML table at 3:1.
WCAG 2 asks 4.5:1 for normal text.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from course_lib.plots.attention import DEVANAGARI_LABEL_SIZE, attention_heatmap, exact_match_by_length  # noqa: E402
from course_lib.plots.attention_widget import AttentionExplorer  # noqa: E402
from course_lib.plots.captioning import training_curves  # noqa: E402
from course_lib.plots.documents import confusion_matrix_plot, document_figure, document_html  # noqa: E402
from course_lib.plots.grid import attention_grid  # noqa: E402
from course_lib.plots.style import contrast_ratio, text_colour_on  # noqa: E402

READABLE = 4.5  # WCAG 2, normal text


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _cell_colour(image, value):
    return image.cmap(image.norm(value))


def test_contrast_ratio_and_text_colour():
    assert contrast_ratio((0, 0, 0), (1, 1, 1)) == pytest.approx(21.0)
    assert contrast_ratio((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)) == pytest.approx(1.0)
    assert text_colour_on((0.1, 0.2, 0.5)) == "white" and text_colour_on((0.9, 0.95, 1.0)) == "black"


def test_heat_map_numbers_are_readable_on_every_cell():
    weights = np.array([[0.05, 0.25, 0.45, 0.25], [0.52, 0.48, 0.0, 0.0], [0.6, 0.4, 0.0, 0.0], [0.7, 0.3, 0.0, 0.0],
                        [0.97, 0.01, 0.01, 0.01]])
    ax = attention_heatmap(weights, list("abcd"), list("vwxyz"), annotate=True)
    image = ax.images[0]
    numbers = [text for text in ax.texts if text.get_text().replace(".", "").isdigit()]
    assert len(numbers) == weights.size
    for text in numbers:
        value = float(text.get_text())
        ratio = contrast_ratio(to_rgba(text.get_color()), _cell_colour(image, value))
        assert ratio >= READABLE, (text.get_text(), text.get_color(), round(ratio, 2))
        assert text.get_fontsize() >= 8


def test_confusion_matrix_counts_are_readable_on_every_cell():
    matrix = np.array([[100, 52, 10], [49, 100, 0], [30, 60, 71]])
    ax = confusion_matrix_plot(matrix, ["a", "b", "c"])
    image = ax.images[0]
    assert len(ax.texts) == matrix.size, [text.get_text() for text in ax.texts]  # one count per cell, no more
    for text in ax.texts:
        ratio = contrast_ratio(to_rgba(text.get_color()), _cell_colour(image, float(text.get_text())))
        assert ratio >= READABLE, (text.get_text(), text.get_color(), round(ratio, 2))


def test_shaded_words_are_readable_on_their_shade():
    sentences = [["the", "coach", "said"], ["a", "quiet", "day"]]
    figure = document_figure(sentences, [0.9, 0.1], np.array([[0.1, 0.8, 0.1], [0.3, 0.4, 0.3]]))
    words = [text for text in figure.axes[0].texts if text.get_bbox_patch() is not None]
    assert len(words) == 6
    for text in words:
        patch = text.get_bbox_patch()
        red, green, blue, opacity = patch.get_facecolor()
        shade = opacity * np.array([red, green, blue]) + (1 - opacity)  # drawn over white
        ratio = contrast_ratio(to_rgba(text.get_color()), shade)
        assert ratio >= READABLE, (text.get_text(), text.get_color(), round(ratio, 2))


def test_document_html_is_black_on_white_with_a_key():
    page = document_html([["the", "coach"]], [1.0], np.array([[0.2, 0.8]]), highlight=0, highlight_label="planted")
    assert "background: #fff; color: #000" in page  # whatever the notebook's theme
    assert "Bar and number: the sentence" in page and "the planted" in page and "Shading:" in page


def _markers(lines):
    return [line.get_marker() for line in lines]


def test_curves_differ_by_marker_not_only_by_colour():
    ax = exact_match_by_length({"attention": {5: 1.0, 9: 0.0}, "plain": {5: 0.9, 9: 0.0},
                                "bigger": {5: 0.95, 9: 0.0}}, trained_lengths=(5, 8))
    curves = [line for line in ax.lines if len(line.get_xdata()) == 2 and line.get_label() != "_nolegend_"
              and not line.get_label().startswith("_")]
    assert len(set(_markers(curves))) == 3, _markers(curves)
    sizes = [line.get_markersize() for line in curves]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]  # a later point never hides an earlier
    edges = sorted(line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":")
    assert edges == [4.5, 8.5]  # the band seen in training has visible edges, not only a pale fill
    figure = training_curves({"option1": {"loss": [3, 2, 1], "val_loss": [3, 2.5, 2]},
                              "option2": {"loss": [3, 2.1, 1.1]}, "attention": {"loss": [3, 1.9, 0.9]}}, keys=("loss",))
    lines = figure.axes[0].lines
    by_run = {line.get_label().replace(" (valid)", ""): line.get_marker() for line in lines}
    assert len(set(by_run.values())) == 3, by_run
    assert all(line.get_marker() not in ("", "None", None) for line in lines)


def test_explorer_oracle_outline_and_step_box_stand_out_and_the_legend_hides_no_bar():
    explorer = AttentionExplorer()
    explorer.use_oracle()
    figure = explorer.figure()
    bars_axes, _, heat = figure.axes[:3]
    filled = [patch for patch in bars_axes.patches if patch.get_fill()]
    outlines = [patch for patch in bars_axes.patches if not patch.get_fill()]
    # one bar and one oracle outline per encoder state: an empty list would pass the contrast loop unchecked
    assert len(filled) == len(outlines) == len(explorer.states), (len(filled), len(outlines))
    for outline in outlines:
        assert contrast_ratio(outline.get_edgecolor(), filled[0].get_facecolor()) >= 3, outline.get_edgecolor()
    box = [patch for patch in heat.patches if not patch.get_fill()][-1]
    assert to_rgba(box.get_edgecolor()) == to_rgba("black")
    for step in range(explorer.num_steps):  # the oracle puts a bar of 0.99 and its label under the old legend at t = 1
        explorer.select_step(step)
        explorer.use_oracle()
        figure = explorer.figure()
        bars_axes = figure.axes[0]
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        legend = bars_axes.get_legend().get_window_extent(renderer)
        for item in bars_axes.patches + bars_axes.texts:
            assert not legend.overlaps(item.get_window_extent(renderer)), (step, item)
        plt.close(figure)


def test_grid_titles_in_hindi_get_the_readable_size():
    example = {"weights": np.full((2, 3), 1 / 3), "input_labels": list("abc"), "output_labels": ["घ", "र"],
               "title": "घर"}
    figure = attention_grid([example], ncols=1)
    assert figure.axes[0].title.get_fontsize() >= DEVANAGARI_LABEL_SIZE
