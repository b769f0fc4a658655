"""Pretrained ImageNet backbones from `keras.applications`, frozen, as image encoders.

Each backbone gives the two representations the lecture uses:

* `vector`: one vector for the whole image. For VGG16 this is fc7, the
  4096-unit layer before the classifier (Keras calls it `fc2`).
* `locations`: a convolutional feature map flattened to `(H * W, C)`. For
  VGG16 at 224 x 224 this is the conv5 map (`block5_conv3`),
  14 x 14 x 512 = 196 locations of 512 numbers.

MobileNetV2 is the light choice for Colab: `block_13_expand_relu` gives
14 x 14 x 576 (again 196 locations), and the vector is the global average of
the last map (1280 numbers).

The weights are downloaded by Keras (`weights="imagenet"`) on first use and
cached in `~/.keras/models/`. Without a network connection the download fails;
`load_backbone(..., fallback=True)` then says so plainly and returns `None`,
and the caller trains the small CNN from scratch instead
(`make_image_encoder` does exactly that).
"""

import warnings

import keras

BACKBONES = {
    "vgg16": {
        "constructor": "VGG16",
        "module": "vgg16",
        "image_size": 224,
        "locations_layer": "block5_conv3",
        "vector_layer": "fc2",
        "include_top": True,
        "grid": (14, 14),
        "channels": 512,
        "vector_dim": 4096,
        "weights_file_megabytes": 528,
    },
    "mobilenet": {
        "constructor": "MobileNetV2",
        "module": "mobilenet_v2",
        "image_size": 224,
        "locations_layer": "block_13_expand_relu",
        "vector_layer": "out_relu",
        "include_top": False,
        "grid": (14, 14),
        "channels": 576,
        "vector_dim": 1280,
        "weights_file_megabytes": 14,
    },
}


class BackboneUnavailable(RuntimeError):
    """The ImageNet weights could not be obtained (usually: no network)."""


def backbone_info(name):
    """The facts about a backbone (`image_size`, `grid`, `channels`, `vector_dim`...)."""
    if name not in BACKBONES:
        raise ValueError(f"Unknown backbone. Expected one of {sorted(BACKBONES)}. Received: name={name!r}")
    return dict(BACKBONES[name])


def offline_message(name, error):
    info = BACKBONES[name]
    return (
        f"Could not load the ImageNet weights of {info['constructor']} "
        f"(about {info['weights_file_megabytes']} MB, downloaded by Keras into ~/.keras/models/ on first use): "
        f"{type(error).__name__}: {error}. This machine is probably offline. "
        "Either connect it once (or copy the weights file into ~/.keras/models/), "
        "or use the small CNN trained from scratch (`--encoder small`), which needs no download."
    )


def load_backbone(name, weights="imagenet", fallback=False):
    """A frozen `keras.Model` mapping preprocessed images to `{"locations", "vector"}`.

    Args:
        name: "vgg16" or "mobilenet".
        weights: "imagenet" (download), a path to a weights file, or None
            (random weights: shapes and wiring only, e.g. in tests).
        fallback: when the weights cannot be loaded, warn with a clear message
            and return None instead of raising `BackboneUnavailable`.

    Returns:
        The model (inputs: `(batch, 224, 224, 3)` pixels in `[0, 255]`;
        outputs: `locations (batch, H*W, C)` and `vector (batch, D)`), or None.
    """
    info = backbone_info(name)
    constructor = getattr(keras.applications, info["constructor"])
    size = info["image_size"]
    try:
        base = constructor(weights=weights, include_top=info["include_top"], input_shape=(size, size, 3))
    except Exception as error:  # Keras raises a bare Exception on URL failures
        message = offline_message(name, error)
        if fallback:
            warnings.warn(message, stacklevel=2)
            return None
        raise BackboneUnavailable(message) from error
    base.trainable = False
    preprocess = getattr(keras.applications, info["module"]).preprocess_input
    images = keras.Input((size, size, 3), name="images")
    features = keras.Model(
        base.inputs,
        [base.get_layer(info["locations_layer"]).output, base.get_layer(info["vector_layer"]).output],
        name=f"{name}_features",
    )
    conv_map, vector = features(keras.layers.Lambda(preprocess, name="preprocess")(images))
    height, width = info["grid"]
    locations = keras.layers.Reshape((height * width, info["channels"]), name="locations")(conv_map)
    if len(vector.shape) == 4:  # a map: average it into one vector
        vector = keras.layers.GlobalAveragePooling2D(name="vector")(vector)
    model = keras.Model(images, {"locations": locations, "vector": vector}, name=f"{name}_encoder")
    model.trainable = False
    return model


def make_image_encoder(kind, weights="imagenet", **small_kwargs):
    """The encoder a captioner should use for `kind`, falling back when offline.

    Args:
        kind: "small", "vgg16" or "mobilenet".
        weights: for the pretrained kinds, see `load_backbone`.
        **small_kwargs: arguments of `SmallCNNEncoder` (used for "small" and
            for the fallback).

    Returns:
        `(kind_used, encoder)`: `("small", SmallCNNEncoder)` or
        `(kind, frozen backbone model)`.
    """
    from course_lib.encoders.small_cnn import SmallCNNEncoder

    if kind != "small":
        backbone = load_backbone(kind, weights=weights, fallback=True)
        if backbone is not None:
            return kind, backbone
        warnings.warn(f"Falling back to the small CNN encoder trained from scratch instead of {kind}.", stacklevel=2)
    return "small", SmallCNNEncoder(**small_kwargs)
