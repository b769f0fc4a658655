"""The `train captioning`, `evaluate captioning` and `caption` commands (`--overlay`: attention over the image)."""

import argparse
import os
import sys
import warnings
from pathlib import Path

from course_lib.tasks.arguments import (
    IMAGE_SUFFIXES, check_draws_attention, check_file_outside_runs, claim_run_folder, earlier_run_note, output_file,
    output_folder, positive_int, random_seed, same_file,
)
from course_lib.tasks.captioning.config import DECODER_CHOICES, ENCODER_CHOICES
from course_lib.tasks.captioning.data import references_of
from course_lib.tasks.captioning.evaluation import evaluate_run, unknown_reference_share
from course_lib.tasks.captioning.model import generate_captions
from course_lib.tasks.captioning.runs import evaluation_data, load_run, save_run
from course_lib.tasks.captioning.training import train_captioning
from course_lib.tasks.run_files import write_json_file, write_output_file
from course_lib.text.coverage import UNLIKE_DATA_SHARE

CACHED_ENCODERS = tuple(name for name in ENCODER_CHOICES if name != "small")  # frozen backbones: --cache-dir


def _train_command(args):
    if args.cache_dir is not None and args.encoder not in CACHED_ENCODERS:
        # Refused, not ignored: only a frozen backbone's features are cached; the small CNN is trained.
        raise ValueError(
            f"--cache-dir holds the features of a frozen backbone (--encoder {' or '.join(CACHED_ENCODERS)}); the "
            f"{args.encoder} encoder is trained with the captioner, so nothing would be cached. Leave out --cache-dir "
            f"or choose a backbone. Received: --cache-dir {args.cache_dir!r} --encoder {args.encoder}"
        )
    claim_run_folder(args.out, "captioning")
    replaced = earlier_run_note(args.out, "captioning")
    if replaced:  # said before the training starts, not only after it
        print(replaced, flush=True)
    dataset = "flickr8k" if args.images or args.captions else "shapes"
    overrides = {"deep_output": args.deep_output, "location_coordinates": args.location_coordinates,
                 "units": args.units, "batch_size": args.batch_size, "limit": args.limit, "train": args.train_size}
    run = train_captioning(dataset, args.decoder, args.encoder, profile=args.profile, epochs=args.epochs,
                           images=args.images, captions=args.captions, cache_dir=args.cache_dir,
                           seed=args.seed, verbose=2, **overrides)
    metrics, captions, _ = evaluate_run(run.model, run.vocabulary, run.data["test"], run.inputs["test"], dataset)
    save_run(run, args.out, metrics)
    print(f"Trained {run.settings['decoder']} captioner ({run.settings['encoder']} encoder) on {dataset} "
          f"in {run.train_seconds:.1f} s; test: " + ", ".join(f"{k}={v:.3f}" for k, v in metrics.items()
                                                              if isinstance(v, float)))
    for caption, refs in list(zip(captions, references_of(run.data["test"])))[:3]:
        print(f"  {caption!r}  (reference: {refs[0]!r})")
    print(f"Saved to {args.out}")
    return 0


def _evaluate_command(args):
    if args.metrics_json:
        check_file_outside_runs(args.metrics_json, "--metrics-json", args.model)
    model, vocabulary, settings = load_run(args.model)
    part, inputs, dataset = evaluation_data(settings, args.images, args.captions)
    # Its own test part (no --images/--captions, or the files it was trained on) is what it is scored on: no
    # warning there, where a small run's vocabulary may miss a fifth of the words (fast profile, Flickr8k subset).
    own_data = args.captions is None or (settings["dataset"] == "flickr8k"
                                         and same_file(settings["captions"], args.captions))
    unknown = unknown_reference_share(vocabulary, references_of(part))
    if not own_data and unknown > UNLIKE_DATA_SHARE:
        trained_on = "the generated shapes" if settings["dataset"] == "shapes" else repr(settings["captions"])
        warnings.warn(f"{unknown:.1%} of the reference captions' words are not in the model's vocabulary (it was "
                      f"trained on {trained_on}): the figures measure it on data unlike its training data.")
    metrics, _, _ = evaluate_run(model, vocabulary, part, inputs, dataset, beam_width=args.beam_width)
    for key, value in metrics.items():
        print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")
    if args.metrics_json:
        write_json_file(args.metrics_json, metrics, indent=2)
    return 0


def caption_files(model, vocabulary, settings, paths, beam_width=1, skipped=None):
    """Captions image files; returns `(kept names, captions, shown images, alignments)`.

    An image that cannot be read is left out with one line on standard error
    (its name and why); `skipped`, a list when given, receives `(name, reason)`
    for each. None readable is an error.
    """
    from course_lib.data.flickr8k import load_images

    size = settings["image_size"] if settings["encoder"] == "small" else 224
    names = [str(p) for p in paths]
    kept, images, left_out = load_images(Path("/"), [str(Path(p).resolve()) for p in names], size, verbose=False)
    by_path = {str(Path(name).resolve()): name for name in names}  # the names as given, for the messages
    kept = [by_path.get(name, name) for name in kept]
    left_out = [(by_path.get(name, name), reason) for name, reason in left_out]
    if skipped is not None:
        skipped.extend(left_out)
    if not kept:
        raise ValueError("None of the images could be read: "
                         + "; ".join(f"{name!r} ({reason})" for name, reason in left_out))
    for name, reason in left_out:
        print(f"course-lib: skipped {name!r}: not a readable image ({reason})", file=sys.stderr)
    if settings["encoder"] == "small":
        inputs = {"image": images}
    else:
        from course_lib.encoders.pretrained import load_backbone

        backbone = load_backbone(settings["encoder"], weights=settings.get("weights", "imagenet"))
        outputs = backbone.predict(images.astype("float32"), verbose=0)
        inputs = {"locations": outputs["locations"], "vector": outputs["vector"]}
    captions, _, alignments = generate_captions(model, vocabulary, inputs, beam_width)
    return kept, captions, images, alignments


