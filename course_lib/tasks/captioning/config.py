"""The captioner's sizes and training budget per dataset and profile; the encoder and decoder choices."""

from course_lib.training.profiles import check_ranges, current_profile, with_overrides

SETTINGS = {
    "shapes": {
        "fast": {"train": 1500, "valid": 200, "test": 300, "epochs": 5, "batch_size": 64, "units": 96,
                 "embedding_dim": 32, "image_size": 48, "cnn_filters": [16, 32, 64], "learning_rate": 3e-3,
                 "deep_output": True, "location_coordinates": False},
        "full": {"train": 6000, "valid": 500, "test": 1000, "epochs": 15, "batch_size": 64, "units": 128,
                 "embedding_dim": 32, "image_size": 48, "cnn_filters": [16, 32, 64], "learning_rate": 2e-3,
                 "deep_output": True, "location_coordinates": False},
    },
    "flickr8k": {
        "fast": {"limit": 120, "epochs": 2, "batch_size": 32, "units": 128, "embedding_dim": 64, "image_size": 64,
                 "cnn_filters": [16, 32, 64], "learning_rate": 2e-3, "max_words": 20, "min_count": 2,
                 "deep_output": True, "location_coordinates": False},
        "full": {"limit": None, "epochs": 12, "batch_size": 64, "units": 256, "embedding_dim": 128, "image_size": 64,
                 "cnn_filters": [32, 64, 128], "learning_rate": 1e-3, "max_words": 20, "min_count": 3,
                 "deep_output": True, "location_coordinates": False},
    },
}
ENCODER_CHOICES = ("small", "vgg16", "mobilenet")
DECODER_CHOICES = ("attention", "option1", "option2")


def settings_for(dataset, profile=None, **overrides):
    """The profile's settings for "shapes" or "flickr8k", with `overrides` applied.

    None means "not given". A name the dataset's settings do not have, or a
    value out of range (`epochs=0`), raises ValueError.
    """
    if dataset not in SETTINGS:
        raise ValueError(f"Unknown dataset. Expected one of {sorted(SETTINGS)}. Received: {dataset!r}")
    settings = with_overrides(dict(SETTINGS[dataset][profile or current_profile()]), overrides, f"{dataset!r} captioning")
    check_ranges(settings, f"{dataset!r} captioning",
                 positive_integers=[name for name in ("epochs", "batch_size", "units", "embedding_dim", "image_size",
                                                      "train", "valid", "test", "limit", "max_words", "min_count")
                                    if name in settings],
                 positive=("learning_rate",))
    settings["dataset"] = dataset
    settings["profile"] = profile or current_profile()
    return settings
