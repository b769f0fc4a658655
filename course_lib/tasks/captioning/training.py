"""Training a captioner end to end (teacher forcing, `fit`)."""

import time
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.data.captions import caption_arrays, caption_vocabulary
from course_lib.tasks.captioning.config import DECODER_CHOICES, settings_for
from course_lib.tasks.captioning.data import (
    load_flickr_parts, load_shapes_parts, model_inputs, received_files, resolve_encoder,
)
from course_lib.tasks.captioning.model import CaptioningRun, build_captioner


def _expand(inputs, image_index):
    return {key: value[image_index] for key, value in inputs.items()}


def train_captioning(dataset="shapes", decoder="attention", encoder="small", profile=None, epochs=None,
                     images=None, captions=None, cache_dir=None, weights="imagenet", seed=0, verbose=2, parts=None,
                     **overrides):
    """Trains a captioner end to end (teacher forcing, `fit`) and returns a `CaptioningRun`.

    Args:
        dataset: "shapes" (generated, offline) or "flickr8k" (needs `images`
            and `captions`).
        decoder: "attention", "option1" or "option2".
        encoder: "small", "vgg16" or "mobilenet" (falls back to "small" when
            the ImageNet weights cannot be downloaded).
        profile: "fast" or "full" (default: `COURSE_PROFILE`).
        epochs: overrides the profile's number of epochs.
        images, captions: Flickr8k's image folder and captions file.
        cache_dir: where frozen-backbone features are cached.
        weights: the backbone weights ("imagenet", a file, or None for random).
        seed: data and initialisation seed.
        verbose: Keras `fit` verbosity (0, 1 or 2).
        parts: already loaded shapes parts (`load_shapes_parts(settings)`), to
            train several models on the same data without generating it again.
        **overrides: any entry of `SETTINGS` (units, batch_size, train, limit...).
    """
    import keras

    from course_lib.training.fit import fit_arrays

    if decoder not in DECODER_CHOICES:
        raise ValueError(f"`decoder` must be one of {DECODER_CHOICES}. Received: decoder={decoder!r}")
    if dataset == "flickr8k" and (images is None or captions is None):
        raise ValueError(
            f"Flickr8k training needs both --images and --captions. Received: {received_files(images, captions)}"
        )
    settings = settings_for(dataset, profile, epochs=epochs, **overrides)
    settings.update({"decoder": decoder, "encoder": encoder, "seed": seed, "weights": weights,
                     "cache_dir": str(cache_dir or Path.home() / ".cache" / "course_lib" / "features")})
    if decoder != "attention":  # the plain decoders read s_t alone: no deep output to switch on
        # Refused here, before any data is made (ImageCaptioner would refuse it only after); the profiles' True
        # becomes False, so run.json says what the model has and build_captioner passes it as it stands.
        if overrides.get("deep_output"):
            raise ValueError(f"The deep output layer belongs to the attentional decoder. "
                             f"Received: deep_output=True, decoder={decoder!r}")
        if overrides.get("location_coordinates"):  # options 1 and 2 read fc7(I), which has no locations
            raise ValueError(f"Location coordinates are read by the attentional decoder only. "
                             f"Received: location_coordinates=True, decoder={decoder!r}")
        settings["deep_output"] = False
    if images is not None:  # absolute, so the run can be evaluated from any folder
        settings["images"], settings["captions"] = str(Path(images).resolve()), str(Path(captions).resolve())
    keras.utils.set_random_seed(seed)
    backbone = resolve_encoder(settings)

    if dataset == "shapes":
        parts = parts if parts is not None else load_shapes_parts(settings)
        train_captions = parts["train"].captions
        vocabulary = caption_vocabulary(train_captions)
        settings["max_length"] = max(len(c.split()) for c in train_captions) + 1
        pair_index = {name: np.arange(len(part)) for name, part in parts.items()}
        pair_captions = {name: part.captions for name, part in parts.items()}
    else:
        parts = load_flickr_parts(settings, settings["image_size"] if settings["encoder"] == "small" else 224)
        vocabulary = caption_vocabulary(
            [c for refs in parts["train"].captions for c in refs], min_count=settings["min_count"]
        )
        settings["max_length"] = settings["max_words"] + 1
        pair_index, pair_captions = {}, {}
        for name, part in parts.items():
            pairs = part.pairs()
            pair_index[name] = np.asarray([i for i, _ in pairs], "int64")
            pair_captions[name] = [c for _, c in pairs]
    inputs = {name: model_inputs(settings, name, part, backbone) for name, part in parts.items()}
    feature_shapes = None
    if settings["encoder"] != "small":
        feature_shapes = (inputs["train"]["locations"].shape[1], inputs["train"]["locations"].shape[2],
                          inputs["train"]["vector"].shape[1])
    settings["vocab_size"] = len(vocabulary)

    model = build_captioner(settings, vocabulary, feature_shapes)
    model.compile(keras.optimizers.Adam(settings["learning_rate"], clipnorm=5.0), steps_per_execution=10,
                  jit_compile=training_jit_compile())
    target_in, target_out = caption_arrays(vocabulary, pair_captions["train"], max_length=settings["max_length"])
    valid_in, valid_out = caption_arrays(vocabulary, pair_captions["valid"], max_length=settings["max_length"])
    train_x = {**_expand(inputs["train"], pair_index["train"]), "target_in": target_in}
    valid_x = {**_expand(inputs["valid"], pair_index["valid"]), "target_in": valid_in}
    start = time.perf_counter()
    history = fit_arrays(model, train_x, target_out, batch_size=settings["batch_size"], epochs=settings["epochs"],
                         validation_data=(valid_x, valid_out), seed=seed, verbose=verbose)
    seconds = time.perf_counter() - start
    settings["train_seconds"] = round(seconds, 2)
    return CaptioningRun(model, vocabulary, settings, history.history, seconds, parts, inputs)
