"""A grid of attention heat maps, e.g. nine test words side by side."""

import math

import numpy as np

from course_lib.plots.attention import attention_heatmap
from course_lib.plots.fonts import devanagari_font


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


def attention_grid(examples, ncols=3, fontproperties=None, cell_size=2.6, suptitle=None, annotate=False):
    """Draws several attention heat maps in a grid.

    Args:
        examples: list of dicts with `weights` `(L, T)`, `input_labels` (T),
            `output_labels` (L) and optionally `title`; or tuples in that order.
        ncols: heat maps per row.
        fontproperties: font for the tick labels and titles (default: the
            packaged Devanagari font with a Latin fallback).
        cell_size: inches per heat map.
        suptitle: a title over the whole figure.
        annotate: write the weights in the cells.

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
    figure, axes = plt.subplots(
        nrows, ncols, figsize=(cell_size * ncols * 1.25, cell_size * nrows * 1.15), squeeze=False
    )
    for ax, example in zip(axes.flat, examples):
        try:
            attention_heatmap(
                np.asarray(example["weights"]),
                list(example["input_labels"]),
                list(example["output_labels"]),
                ax=ax,
                annotate=annotate,
                fontproperties=fontproperties,
            )
        except ValueError:
            plt.close(figure)  # a bad example leaves no half-drawn figure behind
            raise
        ax.set_xlabel("")
        ax.set_ylabel("")
        if example.get("title"):
            ax.set_title(example["title"], fontproperties=fontproperties, pad=18)
    for ax in list(axes.flat)[len(examples):]:
        ax.axis("off")
    if suptitle:
        figure.suptitle(suptitle, fontproperties=fontproperties)
    figure.tight_layout()
    return figure
