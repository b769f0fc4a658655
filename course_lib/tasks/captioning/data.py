"""The data parts (generated shapes or Flickr8k), their references, and model inputs: images or backbone features."""

from pathlib import Path

import numpy as np

from course_lib.tasks.captioning.config import ENCODER_CHOICES


def load_shapes_parts(settings):
    from course_lib.data.shapes import load_shapes

    return load_shapes(settings["train"], settings["valid"], settings["test"], image_size=48,
                       seed=settings.get("seed", 0))


def received_files(images, captions):
    """`images=..., captions=...` for a message refusing one given without the other (None shown bare)."""
    return ", ".join(f"{name}={None if value is None else str(value)!r}"
                     for name, value in (("images", images), ("captions", captions)))


def load_flickr_parts(settings, image_size):
    from course_lib.data.flickr8k import load_flickr8k

    return load_flickr8k(settings["images"], settings["captions"], image_size=image_size,
                         seed=settings.get("seed", 0), limit=settings.get("limit"))


def references_of(part):
    """All reference captions of each image of a part (one for shapes)."""
    captions = part.captions
    return [list(c) if isinstance(c, list) else [c] for c in captions]


def _resize(images, size):
    from PIL import Image

    if images.shape[1] == size:
        return images
    return np.stack([np.asarray(Image.fromarray(image).resize((size, size), Image.Resampling.BILINEAR))
                     for image in images])


def backbone_features(backbone, name, images, key_parts, cache_dir, weights):
    """Features of `images` (uint8) through a frozen backbone, computed once and cached."""
    from course_lib.data.feature_cache import cached_features
    from course_lib.encoders.pretrained import backbone_info

    size = backbone_info(name)["image_size"]

    def compute(start, stop):
        outputs = backbone.predict(_resize(images[start:stop], size).astype("float32"), verbose=0)
        return {"locations": outputs["locations"], "vector": outputs["vector"]}

    return cached_features(cache_dir, name, [str(weights), size, key_parts], len(images), compute)


def model_inputs(run_settings, part_name, part, backbone=None):
    """The captioner's inputs for one part: `{"image"}` or cached `{"locations", "vector"}`."""
    if run_settings["encoder"] == "small":
        return {"image": part.images}
    if run_settings["dataset"] == "shapes":
        key = ["shapes", run_settings.get("seed", 0), run_settings[part_name], part_name]
    else:
        from course_lib.data.feature_cache import file_fingerprints

        folder = Path(run_settings["images"])
        key = ["flickr8k", file_fingerprints([folder / n for n in part.names])]
    return backbone_features(backbone, run_settings["encoder"], part.images, key,
                             run_settings["cache_dir"], run_settings.get("weights", "imagenet"))


def resolve_encoder(settings):
    """Loads the backbone the settings ask for, or falls back to "small" when offline."""
    from course_lib.encoders.pretrained import load_backbone

    if settings["encoder"] == "small":
        return None
    if settings["encoder"] not in ENCODER_CHOICES:
        raise ValueError(f"`encoder` must be one of {ENCODER_CHOICES}. Received: {settings['encoder']!r}")
    backbone = load_backbone(settings["encoder"], weights=settings.get("weights", "imagenet"), fallback=True)
    if backbone is None:
        print(f"Falling back to the small CNN encoder trained from scratch instead of {settings['encoder']}.")
        settings["requested_encoder"] = settings["encoder"]
        settings["encoder"] = "small"
    return backbone
