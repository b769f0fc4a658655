"""Image captioning: options 1 and 2 (fc7 as `s_0` / at every step) and attention over locations.

Wires the data (`course_lib.data.shapes` by default, or a Flickr8k-style
folder), the encoders (`small` CNN trained from scratch, or a frozen `vgg16` /
`mobilenet` whose features are cached on disk), the `ImageCaptioner` and the
captioning metrics. Notebooks and the CLI both call the functions here:

    course-lib train captioning --decoder attention --out runs/caption
    course-lib evaluate captioning --model runs/caption --metrics-json m.json
    course-lib caption --model runs/caption photo.jpg --overlay where.png
"""

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.data.captions import caption_arrays, caption_vocabulary, tokenize_caption
from course_lib.tasks.arguments import (
    IMAGE_SUFFIXES, check_file_outside_runs, claim_run_folder, earlier_run_note, output_file, output_folder,
    positive_int, random_seed,
)
from course_lib.text.vocabulary import SPECIAL_TOKENS, UNK, Vocabulary
from course_lib.training.profiles import check_ranges, current_profile, with_overrides

SETTINGS = {
    "shapes": {
        "fast": {"train": 1500, "valid": 200, "test": 300, "epochs": 5, "batch_size": 64, "units": 96,
                 "embedding_dim": 32, "image_size": 48, "cnn_filters": [16, 32, 64], "learning_rate": 3e-3,
                 "deep_output": True},
        "full": {"train": 6000, "valid": 500, "test": 1000, "epochs": 15, "batch_size": 64, "units": 128,
                 "embedding_dim": 32, "image_size": 48, "cnn_filters": [16, 32, 64], "learning_rate": 2e-3,
                 "deep_output": True},
    },
    "flickr8k": {
        "fast": {"limit": 120, "epochs": 2, "batch_size": 32, "units": 128, "embedding_dim": 64, "image_size": 64,
                 "cnn_filters": [16, 32, 64], "learning_rate": 2e-3, "max_words": 20, "min_count": 2,
                 "deep_output": True},
        "full": {"limit": None, "epochs": 12, "batch_size": 64, "units": 256, "embedding_dim": 128, "image_size": 64,
                 "cnn_filters": [32, 64, 128], "learning_rate": 1e-3, "max_words": 20, "min_count": 3,
                 "deep_output": True},
    },
}
RUN_FILE = "run.json"  # a trained run's settings and metrics, beside model.keras and vocabulary.json
ENCODER_CHOICES = ("small", "vgg16", "mobilenet")
DECODER_CHOICES = ("attention", "option1", "option2")


@dataclass
class CaptioningRun:
    """A trained captioner with everything needed to use and evaluate it.

    Attributes:
        model: the `ImageCaptioner`.
        vocabulary: its word `Vocabulary` (`data.captions.caption_vocabulary`).
        settings: dataset, encoder, decoder, sizes and seeds (saved as `run.json`).
        history: Keras history dict (loss, token_accuracy, val_...).
        train_seconds: wall time of `fit`.
        data: the parts the run used (`ShapesSplit` or `CaptionedImages`).
        inputs: the model inputs of each part (images or cached features).
    """

    model: object
    vocabulary: Vocabulary
    settings: dict
    history: dict = field(default_factory=dict)
    train_seconds: float = 0.0
    data: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)

    @property
    def grid(self):
        return tuple(self.model.grid)


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


# -- data ------------------------------------------------------------------------


def load_shapes_parts(settings):
    from course_lib.data.shapes import load_shapes

    return load_shapes(settings["train"], settings["valid"], settings["test"], image_size=48,
                       seed=settings.get("seed", 0))


def load_flickr_parts(settings, image_size):
    from course_lib.data.flickr8k import load_flickr8k

    return load_flickr8k(settings["images"], settings["captions"], image_size=image_size,
                         seed=settings.get("seed", 0), limit=settings.get("limit"))


