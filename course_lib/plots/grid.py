"""A grid of attention heat maps, e.g. nine test words side by side."""

import math

import numpy as np
from matplotlib.font_manager import FontProperties

from course_lib.plots.attention import _fit_column_labels, _label_font, attention_heatmap
from course_lib.plots.fonts import devanagari_font

SUPTITLE_SIZE = 13  # points; the panels' titles are 12 with Devanagari, 10 otherwise


def _as_example(example, index):
    if isinstance(example, dict):
        missing = {"weights", "input_labels", "output_labels"} - set(example)
        if missing:
            raise ValueError(
                f"Example {index} lacks keys {sorted(missing)}. Received: keys={sorted(example)}"
            )
        return example
    if isinstance(example, (list, tuple)) and len(example) in (3, 4):
        keys = ("weights", "input_labels", "output_labels", "title")
        return dict(zip(keys, example))
    raise ValueError(
        "Each example must be a dict with 'weights', 'input_labels', 'output_labels' "
        f"(and optional 'title') or such a tuple. Received: {type(example).__name__} at index {index}"
    )


def attention_grid(examples, ncols=3, fontproperties=None, cell_size=2.6, suptitle=None, annotate=False,
                   xlabel="input position j", ylabel="output step t", min_label_size=11.0, max_label_size=14.0):
    """Draws several attention heat maps in a grid.

    Args:
        examples: list of dicts with `weights` `(L, T)`, `input_labels` (T),
            `output_labels` (L) and optionally `title`; or tuples in that order.
        ncols: heat maps per row.
        fontproperties: font for the tick labels and titles (default: the
            packaged Devanagari font with a Latin fallback).
        cell_size: inches per heat map (taller for heat maps with many rows).
        suptitle: a title over the whole figure.
        annotate: write the weights in the cells.
        xlabel, ylabel: axis labels of every heat map (columns: inputs, at the
            top; rows: outputs, on the heat maps of the first column). None
            leaves them out.
        min_label_size, max_label_size: bounds, in points, of the row labels'
            font size. The size follows the height of one row, so short outputs
            get large labels; a heat map with many rows is drawn taller instead
            of shrinking its labels below `min_label_size` (a lone vowel sign or
            virama, drawn on a dotted circle, is hard to read when small).

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    examples = [_as_example(example, index) for index, example in enumerate(examples)]
    if not examples:
        raise ValueError("`examples` is empty. Received: 0 examples")
    if int(ncols) < 1:
        raise ValueError(f"`ncols` must be at least 1. Received: ncols={ncols}")
    fontproperties = fontproperties or devanagari_font()
    ncols = min(int(ncols), len(examples))
    nrows = math.ceil(len(examples) / ncols)
    # Each row of the grid is tall enough for its longest output at the smallest label size.
    row_pitch = 2.0 * min_label_size / 72  # inches per output row
    tallest = [max(len(example["output_labels"]) for example in examples[row * ncols:(row + 1) * ncols])
               for row in range(nrows)]
    heights = [max(cell_size * 1.15, row_pitch * rows + 1.3) for rows in tallest]  # + title, labels, ticks
    figure, axes = plt.subplots(
        nrows, ncols, figsize=(cell_size * ncols * 1.25, sum(heights)), squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    for index, (ax, example) in enumerate(zip(axes.flat, examples)):
        try:
            attention_heatmap(
                np.asarray(example["weights"]),
                list(example["input_labels"]),
                list(example["output_labels"]),
                ax=ax,
                annotate=annotate,
                fontproperties=fontproperties,
                # one colour bar per row (every panel has the same 0-1 scale), beside its last heat map
                colorbar=index % ncols == ncols - 1 or index == len(examples) - 1,
            )
        except ValueError:
            plt.close(figure)  # a bad example leaves no half-drawn figure behind
            raise
        ax.set_xlabel(xlabel or "", fontsize=9)
        ax.set_ylabel((ylabel or "") if index % ncols == 0 else "", fontsize=9)
        if example.get("title"):
            ax.set_title(example["title"], fontproperties=_label_font(fontproperties, [example["title"]]),
                         pad=30 if xlabel else 18)  # Devanagari at its readable size, as the tick labels
    for ax in list(axes.flat)[len(examples):]:
        ax.axis("off")
    if suptitle:  # larger than the panels' titles (a font object alone would leave it at 10 points)
        title_font = fontproperties.copy() if fontproperties is not None else FontProperties()
        title_font.set_size(SUPTITLE_SIZE)
        figure.suptitle(suptitle, fontproperties=title_font)
    figure.tight_layout()
    drawn = list(axes.flat)[: len(examples)]
    _size_row_labels(figure, drawn, examples, min_label_size, max_label_size)
    figure.tight_layout()
    for ax, example in zip(drawn, examples):  # larger row labels leave less width: fit the column labels again
        _fit_column_labels(ax, list(example["input_labels"]), fontproperties, room=0.95)
    figure.tight_layout()
    return figure


def _size_row_labels(figure, axes, examples, smallest, largest):
    """Sets one row-label size for all heat maps, from the height of the shortest row among them.

    One size for every panel, so that the same word (e.g. `<stop>`) does not
    look larger in a short output than in a long one.
    """
    pitches = [ax.get_position().height * figure.get_figheight() * 72 / max(1, len(example["output_labels"]))
               for ax, example in zip(axes, examples)]  # points per row
    size = float(np.clip(0.5 * min(pitches), smallest, largest))
    for ax in axes:
        ax.tick_params(axis="y", labelsize=size)
