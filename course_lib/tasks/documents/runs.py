"""A trained classifier's folder: saving and loading the model, its pipeline and its settings."""

import json
import os

from course_lib.tasks.arguments import check_run_of
from course_lib.tasks.run_files import committing, finish_commit, load_saved_model

MODEL_FILE = "model.keras"
SETTINGS_FILE = "training.json"


def save_trained(trained, out):
    """Writes `model.keras`, `vocabulary.json`, `document_pipeline.json`, `training.json` as one commit.

    Written one by one over an earlier run, an interrupt left a new model
    beside the old run's vocabulary and settings.
    """
    with committing(out) as staging:
        trained.model.save(staging / MODEL_FILE)
        trained.pipeline.save(staging)
        with open(staging / SETTINGS_FILE, "w", encoding="utf-8") as handle:
            json.dump({**trained.settings, "test_metrics": trained.metrics}, handle, indent=1)


def load_trained(directory, flag="--model"):
    """Returns `(model, pipeline, settings)` saved by `save_trained`.

    Another task's run (its `course_run.json` says so) is refused by name
    (`flag`: the option that gave the folder), before its files are looked for.
    """
    import course_lib.models.document_classifier  # noqa: F401  (registers the classes)
    from course_lib.text.documents import DocumentPipeline

    check_run_of(directory, "documents", flag)
    finish_commit(directory)  # a save interrupted after its commit: its files, not the earlier run's
    model_path = os.path.join(directory, MODEL_FILE)
    if not os.path.exists(model_path):
        raise FileNotFoundError(f"No trained document model in {str(directory)!r} ({MODEL_FILE} missing)")
    model = load_saved_model(model_path)
    pipeline = DocumentPipeline.load(directory)
    with open(os.path.join(directory, SETTINGS_FILE), encoding="utf-8") as handle:
        settings = json.load(handle)
    return model, pipeline, settings