def references_of(part):
    """All reference captions of each image of a part (one for shapes)."""
    captions = part.captions
    return [list(c) if isinstance(c, list) else [c] for c in captions]


# -- encoders and features ----------------------------------------------------------


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


def build_captioner(settings, vocabulary, feature_shapes=None):
    from course_lib.models.captioner import ImageCaptioner

    common = dict(
        decoder=settings["decoder"], embedding_dim=settings["embedding_dim"], units=settings["units"],
        max_output_length=settings["max_length"], deep_output=settings.get("deep_output", False),
    )
    if settings["encoder"] == "small":
        return ImageCaptioner(len(vocabulary), encoder="small", image_size=settings["image_size"],
                              cnn_filters=settings["cnn_filters"], **common)
    locations, channels, vector_dim = feature_shapes
    return ImageCaptioner(len(vocabulary), encoder="features", feature_locations=locations,
                          feature_channels=channels, feature_vector_dim=vector_dim, **common)


# -- training ----------------------------------------------------------------------


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
        cache_dir: where frozen-backbone features are cached.
        weights: the backbone weights ("imagenet", a file, or None for random).
        seed: data and initialisation seed.
        parts: already loaded shapes parts (`load_shapes_parts(settings)`), to
            train several models on the same data without generating it again.
        **overrides: any entry of `SETTINGS` (units, batch_size, train, limit...).
    """
    import keras

    from course_lib.training.fit import fit_arrays

    if decoder not in DECODER_CHOICES:
        raise ValueError(f"`decoder` must be one of {DECODER_CHOICES}. Received: decoder={decoder!r}")
    if dataset == "flickr8k" and (images is None or captions is None):
        raise ValueError("Flickr8k training needs both --images and --captions.")
    settings = settings_for(dataset, profile, epochs=epochs, **overrides)
    settings.update({"decoder": decoder, "encoder": encoder, "seed": seed, "weights": weights,
                     "cache_dir": str(cache_dir or Path.home() / ".cache" / "course_lib" / "features")})
    if decoder != "attention":  # the plain decoders read s_t alone: no deep output to switch on
        if overrides.get("deep_output"):
            raise ValueError(f"The deep output layer belongs to the attentional decoder. "
                             f"Received: deep_output=True, decoder={decoder!r}")
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


# -- captioning and metrics ------------------------------------------------------------


def generate_captions(model, vocabulary, inputs, beam_width=1, max_length=None):
    """Captions (strings), their word lists and the attention behind each word.

    Returns:
        `(captions, words, alignments)`: N strings, N word lists and
        `(N, steps, L)` weights (row t of image n produced words[n][t]).
    """
    outputs = model.generate(inputs, max_length=max_length, beam_width=beam_width)
    captions = [vocabulary.decode(row) for row in outputs["tokens"]]
    return captions, [c.split() for c in captions], outputs["alignments"]


# What a generated `<unk>` becomes before BLEU. sacrebleu's 13a tokeniser would split
# "<unk>" into the three tokens "< unk >": a longer hypothesis, and an "unk" that
# could even match a reference word. Dropping it would hide the miss and shorten
# the caption. One upper-case word is one token that never matches a reference,
# whose words are lower-cased by `tokenize_caption`: `<unk>` counts as one wrong word.
UNK_FOR_BLEU = "UNK"


def bleu_hypothesis(caption):
    """A generated caption as BLEU sees it: its words, each `<unk>` as the single word `UNK_FOR_BLEU`."""
    return " ".join(UNK_FOR_BLEU if word == SPECIAL_TOKENS[UNK] else word for word in caption.split())


def bleu_reference(caption):
    """A reference caption cleaned the way training captions are (`tokenize_caption`): lower-case, no punctuation.

    >>> bleu_reference("A dog runs, in the park .")
    'a dog runs in the park'
    """
    return " ".join(tokenize_caption(caption))


def score_captions(captions, references, max_order=4):
    """Corpus BLEU-1..`max_order` (0-100) of generated captions against all references of each image.

    The model writes lower-case words without punctuation, so the references
    (e.g. Flickr8k's "A dog runs .") are cleaned the same way first
    (`bleu_reference`); sacrebleu is case-sensitive and would otherwise never
    match "a" with "A". A generated `<unk>` counts as one wrong word
    (`bleu_hypothesis`). The score itself is `metrics.captioning.caption_bleu`.
    """
    from course_lib.metrics.captioning import caption_bleu, caption_list

    hypotheses = [bleu_hypothesis(c) for c in caption_list(captions, "captions")]
    cleaned = [[bleu_reference(r) for r in caption_list(refs, "references")] for refs in references]
    return caption_bleu(hypotheses, cleaned, max_order=max_order)


def evaluate_run(model, vocabulary, part, inputs, dataset, beam_width=1):
    """Metrics of a model on one part.

    Returns:
        `(metrics, captions, alignments)`; metrics hold `bleu1`..`bleu4` (0-100,
        `score_captions`: references cleaned like the training captions),
        `distinct_captions` and, on the shapes data, `exact_match` and
        `attention_on_object` (with its colour/shape split, and
        `attention_on_object_chance`, the rate of a look at a random location).
    """
    from course_lib.metrics.captioning import attention_on_object, distinct_caption_rate, exact_caption_match

    captions, _, alignments = generate_captions(model, vocabulary, inputs, beam_width)
    metrics = score_captions(captions, references_of(part))
    metrics["distinct_captions"] = distinct_caption_rate(captions)
    metrics["images"] = len(captions)
    if dataset == "shapes":
        from course_lib.data.shapes import COLOUR_NAMES, SHAPES, object_location_masks

        metrics["exact_match"] = exact_caption_match(captions, part.captions)
        if model.decoder.has_attention:  # options 1 and 2 look at no location
            height, width = model.grid
            masks = object_location_masks(part.boxes, part.image_size, height, width)
            on_object = attention_on_object(captions, alignments, part.colours, part.shapes, masks,
                                            COLOUR_NAMES, SHAPES)
            metrics["attention_on_object"] = on_object["rate"]
            metrics["attention_on_object_colour"] = on_object["colour_rate"]
            metrics["attention_on_object_shape"] = on_object["shape_rate"]
            metrics["attention_on_object_chance"] = on_object["chance"]
    return metrics, captions, alignments


# -- saving -------------------------------------------------------------------------


def save_run(run, out_dir, metrics=None):
    """Writes `model.keras`, `vocabulary.json`, `run.json` (settings, history, metrics)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    run.model.save(out_dir / "model.keras")
    run.vocabulary.save(out_dir / "vocabulary.json")
    record = {"settings": run.settings, "history": {k: [float(x) for x in v] for k, v in run.history.items()}}
    if metrics is not None:
        record["metrics"] = metrics
    (out_dir / RUN_FILE).write_text(json.dumps(record, indent=2, default=str))
    return out_dir


def load_run(model_dir):
    """`(model, vocabulary, settings)` from a folder written by `save_run`."""
    import keras

    import course_lib.models.captioner  # noqa: F401  (registers the classes)

    model_dir = Path(model_dir)
    for name in ("model.keras", "vocabulary.json", RUN_FILE):
        if not (model_dir / name).is_file():
            raise FileNotFoundError(f"{model_dir} is not a captioning run folder: {name} is missing")
    try:
        settings = json.loads((model_dir / RUN_FILE).read_text())["settings"]
        if not {"decoder", "encoder"} <= set(settings):  # what `evaluate` and `caption` read first
            raise KeyError("decoder, encoder")
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{str(model_dir)!r} is not a usable captioning run: its {RUN_FILE} is damaged "
            f"({type(error).__name__}: {error}). Train it again with `course-lib train captioning --out DIR`."
        ) from None
    model = keras.models.load_model(model_dir / "model.keras")
    vocabulary = Vocabulary.load(model_dir / "vocabulary.json")
    return model, vocabulary, settings


