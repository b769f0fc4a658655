"""Captioning pictures: where the decoder looked for each word, and training curves."""

import textwrap

import numpy as np

from course_lib.plots.style import series_style


def _check_grid(grid):
    """`(H, W)` of the feature map, both at least 1, as ints."""
    try:
        height, width = (int(size) for size in grid)
    except (TypeError, ValueError):
        height = width = 0
    if height < 1 or width < 1:
        raise ValueError(f"`grid` must be (H, W) with H, W >= 1. Received: grid={grid!r}")
    return height, width


def upsample_attention(weights, grid, image_shape, top=None):
    """One step's weights over `H * W` locations as a smooth map the size of the image.

    Args:
        weights: `(H * W,)` attention weights (location `j = row * W + col`).
        grid: `(H, W)`.
        image_shape: `(height, width)` of the image.
        top: the weight that maps to 1. Defaults to the map's own maximum;
            pass one value for several maps to draw them on one scale.

    Returns:
        float `(height, width)` in `[0, 1]` (the map divided by `top`).
    """
    from PIL import Image

    weights = np.asarray(weights, "float32")
    height, width = _check_grid(grid)
    if weights.shape != (height * width,):
        raise ValueError(
            f"Need {height * width} weights for a {height} x {width} grid. Received: weights.shape={weights.shape}"
        )
    if not np.isfinite(weights).all():
        raise ValueError(
            f"`weights` must be finite. Received: {int(weights.size - np.isfinite(weights).sum())} NaN or inf weights"
        )
    if top is None:
        top = float(weights.max())
    elif not (isinstance(top, (int, float, np.number)) and np.isfinite(top) and top > 0):
        raise ValueError(f"`top` must be a finite weight above 0. Received: top={top!r}")
    normalised = weights.reshape(height, width) / top if top > 0 else np.zeros((height, width), "float32")
    resized = Image.fromarray(normalised.astype("float32"), mode="F").resize(
        (int(image_shape[1]), int(image_shape[0])), Image.Resampling.BILINEAR
    )
    return np.clip(np.asarray(resized), 0.0, 1.0)


def as_rgb_uint8(image):
    """`image` as uint8 `(height, width, 3)`: a PIL image or array; grey `(H, W)` or `(H, W, 1)` gets three
    channels, an alpha channel is dropped, and floats in `[0, 1]` (what Keras preprocessing gives) are scaled
    to `[0, 255]` (taken as 0-255 bytes they would draw nearly black).

    Raises:
        ValueError: for another shape, or values that are not finite or outside `[0, 255]`.
    """
    array = np.asarray(image)
    if array.dtype == np.uint8 and array.ndim == 3 and array.shape[-1] == 3 and 0 not in array.shape:
        return array  # already what is drawn (the overlay grid converts once, then blends every panel)
    floats = array.dtype.kind == "f"
    if array.ndim == 3 and array.shape[-1] == 1:
        array = array[..., 0]
    if array.ndim == 2:
        array = np.stack([array] * 3, axis=-1)
    if array.ndim != 3 or array.shape[-1] not in (3, 4) or 0 in array.shape or array.dtype.kind not in "uif":
        raise ValueError(
            "`image` must be (height, width, 3) colour, (height, width, 4) with alpha, or (height, width) grey. "
            f"Received: image.shape={array.shape}, dtype={array.dtype}"
        )
    array = array[..., :3].astype("float64")
    if not np.isfinite(array).all() or array.min() < 0 or array.max() > 255:
        raise ValueError(
            "`image` values must be finite and in [0, 1] (floats) or [0, 255]. "
            f"Received: from {np.nanmin(array)} to {np.nanmax(array)}, finite={bool(np.isfinite(array).all())}"
        )
    if floats and array.max() <= 1.0:
        array = array * 255.0
    return np.round(array).astype("uint8")


