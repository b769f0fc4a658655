"""Generated "shapes" captioning data: coloured shapes on a grid, with gold locations.

Every image holds one to three shapes (circle, square, triangle) in four
colours, each in its own cell of a 3 x 3 grid (with a little jitter in size and
position, and some pixel noise). The caption names the shapes in reading
order (top row first, left to right), linking neighbours with "above" when the
next shape sits in a lower row and "left of" when it sits in the same row:

    "a red circle above a blue square left of a green triangle"

So the caption is a function of the image, and exact caption match is a fair
score. Because every object a caption names has a known bounding box, we can
also check *where* an attentional decoder looks when it writes an object's
colour or shape word (`object_location_masks`, and the attention-on-object
rate in `course_lib.metrics.captioning`).

Everything is deterministic given the seed; `load_shapes` returns train, valid
and test parts drawn from disjoint seeds.
"""

from dataclasses import dataclass

import numpy as np

# Chosen so that every pair stays apart for readers with red-green or blue-yellow colour blindness, not only in
# hue: the red is darker than the light green (a mid red and a mid green were one olive for deuteranopes,
# 10 CIELAB units apart). `tests/test_shapes_data.py` keeps every pair, and every colour against the dark
# background, at least 30 units apart under simulated protanopia, deuteranopia and tritanopia.
COLOURS = {
    "red": (200, 30, 25),
    "green": (100, 225, 130),
    "blue": (40, 90, 240),
    "yellow": (250, 235, 60),
}
BACKGROUND = 20.0  # grey level of the canvas, before its per-image shift and the pixel noise
SHAPES = ("circle", "square", "triangle")
COLOUR_NAMES = tuple(COLOURS)
GRID = 3


@dataclass
class ShapesSplit:
    """One part of the shapes data.

    Attributes:
        images: uint8 `(n, size, size, 3)`.
        captions: list of `n` strings.
        colours, shapes: int `(n, 3)`, indices into `COLOUR_NAMES` / `SHAPES`
            for each object in caption order, -1 where there is no object.
        rows, cols: int `(n, 3)`, grid cell of each object (-1 if none).
        boxes: float `(n, 3, 4)` pixel boxes `(x0, y0, x1, y1)`, exclusive ends.
    """

    images: np.ndarray
    captions: list
    colours: np.ndarray
    shapes: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    boxes: np.ndarray

    def __len__(self):
        return len(self.captions)

    @property
    def image_size(self):
        return self.images.shape[1]

    def subset(self, indices):
        indices = np.asarray(indices)
        return ShapesSplit(
            self.images[indices], [self.captions[i] for i in indices], self.colours[indices],
            self.shapes[indices], self.rows[indices], self.cols[indices], self.boxes[indices],
        )


def describe(objects):
    """Caption of objects `[(colour, shape, row, col), ...]` sorted in reading order."""
    words = []
    for index, (colour, shape, row, col) in enumerate(objects):
        if index > 0:
            words += ["above"] if row > objects[index - 1][2] else ["left", "of"]
        words += ["a", colour, shape]
    return " ".join(words)


_CENTRES = {}


def _pixel_centres(size):
    if size not in _CENTRES:
        _CENTRES[size] = np.mgrid[0:size, 0:size] + 0.5
    return _CENTRES[size]


def _draw(canvas, shape, colour, centre_x, centre_y, half):
    """Paints one shape into `canvas` (float `(size, size, 3)`) in place."""
    ys, xs = _pixel_centres(canvas.shape[0])
    if shape == "circle":
        inside = (xs - centre_x) ** 2 + (ys - centre_y) ** 2 <= half**2
    elif shape == "square":
        inside = (np.abs(xs - centre_x) <= half * 0.85) & (np.abs(ys - centre_y) <= half * 0.85)
    elif shape == "triangle":  # apex up, base at the bottom
        top, bottom = centre_y - half, centre_y + half
        height = np.clip((ys - top) / (bottom - top), 0.0, 1.0)
        inside = (ys >= top) & (ys <= bottom) & (np.abs(xs - centre_x) <= half * height)
    else:
        raise ValueError(f"Unknown shape. Received: shape={shape!r}")
    canvas[inside] = colour
    return inside