def _evaluation_data(settings, images=None, captions=None):
    """The test part a saved run should be evaluated on."""
    settings = dict(settings)
    backbone = None
    if settings["encoder"] != "small":
        from course_lib.encoders.pretrained import load_backbone

        backbone = load_backbone(settings["encoder"], weights=settings.get("weights", "imagenet"))
    if images is not None or captions is not None:
        if images is None or captions is None:
            raise ValueError("Give both --images and --captions, or neither.")
        settings.update({"dataset": "flickr8k", "images": str(images), "captions": str(captions)})
    elif settings["dataset"] == "flickr8k" and not (Path(settings["images"]).is_dir()
                                                    and Path(settings["captions"]).is_file()):
        raise FileNotFoundError(
            f"This run was trained on images in {settings['images']!r} with captions {settings['captions']!r} "
            "(its run.json), and they are not there from this folder. Pass --images and --captions."
        )
    if settings["dataset"] == "shapes":
        part = load_shapes_parts(settings)["test"]
    else:
        size = settings["image_size"] if settings["encoder"] == "small" else 224
        part = load_flickr_parts(settings, size)["test"]
        if len(part) == 0:
            raise ValueError(f"The test part of {settings['images']} holds no readable image.")
    return part, model_inputs(settings, "test", part, backbone), settings["dataset"]