def white_region(image, attention_map, strength=0.85):
    """The slides' picture: the attended region turns white, the rest stays as it is.

    Args:
        image: `(height, width, 3)` (see `as_rgb_uint8` for what else is taken).
        attention_map: `(height, width)` in `[0, 1]`.
        strength: how white a location of weight 1 turns (1: pure white).

    Returns:
        The blended image, uint8 `(height, width, 3)`.
    """
    image = as_rgb_uint8(image).astype("float32")
    attention_map = np.asarray(attention_map, "float32")
    if attention_map.shape != image.shape[:2]:
        raise ValueError(
            "`attention_map` must be the image's size. "
            f"Received: attention_map.shape={attention_map.shape}, image.shape={image.shape}"
        )
    alpha = strength * attention_map[..., None]
    return (image * (1 - alpha) + 255.0 * alpha).astype("uint8")


LARGEST_BOX_COLOUR = "#ff7f0e"  # orange: stands out on the darkened image and on the white region


def _box_largest(axis, weights, grid, image_shape):
    """Outlines the feature-map cell(s) with the largest weight, the location a hit test reads.

    The smooth white region can light up two objects about equally while the largest single weight sits on one
    of them; the box shows which. Cells tied for the largest weight are all outlined.
    """
    from matplotlib.patches import Rectangle

    height, width = grid
    cell_height, cell_width = image_shape[0] / height, image_shape[1] / width
    for location in np.flatnonzero(weights == weights.max()):
        row, column = divmod(int(location), width)
        axis.add_patch(Rectangle((column * cell_width - 0.5, row * cell_height - 0.5), cell_width, cell_height,
                                 fill=False, edgecolor=LARGEST_BOX_COLOUR, linewidth=1.5))


