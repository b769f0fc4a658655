"""A run folder (`model.keras`, `vocabulary.json`, `run.json`) saved and loaded, and the test part it is evaluated on."""

import json
from pathlib import Path

from course_lib.tasks.arguments import check_run_of
from course_lib.tasks.captioning.data import load_flickr_parts, load_shapes_parts, model_inputs, received_files
from course_lib.tasks.run_files import committing, finish_commit, load_saved_model
from course_lib.text.vocabulary import Vocabulary

RUN_FILE = "run.json"  # a trained run's settings and metrics, beside model.keras and vocabulary.json


def save_run(run, out_dir, metrics=None):
    """Writes `model.keras`, `vocabulary.json`, `run.json` (settings, history, metrics) as one commit.

    Written one by one over an earlier run, an interrupt left the new model
    beside the old run's vocabulary and settings, which `evaluate captioning`
    then scored without an error.
    """
    out_dir = Path(out_dir)
    record = {"settings": run.settings, "history": {k: [float(x) for x in v] for k, v in run.history.items()}}
    if metrics is not None:
        record["metrics"] = metrics
    with committing(out_dir) as staging:
        run.model.save(staging / "model.keras")
        run.vocabulary.save(staging / "vocabulary.json")
        (staging / RUN_FILE).write_text(json.dumps(record, indent=2, default=str))
    return out_dir


def load_run(model_dir, flag="--model"):
    """`(model, vocabulary, settings)` from a folder written by `save_run`.

    Another task's run (its `course_run.json` says so) is refused by name
    (`flag`: the option that gave the folder), before its files are looked for.
    """
    import course_lib.models.captioner  # noqa: F401  (registers the classes)

    model_dir = Path(model_dir)
    check_run_of(model_dir, "captioning", flag)
    finish_commit(model_dir)  # a save interrupted after its commit: its files, not the earlier run's
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
    model = load_saved_model(model_dir / "model.keras")
    vocabulary = Vocabulary.load(model_dir / "vocabulary.json")
    return model, vocabulary, settings


def evaluation_data(settings, images=None, captions=None):
    """The test part a saved run should be evaluated on."""
    settings = dict(settings)
    backbone = None
    if settings["encoder"] != "small":
        from course_lib.encoders.pretrained import load_backbone

        backbone = load_backbone(settings["encoder"], weights=settings.get("weights", "imagenet"))
    if images is not None or captions is not None:
        if images is None or captions is None:
            raise ValueError(
                f"Give both --images and --captions, or neither. Received: {received_files(images, captions)}"
            )
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
