"""Attention heat maps: rows are output steps, columns input positions."""

import matplotlib

import numpy as np

from course_lib.plots.fonts import has_devanagari, width_in_axes
from course_lib.plots.style import series_style, text_colour_on


COLORBAR_WIDTH_INCHES = 0.16  # at most; never more than COLORBAR_FRACTION of the heat map's width
COLORBAR_FRACTION = 0.046
COLORBAR_PAD_INCHES = 0.12
# Smallest size, in points, of Devanagari tick labels. At matplotlib's 10 pt and 100 dpi a stacked cluster such
# as "हूँ" (candrabindu over the headline, the u-matra hooked under ह) is a 9 x 17 pixel blob that reads as a
# garbled, sideways glyph, although its shaping is right; 12 pt gives it about 12 x 21 pixels.
DEVANAGARI_LABEL_SIZE = 12.0


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def attention_heatmap(weights, input_labels, output_labels, ax=None, title=None, annotate=None, fontproperties=None,
                      colorbar=True):
    """Draws an `(L, T)` attention matrix as a heat map (darker = more weight).

    Args:
        weights: array `(output_steps, input_positions)`; rows should sum to 1.
        input_labels: T tick labels for the columns (input tokens).
        output_labels: L tick labels for the rows (output tokens).
        ax: matplotlib axes to draw on (a new figure when None).
        title: optional title.
        annotate: write the weight in each cell (default: when the matrix is
            at most 12 x 12).
        fontproperties: a `matplotlib.font_manager.FontProperties` for the tick
            labels, e.g. a Devanagari font for Hindi. An axis whose labels
            contain Devanagari gets at least `DEVANAGARI_LABEL_SIZE` points.
        colorbar: draw the colour bar (0 to 1) beside the heat map; a grid of
            heat maps draws one per row instead of one per panel.

    Returns:
        The axes.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"`weights` must be a 2-D matrix. Received: weights.shape={weights.shape}")
    rows, columns = weights.shape
    if len(input_labels) != columns or len(output_labels) != rows:
        raise ValueError(
            "Need one label per column and per row. Received: "
            f"weights.shape={weights.shape}, len(input_labels)={len(input_labels)}, "
            f"len(output_labels)={len(output_labels)}"
        )
    if weights.size == 0 or not np.isfinite(weights).all():
        raise ValueError(
            "`weights` must be a non-empty matrix of finite numbers. "
            f"Received: weights.shape={weights.shape}, {int(np.size(weights) - np.isfinite(weights).sum())} non-finite"
        )
    if weights.min() < -1e-6 or weights.max() > 1 + 1e-6:  # the colour range is [0, 1]: more would be clipped
        raise ValueError(
            "`weights` must be attention weights in [0, 1]; these look like scores, not weights "
            "(apply a softmax over the input positions first). "
            f"Received: weights from {weights.min():.4g} to {weights.max():.4g}"
        )
    if ax is None:
        # constrained layout keeps the title, the labels on top and the colour bar inside the figure
        _, ax = _pyplot().subplots(figsize=(0.55 * columns + 2, 0.5 * rows + 1.5), layout="constrained")
    image = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(columns))
    column_font = _label_font(fontproperties, input_labels)
    ax.set_xticklabels(list(input_labels), fontproperties=column_font)
    ax.set_yticks(range(rows))
    ax.set_yticklabels(list(output_labels), fontproperties=_label_font(fontproperties, output_labels))
    ax.set_xlabel("input position j")
    ax.set_ylabel("output step t")
    ax.xaxis.set_ticks_position("top")
    ax.xaxis.set_label_position("top")
    _fit_column_labels(ax, list(input_labels), column_font)
    for label in ax.get_xticklabels() + ax.get_yticklabels():
        label.set_parse_math(False)  # tokens are text: "$5$" would be drawn as maths
    if annotate is None:
        annotate = rows <= 12 and columns <= 12
    if annotate:
        for t in range(rows):
            for j in range(columns):
                value = weights[t, j]
                ax.text(j, t, f"{value:.2f}", ha="center", va="center", fontsize=8,
                        color=text_colour_on(image.cmap(image.norm(value))))  # the better contrast on its cell
    if title:
        font = {}
        if fontproperties is not None:  # the labels' font (it may be needed for Hindi), at the title's size
            font["fontproperties"] = fontproperties.copy()
            font["fontproperties"].set_size(_pyplot().rcParams["axes.titlesize"])
        ax.set_title(title, pad=28, **font)
    if colorbar:
        ax.figure.colorbar(image, cax=_colorbar_axes(ax), label="attention weight α")
    return ax


def _label_font(fontproperties, labels):
    """`fontproperties`, at least `DEVANAGARI_LABEL_SIZE` points when a label contains Devanagari."""
    if fontproperties is None or not any(has_devanagari(str(label)) for label in labels):
        return fontproperties
    if fontproperties.get_size_in_points() >= DEVANAGARI_LABEL_SIZE:
        return fontproperties
    font = fontproperties.copy()
    font.set_size(DEVANAGARI_LABEL_SIZE)
    return font


def _colorbar_axes(ax):
    """Axes for the colour bar, inside `ax`'s own box on its right: exactly as tall as the heat map, whatever
    a layout does to it later (a bar placed beside the axes with a fixed length/width ratio, Matplotlib's
    way, stopped short of a tall or narrow map's top and bottom rows)."""
    width_inches = ax.get_position().width * ax.figure.get_figwidth()
    width = min(COLORBAR_FRACTION, COLORBAR_WIDTH_INCHES / width_inches)  # as shares of the heat map's width
    return ax.inset_axes([1.0 + COLORBAR_PAD_INCHES / width_inches, 0.0, width, 1.0])


def _fit_column_labels(ax, labels, fontproperties=None, smallest=6.0, room=0.75):
    """Column labels wider than their column are turned upright, shrunk or thinned so none overlap.

    `room` leaves space for the axes to shrink later (colour bar, layout).
    """
    if not hasattr(ax.figure.canvas, "get_renderer"):  # a canvas that cannot measure text (not Agg): leave them
        return
    measure = width_in_axes(ax)
    cell = room / len(labels)  # the width of one column, as a fraction of the axes
    probe = ax.text(0, 0, "", fontproperties=fontproperties)
    if fontproperties is None:  # otherwise the labels are drawn at the font's own size
        probe.set_fontsize(_pyplot().rcParams["xtick.labelsize"])
    size = probe.get_fontsize()

    def widest(rotation):
        probe.set_rotation(rotation)
        widths = []
        for label in labels:
            probe.set_text(str(label))
            widths.append(measure(probe))
        return max(widths)

    try:
        if widest(0) <= cell:
            return
        thickness = widest(90)  # one upright line
    finally:
        probe.remove()
    new_size = max(smallest, size * min(1.0, cell / thickness))
    every = int(np.ceil(thickness * new_size / size / cell))
    if every > 1:  # even the smallest size does not fit: label every `every`-th column
        ax.set_xticks(range(len(labels)), [str(label) if j % every == 0 else "" for j, label in enumerate(labels)],
                      fontproperties=fontproperties)
    ax.tick_params(axis="x", labelrotation=90, labelsize=new_size)


def exact_match_by_length(results, trained_lengths=None, ax=None, title="Exact match against input length"):
    """Plots exact-match curves, one per model: `{name: {length: score}}`.

    Scores are shares in `[0, 1]` (not percentages); `trained_lengths` is the
    pair `(shortest, longest)` of the lengths seen in training, shaded.
    """
    if not results or not all(results.values()):
        raise ValueError(f"Nothing to plot: give at least one model with scores. Received: results={results!r}")
    curves = {}
    for name, scores in results.items():
        by_length = {}
        for key, value in scores.items():  # ints, or strings such as "5" from a JSON file
            try:
                length = int(key)
            except (TypeError, ValueError):
                raise ValueError(f"Lengths must be whole numbers. Received: {key!r} for model {name!r}") from None
            if length in by_length:
                raise ValueError(f"Model {name!r} has two scores for length {length}. Received: keys {list(scores)}")
            by_length[length] = value
        lengths = sorted(by_length)
        values = [float(by_length[length]) for length in lengths]
        for length, value in zip(lengths, values):
            if not 0.0 <= value <= 1.0:  # NaN fails too
                raise ValueError(
                    "Exact-match scores must be shares in [0, 1] (not percentages). "
                    f"Received: {value} for model {name!r} at length {length}"
                )
        curves[name] = (lengths, values)
    if trained_lengths is not None:
        try:
            low, high = (float(length) for length in trained_lengths)
        except (TypeError, ValueError):
            low = high = None
        if low is None or not low <= high:  # NaN fails too
            raise ValueError(
                "`trained_lengths` must be a pair (shortest, longest) of lengths seen in training. "
                f"Received: trained_lengths={trained_lengths!r}"
            )
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(7.5, 3.8), layout="constrained")
    for index, (name, (lengths, values)) in enumerate(curves.items()):
        ax.plot(lengths, values, label=name, **series_style(index))  # markers too: apart without colour
    if trained_lengths is not None:
        ax.axvspan(low - 0.5, high + 0.5, color="grey", alpha=0.12, label="lengths seen in training")
        for edge in (low - 0.5, high + 0.5):  # the pale band alone fades on a printout
            ax.axvline(edge, color="0.4", linestyle=":", linewidth=1)
    ax.set_xlabel("input length")
    every_length = sorted({length for lengths, _ in curves.values() for length in lengths})
    if len(every_length) <= 20:  # a tick at each length scored (the band's edges and the first unseen length too)
        ax.set_xticks(every_length)
    ax.set_ylabel("exact match")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)  # beside the axes: it hides no point
    ax.set_title(title)
    return ax


matplotlib.rcParams.setdefault("figure.dpi", 100)