def attention_overlay_grid(image, words, alignments, grid, columns=5, title=None, figure_width=None, scale="panel"):
    """One panel per generated word: the image with that word's attention in white.

    With `scale="panel"` each panel is scaled to its own largest weight, so a
    nearly uniform step looks as bright as a sharp one; with `scale="shared"`
    white is the largest weight in the whole figure, so a pale panel is a step
    whose attention was spread out. Either way each panel's title gives its
    largest weight, and the figure's title the uniform level `1 / (H W)`. A
    box outlines the location of the largest weight (every one, if tied):
    the location an attention-on-object test reads.

    Args:
        image: `(height, width, 3)` uint8, or floats in `[0, 1]`, or grey (see `as_rgb_uint8`).
        words: the generated words, a list (the `<stop>` may be included as a word).
        alignments: `(steps, H * W)` weights; row `t` produced word `t`.
        grid: `(H, W)` of the feature map.
        columns: panels per row.
        title: figure title, e.g. the caption.
        figure_width: inches; defaults to 2 per column.
        scale: `"panel"` (each panel to its own maximum) or `"shared"` (one
            scale for all panels).

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    if scale not in ("panel", "shared"):
        raise ValueError(f'`scale` must be "panel" or "shared". Received: scale={scale!r}')

    if isinstance(words, str):  # a caption string would give one panel per character
        raise ValueError(f"`words` must be a list of words (caption.split()). Received: the string {words!r}")
    image = as_rgb_uint8(image)  # before the figure opens: a refused image leaves no figure behind
    alignments = np.asarray(alignments, dtype=float)
    grid = _check_grid(grid)
    if alignments.ndim != 2 or alignments.shape[0] < len(words):
        raise ValueError(
            f"Need one row of weights per word. Received: {len(words)} words, alignments.shape={alignments.shape}"
        )
    if alignments.shape[1] != int(grid[0]) * int(grid[1]) or not np.isfinite(alignments[: len(words)]).all():
        raise ValueError(
            f"Need finite weights over the {int(grid[0]) * int(grid[1])} locations of a {grid[0]} x {grid[1]} grid. "
            f"Received: alignments.shape={alignments.shape}, finite={bool(np.isfinite(alignments[: len(words)]).all())}"
        )
    shown = alignments[: len(words)]  # (words, H * W)
    top = float(shown.max()) if scale == "shared" and shown.size and shown.max() > 0 else None
    panels = len(words) + 1
    columns = max(1, min(columns, panels))
    rows = int(np.ceil(panels / columns))
    width = figure_width or 2.0 * columns
    figure, axes = plt.subplots(
        rows, columns, figsize=(width, width / columns * rows * 1.35), squeeze=False, layout="constrained"
    )
    for axis in axes.ravel():
        axis.axis("off")
    axes[0, 0].imshow(image)
    axes[0, 0].set_title("image", fontsize=9)
    for index, word in enumerate(words):
        axis = axes.ravel()[index + 1]
        axis.imshow(white_region(image, upsample_attention(alignments[index], grid, image.shape[:2], top=top)))
        axis.set_title(f"{word}\nmax α {alignments[index].max():.3f}", fontsize=9)  # uniform is 0.005 on 14 x 14
        _box_largest(axis, alignments[index], grid, image.shape[:2])
    uniform = f"(uniform weight: 1/{alignments.shape[1]} = {1 / alignments.shape[1]:.3f}; box: the largest α)"
    if top is not None:
        uniform = f"{uniform}\n(one scale for every panel: white = α {top:.2f})"
    else:  # say so: a nearly uniform step is painted as white as a sharp one
        uniform = f"{uniform}\n(each panel scaled to its own largest α: compare the panels' max α)"
    text = f"{title}\n{uniform}" if title else uniform
    # Wrapped to the figure's width (about 12 characters an inch at this size): a narrow figure of one or
    # two words cut a long title off at both sides.
    characters = max(20, int(width * 12))
    text = "\n".join(textwrap.fill(line, characters) for line in text.split("\n"))
    figure.suptitle(text, fontsize=10)
    return figure


def training_curves(histories, keys=("loss", "token_accuracy"), title=None, baselines=None):
    """Loss and metric curves, one line per run.

    Args:
        histories: `{run name: history dict}` (Keras `History.history`, or
            any dict of lists); `val_` entries are drawn dashed.
        keys: the quantities to draw, one panel each; each must be in at
            least one history.
        title: the figure's title (None: none).
        baselines: optional `{key: (value, label)}`: a dotted horizontal line
            on that key's panel (e.g. an image-blind guesser's accuracy, the
            level a captioner's margin is measured from).

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    if not histories:
        raise ValueError("Need at least one history to draw. Received: {}")
    keys = keys if isinstance(keys, str) else list(keys)
    if isinstance(keys, str) or not keys:  # a string would give one panel per letter
        raise ValueError(f"`keys` must be a non-empty list of history keys, e.g. ('loss',). Received: keys={keys!r}")
    available = sorted({key for history in histories.values() for key in getattr(history, "history", history)})
    missing = [key for key in keys if key not in available]
    if missing:  # a panel without any line
        raise ValueError(f"No history has the keys {missing}. Received: keys={keys}, available: {available}")
    baselines = dict(baselines or {})
    stray = [key for key in baselines if key not in keys]
    if stray:  # a baseline for a panel that is not drawn would vanish silently
        raise ValueError(f"Baselines must be for drawn keys. Received: baselines for {stray}, keys={keys}")
    figure, axes = plt.subplots(1, len(keys), figsize=(4.5 * len(keys), 3.2), squeeze=False)
    for axis, key in zip(axes[0], keys):
        for index, (name, history) in enumerate(histories.items()):
            history = getattr(history, "history", history)
            style = series_style(index)  # a marker per run: runs stay apart without colour
            if key in history:
                line, = axis.plot(np.arange(1, len(history[key]) + 1), history[key], label=f"{name}", **style)
                if f"val_{key}" in history:
                    axis.plot(np.arange(1, len(history[f"val_{key}"]) + 1), history[f"val_{key}"], "--",
                              color=line.get_color(), label=f"{name} (valid)", markerfacecolor="none", **style)
        if key in baselines:
            value, label = baselines[key]
            axis.axhline(float(value), color="0.3", linestyle=":", linewidth=1.2, label=label)
        axis.set_xlabel("epoch")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_ylabel(key.replace("_", " "))  # "token_accuracy" -> "token accuracy"
        axis.set_title(key.replace("_", " "))
        axis.legend(fontsize=8)
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    return figure
