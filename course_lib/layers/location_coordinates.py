"""Telling each feature-map location where it is: `a_j -> [a_j; y_j; x_j]`.

A location `a_j` of a small CNN describes only the window of pixels it
sees. When that window is much smaller than the image, two identical shapes
in different places give the same `a_j` (away from the border), and an attentional decoder that
reads `c_t = sum_j alpha_jt a_j` cannot tell *where* it looked: it can name
an object but not say whether the next one is "above" or "left of" it, nor
find which object comes next in reading order. (VGG16's conv5 locations see
most of a 224-pixel image, so zero padding at the borders tells them roughly
where they are.) Appending the location's own row and column, scaled to
`[-1, 1]`, puts the "where" into every `a_j`, and so into `W_att a_j` (the
scores) and into `c_t` (what the decoder reads). This is the idea of Liu et
al.'s CoordConv (2018), applied to the map the decoder attends over.
"""

import keras
import numpy as np
from keras import ops

from course_lib.layers.masking import check_count


def grid_coordinates(height, width):
    """`(height * width, 2)` float32: `(y, x)` of each location in row-major order, each in `[-1, 1]`
    (0 along an axis of size 1)."""
    rows = np.linspace(-1.0, 1.0, height) if height > 1 else np.zeros(1)
    cols = np.linspace(-1.0, 1.0, width) if width > 1 else np.zeros(1)
    y, x = np.meshgrid(rows, cols, indexing="ij")  # (height, width) each
    return np.stack([y.ravel(), x.ravel()], axis=-1).astype("float32")  # (height * width, 2)


@keras.saving.register_keras_serializable(package="course_lib")
class LocationCoordinates(keras.layers.Layer):
    """Appends each location's `(y, x)` on the feature map to its features.

    Location `j = row * width + col` of an `H x W` map becomes
    `[a_j; y_j; x_j]` with `y_j = -1 + 2 row / (H - 1)` and
    `x_j = -1 + 2 col / (W - 1)`: the top-left location gets `(-1, -1)`, the
    bottom-right `(1, 1)`. The layer has no weights; the decoder's `W_att`
    and GRU learn what to make of the two new numbers.

    Args:
        grid: `(H, W)`, the feature map's height and width.

    Call arguments:
        locations: `(batch, H * W, C)` features `a_j`, row by row.

    Returns:
        `(batch, H * W, C + 2)`: the features, then `y_j` and `x_j`.
    """

    def __init__(self, grid, **kwargs):
        super().__init__(**kwargs)
        if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or len(grid) != 2:
            raise ValueError(f"`grid` must be (height, width). Received: grid={grid!r}")
        self.grid = (check_count(grid[0], "grid[0]"), check_count(grid[1], "grid[1]"))
        self.coordinates = grid_coordinates(*self.grid)  # (H * W, 2)

    def _check(self, locations_shape):
        count = self.grid[0] * self.grid[1]
        if len(locations_shape) != 3 or locations_shape[1] not in (None, count):
            raise ValueError(
                f"`locations` must have shape (batch, {count}, channels) for a {self.grid[0]} x {self.grid[1]} "
                f"grid. Received: locations.shape={tuple(locations_shape)}"
            )

    def build(self, locations_shape):
        self._check(locations_shape)

    def call(self, locations):
        self._check(locations.shape)
        coordinates = ops.convert_to_tensor(self.coordinates, dtype=locations.dtype)  # (L, 2)
        coordinates = ops.broadcast_to(
            coordinates[None], (ops.shape(locations)[0],) + tuple(self.coordinates.shape)
        )  # (batch, L, 2)
        return ops.concatenate([locations, coordinates], axis=-1)  # (batch, L, C + 2)

    def compute_output_shape(self, locations_shape):
        channels = locations_shape[2]
        return (locations_shape[0], locations_shape[1], None if channels is None else channels + 2)

    def get_config(self):
        config = super().get_config()
        config.update({"grid": list(self.grid)})
        return config
