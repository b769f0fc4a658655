"""A small CNN image encoder, trained from scratch with the captioner."""

import keras
from keras import ops

from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import check_count


def check_cnn_sizes(filters, vector_dim, convs_per_block):
    """Raises `ValueError` unless the sizes of a `SmallCNNEncoder` are whole numbers (checked before any
    `int()`: "32" used to become the blocks (3, 2), and 2.7 channels 2)."""
    if isinstance(filters, (str, bytes)) or not hasattr(filters, "__len__") or len(filters) == 0:
        raise ValueError(f"`filters` must be a non-empty list of positive ints. Received: filters={filters!r}")
    for block, channels in enumerate(filters):
        check_count(channels, f"filters[{block}]")
    check_count(vector_dim, "vector_dim", least=0)
    check_count(convs_per_block, "convs_per_block")


@keras.saving.register_keras_serializable(package="course_lib")
class SmallCNNEncoder(keras.layers.Layer):
    """Encodes an image as a feature map of locations and as one vector.

    A stack of blocks `(conv 3x3 -> ReLU) x convs_per_block -> max-pool 2x2`
    (one block per entry of `filters`) turns a `(size, size, 3)` image into an
    `H x W x C` map, with `H = size // 2**len(filters)` (each pooling rounds down). Its `H * W` cells are the
    locations `a_j` an attentional decoder reads (VGG16's conv5 plays this
    role in the lecture, with 14 x 14 = 196 locations). The map is also
    flattened and passed through a dense ReLU layer: that is the analogue of
    `fc7(I)`, one vector for the whole image that no longer says where things
    are. With `vector_dim=0` there is no dense layer and the vector is the
    average of the locations (global average pooling), which is all an
    attentional decoder needs for its `s_0`.

    Pixels are scaled from `[0, 255]` to `[0, 1]` inside the layer.

    Args:
        filters: channels of each block, e.g. `(32, 64, 128)`.
        vector_dim: size of the fc7-like vector; 0 for the average of the map.
        convs_per_block: convolutions before each pooling.
        dropout: dropout rate on the vector during training.

    Call arguments:
        images: `(batch, size, size, 3)` pixels in `[0, 255]` (any float or int dtype).
        training: Python boolean.

    Returns:
        A tuple `(locations, vector)`: `(batch, H * W, C)` and `(batch, vector_dim)`
        (`(batch, C)` when `vector_dim=0`).
    """

    def __init__(self, filters=(16, 32, 64), vector_dim=256, convs_per_block=1, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        check_cnn_sizes(filters, vector_dim, convs_per_block)
        self.filters = tuple(int(f) for f in filters)
        self.vector_dim = int(vector_dim)
        self.convs_per_block = int(convs_per_block)
        self.dropout = float(dropout)
        self.convolutions = []
        for block, channels in enumerate(self.filters):
            for repeat in range(self.convs_per_block):
                self.convolutions.append(
                    keras.layers.Conv2D(channels, 3, padding="same", activation="relu", dtype=self.dtype_policy,
                                        name=f"block{block + 1}_conv{repeat + 1}")
                )
        self.pool = keras.layers.MaxPooling2D(2, dtype=self.dtype_policy, name="pool")
        self.fc = (
            keras.layers.Dense(self.vector_dim, activation="relu", dtype=self.dtype_policy, name="fc")
            if self.vector_dim
            else None
        )
        self.fc_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy, name="fc_dropout")
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def feature_grid(self, image_size):
        """`(H, W)` of the map for square images of side `image_size`."""
        side = int(image_size)
        for _ in self.filters:
            side //= 2
        if side < 1:
            raise ValueError(
                f"Images of side {image_size} are too small for {len(self.filters)} pooling blocks."
            )
        return side, side

    def _check(self, images_shape):
        if len(images_shape) != 4 or images_shape[-1] != 3:
            raise ValueError(
                f"`images` must have shape (batch, height, width, 3). Received: images.shape={images_shape}"
            )
        height, width = images_shape[1], images_shape[2]
        if height is not None and width is not None:
            self.feature_grid(min(height, width))

    def build(self, images_shape):
        self._check(images_shape)
        shape = tuple(images_shape)
        for index, convolution in enumerate(self.convolutions):
            convolution.build(shape)
            shape = convolution.compute_output_shape(shape)
            if index % self.convs_per_block == self.convs_per_block - 1:
                shape = self.pool.compute_output_shape(shape)
        batch, height, width, channels = shape
        flat = None if height is None or width is None else height * width * channels
        if flat is None:
            raise ValueError(f"`images` need a known height and width. Received: images.shape={images_shape}")
        if self.fc is not None:
            self.fc.build((batch, flat))

    def call(self, images, training=None):
        self._check(images.shape)
        features = ops.cast(images, self.compute_dtype) / 255.0  # (batch, size, size, 3)
        for index, convolution in enumerate(self.convolutions):
            features = convolution(features)
            if index % self.convs_per_block == self.convs_per_block - 1:
                features = self.pool(features)  # (batch, H, W, C) after the last block
        batch = ops.shape(features)[0]
        height, width, channels = features.shape[1], features.shape[2], features.shape[3]
        locations = ops.reshape(features, (batch, height * width, channels))  # (batch, H*W, C)
        if self.fc is None:
            vector = ops.mean(locations, axis=1)  # (batch, C)
        else:
            flat = ops.reshape(features, (batch, height * width * channels))  # (batch, H*W*C)
            vector = self.fc(flat)  # (batch, vector_dim)
        vector = self.fc_dropout(vector, training=training)
        return locations, vector

    def compute_output_shape(self, images_shape):
        # Height and width pool separately: (16, 32) images give a (2, 4) map with 3 blocks.
        height, width = (None if side is None else self.feature_grid(side)[0] for side in images_shape[1:3])
        locations = None if height is None or width is None else height * width
        vector_dim = self.vector_dim or self.filters[-1]
        return (images_shape[0], locations, self.filters[-1]), (images_shape[0], vector_dim)

    def get_config(self):
        config = super().get_config()
        config.update({"filters": list(self.filters), "vector_dim": self.vector_dim,
                       "convs_per_block": self.convs_per_block, "dropout": self.dropout})
        return config