# -- command line ----------------------------------------------------------------------


def _train_command(args):
    claim_run_folder(args.out, "captioning", RUN_FILE)
    dataset = "flickr8k" if args.images or args.captions else "shapes"
    overrides = {"deep_output": args.deep_output, "units": args.units, "batch_size": args.batch_size, "limit": args.limit, "train": args.train_size}
    run = train_captioning(dataset, args.decoder, args.encoder, profile=args.profile, epochs=args.epochs,
                           images=args.images, captions=args.captions, cache_dir=args.cache_dir,
                           seed=args.seed, verbose=2, **overrides)
    metrics, captions, _ = evaluate_run(run.model, run.vocabulary, run.data["test"], run.inputs["test"], dataset)
    replaced = earlier_run_note(args.out, "captioning", RUN_FILE)
    save_run(run, args.out, metrics)
    print(f"Trained {run.settings['decoder']} captioner ({run.settings['encoder']} encoder) on {dataset} "
          f"in {run.train_seconds:.1f} s; test: " + ", ".join(f"{k}={v:.3f}" for k, v in metrics.items()
                                                              if isinstance(v, float)))
    for caption, refs in list(zip(captions, references_of(run.data["test"])))[:3]:
        print(f"  {caption!r}  (reference: {refs[0]!r})")
    print(f"Saved to {args.out}")
    if replaced:
        print(replaced)
    return 0


def _evaluate_command(args):
    if args.metrics_json:
        check_file_outside_runs(args.metrics_json, "--metrics-json", args.model)
    model, vocabulary, settings = load_run(args.model)
    part, inputs, dataset = _evaluation_data(settings, args.images, args.captions)
    metrics, _, _ = evaluate_run(model, vocabulary, part, inputs, dataset, beam_width=args.beam_width)
    for key, value in metrics.items():
        print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")
    if args.metrics_json:
        Path(args.metrics_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics_json).write_text(json.dumps(metrics, indent=2))
    return 0


def caption_files(model, vocabulary, settings, paths, beam_width=1):
    """Captions image files; returns `(captions, shown images, alignments)`."""
    from course_lib.data.flickr8k import load_images

    size = settings["image_size"] if settings["encoder"] == "small" else 224
    names = [str(p) for p in paths]
    kept, images, skipped = load_images(Path("/"), [str(Path(p).resolve()) for p in names], size, verbose=True)
    if not kept:
        raise ValueError(f"None of the images could be read: {[reason for _, reason in skipped]}")
    if settings["encoder"] == "small":
        inputs = {"image": images}
    else:
        from course_lib.encoders.pretrained import load_backbone

        backbone = load_backbone(settings["encoder"], weights=settings.get("weights", "imagenet"))
        outputs = backbone.predict(images.astype("float32"), verbose=0)
        inputs = {"locations": outputs["locations"], "vector": outputs["vector"]}
    captions, _, alignments = generate_captions(model, vocabulary, inputs, beam_width)
    return kept, captions, images, alignments