def _check_images_exist(names):
    """Refuses image paths that are not there (or are folders) before the model is loaded.

    A missing image used to be skipped with a UserWarning, and the command exited 0.
    """
    missing = [name for name in names if not os.path.exists(name)]
    if missing:
        raise FileNotFoundError(f"No such image file{'s' if len(missing) > 1 else ''}: "
                                + ", ".join(repr(str(name)) for name in missing))
    folders = [name for name in names if os.path.isdir(name)]
    if folders:
        raise IsADirectoryError("Expected image files, received folder"
                                f"{'s' if len(folders) > 1 else ''}: " + ", ".join(repr(str(name)) for name in folders))


def _overlay_paths(overlay, count):
    """Where `--overlay` puts the overlays of `count` captioned images: the name itself for one, else NAME_i."""
    overlay = Path(overlay)
    return [overlay] if count == 1 else [overlay.with_name(f"{overlay.stem}_{i}{overlay.suffix}") for i in range(count)]


def _caption_command(args):
    if args.overlay:  # before the model is loaded: another run's files are never replaced
        check_file_outside_runs(args.overlay, "--overlay", args.model)
        # Every name it may write, before any work: a folder in the way used to stop the command half-way.
        for path in {*_overlay_paths(args.overlay, 1), *_overlay_paths(args.overlay, len(args.images))}:
            if path.is_dir():
                raise ValueError(f"--overlay would write {str(path)!r}, which is a folder. "
                                 f"Received: --overlay {str(args.overlay)!r}")
    _check_images_exist(args.images)
    model, vocabulary, settings = load_run(args.model)
    if args.overlay:  # before anything is captioned (a plain decoder's overlay used to be skipped, exit 0)
        check_draws_attention(model.decoder.has_attention,
                              f"{str(args.model)!r} holds a captioner with the plain {settings['decoder']} decoder",
                              "leave out --overlay", f"--overlay {str(args.overlay)!r}")
    skipped = []
    kept, captions, images, alignments = caption_files(model, vocabulary, settings, args.images, args.beam_width,
                                                       skipped)
    for name, caption in zip(kept, captions):
        print(f"{name}: {caption}")
    if args.overlay:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from course_lib.plots.captioning import attention_overlay_grid

        for index, (path, name, caption) in enumerate(zip(_overlay_paths(args.overlay, len(kept)), kept, captions)):
            words = caption.split()
            if len(words) < len(alignments[index]):
                words.append("<stop>")  # the step that chose to stop looked somewhere too
            figure = attention_overlay_grid(images[index], words, alignments[index], model.grid, title=caption)
            write_output_file(path, lambda temporary: figure.savefig(temporary, dpi=100))
            plt.close(figure)
            print(f"Attention overlay of {Path(name).name} saved to {path}")
    if skipped:  # the readable images were captioned; the command still failed for the others
        print(f"course-lib: error: {len(skipped)} of {len(args.images)} images could not be read "
              f"(listed above)", file=sys.stderr)
        return 1
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
    train.add_argument("--location-coordinates", action=argparse.BooleanOptionalAction, default=None,
                       help="attention: each location the decoder reads also holds its row and column")
    train.add_argument("--batch-size", type=positive_int)
    train.add_argument("--limit", type=positive_int, help="use only the first N images (Flickr8k)")
    train.add_argument("--train-size", type=positive_int, help="number of generated training images (shapes)")
    train.add_argument("--profile", choices=("fast", "full"))
    train.add_argument("--cache-dir", type=output_folder,
                       help="where frozen-backbone features are cached (--encoder vgg16 or mobilenet only)")
    train.add_argument("--seed", type=random_seed, default=0)
    train.add_argument("--out", required=True, type=output_folder, help="folder for model.keras, vocabulary.json, run.json")
    train.set_defaults(handler=_train_command)

    evaluate = commands.evaluate.add_parser("captioning", help="BLEU-1..4 (and exact match, attention on object)")
    evaluate.add_argument("--model", required=True, help="a folder written by `train captioning`")
    evaluate.add_argument("--images")
    evaluate.add_argument("--captions")
    evaluate.add_argument("--beam-width", type=positive_int, default=1)
    evaluate.add_argument("--metrics-json", type=output_file(".json"),
                          help="write the metrics to this .json file (not inside a run folder; an existing file "
                               "is replaced, and the command says so)")
    evaluate.set_defaults(handler=_evaluate_command)

    caption = commands.root.add_parser("caption", help="caption image files with a trained captioner")
    caption.add_argument("--model", required=True)
    caption.add_argument("images", nargs="+", metavar="IMAGE")
    caption.add_argument("--beam-width", type=positive_int, default=1)
    caption.add_argument("--overlay", type=output_file(*IMAGE_SUFFIXES),
                         help="save each word's attention over the image to this PNG (or PDF, SVG, JPEG; with several "
                              "images, NAME_0.png, NAME_1.png...; not inside a run folder; an existing file is "
                              "replaced, and the command says so)")
    caption.set_defaults(handler=_caption_command)