def generate_shapes(count, image_size=48, seed=0, max_objects=3, noise=12.0):
    """Generates `count` captioned images.

    Args:
        count: number of images.
        image_size: side in pixels (a multiple of 3 keeps the grid cells equal).
        seed: the random seed; the same seed gives the same data.
        max_objects: 1 to 3 shapes per image (each count equally likely).
        noise: standard deviation of the Gaussian pixel noise.

    Returns:
        A `ShapesSplit`.
    """
    if count < 1:
        raise ValueError(f"`count` must be positive. Received: count={count}")
    if not 1 <= max_objects <= 3:
        raise ValueError(f"`max_objects` must lie in 1..3. Received: max_objects={max_objects}")
    if image_size < 24:
        raise ValueError(f"`image_size` must be at least 24 pixels. Received: image_size={image_size}")
    rng = np.random.default_rng(seed)
    cell = image_size / GRID
    images = np.zeros((count, image_size, image_size, 3), "uint8")
    colours = np.full((count, 3), -1, "int32")
    shapes = np.full((count, 3), -1, "int32")
    rows = np.full((count, 3), -1, "int32")
    cols = np.full((count, 3), -1, "int32")
    boxes = np.zeros((count, 3, 4), "float32")
    captions = []
    for n in range(count):
        number = int(rng.integers(1, max_objects + 1))
        cells = np.sort(rng.choice(GRID * GRID, size=number, replace=False))  # reading order
        canvas = np.full((image_size, image_size, 3), BACKGROUND) + rng.normal(0, 4, size=3)
        objects = []
        for k, cell_index in enumerate(cells):
            row, col = divmod(int(cell_index), GRID)
            colour = int(rng.integers(len(COLOUR_NAMES)))
            shape = int(rng.integers(len(SHAPES)))
            half = cell * rng.uniform(0.30, 0.42)
            centre_x = (col + 0.5) * cell + rng.uniform(-0.08, 0.08) * cell
            centre_y = (row + 0.5) * cell + rng.uniform(-0.08, 0.08) * cell
            tint = np.asarray(COLOURS[COLOUR_NAMES[colour]]) + rng.normal(0, 10, size=3)
            inside = _draw(canvas, SHAPES[shape], tint, centre_x, centre_y, half)
            ys, xs = np.nonzero(inside)
            boxes[n, k] = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)
            colours[n, k], shapes[n, k], rows[n, k], cols[n, k] = colour, shape, row, col
            objects.append((COLOUR_NAMES[colour], SHAPES[shape], row, col))
        canvas += rng.normal(0, noise, size=canvas.shape)
        images[n] = np.clip(canvas, 0, 255).astype("uint8")
        captions.append(describe(objects))
    return ShapesSplit(images, captions, colours, shapes, rows, cols, boxes)


def load_shapes(train=6000, valid=500, test=1000, image_size=48, seed=0):
    """Train, valid and test parts, each from its own seed (no shared images by design).

    Returns:
        A dict `{"train": ShapesSplit, "valid": ..., "test": ...}`.
    """
    return {
        "train": generate_shapes(train, image_size, seed=seed * 3 + 11),
        "valid": generate_shapes(valid, image_size, seed=seed * 3 + 12),
        "test": generate_shapes(test, image_size, seed=seed * 3 + 13),
    }


def object_location_masks(boxes, image_size, grid_height, grid_width, min_overlap=0.25):
    """Which feature-map locations lie on each object.

    Location `j = row * grid_width + col` of an `H x W` feature map covers the
    image patch `[col, col+1) x [row, row+1)` in units of `image_size / W`
    (resp. `/ H`). It lies on an object when the object's bounding box covers
    at least `min_overlap` of that patch.

    Args:
        boxes: `(n, objects, 4)` pixel boxes `(x0, y0, x1, y1)`.
        image_size: side of the images the boxes refer to.
        grid_height, grid_width: the feature map's `H` and `W`.
        min_overlap: share of a location's patch the box must cover.

    Returns:
        bool `(n, objects, H * W)`.
    """
    boxes = np.asarray(boxes, "float32")
    if boxes.ndim != 3 or boxes.shape[-1] != 4:
        raise ValueError(f"`boxes` must have shape (n, objects, 4). Received: boxes.shape={boxes.shape}")
    patch_h, patch_w = image_size / grid_height, image_size / grid_width
    top = np.arange(grid_height) * patch_h
    left = np.arange(grid_width) * patch_w
    x0, y0, x1, y1 = (boxes[..., i, None] for i in range(4))  # (n, objects, 1)
    overlap_x = np.clip(np.minimum(x1, left + patch_w) - np.maximum(x0, left), 0, None)  # (n, obj, W)
    overlap_y = np.clip(np.minimum(y1, top + patch_h) - np.maximum(y0, top), 0, None)  # (n, obj, H)
    area = overlap_y[..., :, None] * overlap_x[..., None, :]  # (n, obj, H, W)
    masks = area >= min_overlap * patch_h * patch_w
    return masks.reshape(boxes.shape[0], boxes.shape[1], grid_height * grid_width)