def _caption_command(args):
    model, vocabulary, settings = load_run(args.model)
    kept, captions, images, alignments = caption_files(model, vocabulary, settings, args.images, args.beam_width)
    for name, caption in zip(kept, captions):
        print(f"{name}: {caption}")
    if args.overlay:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from course_lib.plots.captioning import attention_overlay_grid

        if not model.decoder.has_attention:
            print(f"The {settings['decoder']} decoder has no attention; no overlay written.")
            return 0
        overlay = Path(args.overlay)
        overlay.parent.mkdir(parents=True, exist_ok=True)
        for index, (name, caption) in enumerate(zip(kept, captions)):
            path = overlay if len(kept) == 1 else overlay.with_name(f"{overlay.stem}_{index}{overlay.suffix}")
            words = caption.split()
            if len(words) < len(alignments[index]):
                words.append("<stop>")  # the step that chose to stop looked somewhere too
            figure = attention_overlay_grid(images[index], words, alignments[index], model.grid, title=caption)
            figure.savefig(path, dpi=100)
            plt.close(figure)
            print(f"Attention overlay of {Path(name).name} saved to {path}")
    return 0


def register_cli(commands):
    train = commands.train.add_parser(
        "captioning", help="train an image captioner (options 1, 2 or attention; generated shapes or Flickr8k)"
    )
    train.add_argument("--images", help="Flickr8k-style image folder (default: generated shapes data)")
    train.add_argument("--captions", help="captions.txt (image,caption) or Flickr8k.token.txt")
    train.add_argument("--encoder", choices=ENCODER_CHOICES, default="small")
    train.add_argument("--decoder", choices=DECODER_CHOICES, default="attention")
    train.add_argument("--epochs", type=positive_int)
    train.add_argument("--units", type=positive_int)
    train.add_argument("--deep-output", action=argparse.BooleanOptionalAction, default=None,
                       help="attention: the output layer reads [s_t; c_t; e(y_{t-1})]")
    train.add_argument("--batch-size", type=positive_int)
    train.add_argument("--limit", type=positive_int, help="use only the first N images (Flickr8k)")
    train.add_argument("--train-size", type=positive_int, help="number of generated training images (shapes)")
    train.add_argument("--profile", choices=("fast", "full"))
    train.add_argument("--cache-dir", help="where frozen-backbone features are cached")
    train.add_argument("--seed", type=random_seed, default=0)
    train.add_argument("--out", required=True, type=output_folder, help="folder for model.keras, vocabulary.json, run.json")
    train.set_defaults(handler=_train_command)

    evaluate = commands.evaluate.add_parser("captioning", help="BLEU-1..4 (and exact match, attention on object)")
    evaluate.add_argument("--model", required=True, help="a folder written by `train captioning`")
    evaluate.add_argument("--images")
    evaluate.add_argument("--captions")
    evaluate.add_argument("--beam-width", type=positive_int, default=1)
    evaluate.add_argument("--metrics-json", type=output_file(), help="write the metrics to this JSON file")
    evaluate.set_defaults(handler=_evaluate_command)

    caption = commands.root.add_parser("caption", help="caption image files with a trained captioner")
    caption.add_argument("--model", required=True)
    caption.add_argument("images", nargs="+", metavar="IMAGE")
    caption.add_argument("--beam-width", type=positive_int, default=1)
    caption.add_argument("--overlay", type=output_file(*IMAGE_SUFFIXES),
                         help="save each word's attention over the image to this PNG (or PDF, SVG, JPEG)")
    caption.set_defaults(handler=_caption_command)
