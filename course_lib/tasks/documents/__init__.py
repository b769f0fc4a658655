"""Document classification with hierarchical attention, and the same encoder over dialogs.

    course-lib train documents [--data DIR|CSV] [--encoder han|plain|flat] [--epochs N] --out DIR
    course-lib evaluate documents --model DIR [--data DIR|CSV] [--metrics-json PATH]
    course-lib classify --model DIR FILE...

Without `--data` the generated documents of `course_lib.data.documents` are
used (offline). A folder is read as the BBC News layout (`<class>/NNN.txt`),
a `.csv` file as `label,text` rows. Real data is split into train, valid and
test parts by a fixed seed (stratified); `evaluate` scores the test part of
the same split unless `--split all` is given.

A trained classifier lives in a folder:

    model.keras             the DocumentClassifier
    vocabulary.json         the pipeline's vocabulary
    document_pipeline.json  the pipeline's sentence and word limits
    training.json           data, seed, encoder, epochs, class names, model arguments, test metrics

The package, one job per module (each imports only from those above it):

- `data`: which kind of data, loading and splitting it (duplicates left out,
  versions of one article kept together), padding limits per kind;
- `model`: `build_classifier`, a compiled `DocumentClassifier`;
- `evaluation`: `evaluate_documents` (accuracy, macro-F1, confusion matrix,
  planted-sentence top-1), `explain_batches`, `classify_texts`;
- `runs`: saving and loading the folder above;
- `training`: `train_documents`;
- `dialogs`: `train_dialogs`, the hierarchical encoder as a dialog context
  encoder, and `dialog_metrics`;
- `cli`: the `train documents`, `evaluate documents` and `classify` commands.

Everything public is importable from here:
`from course_lib.tasks import documents as task; task.train_documents(...)`.
"""

from course_lib.tasks.documents.cli import register_cli
from course_lib.tasks.documents.data import (
    GENERATED, check_parts_not_empty, data_kind, default_limits, load_splits, without_duplicates,
)
from course_lib.tasks.documents.dialogs import TrainedDialogs, dialog_metrics, train_dialogs
from course_lib.tasks.documents.evaluation import classify_texts, evaluate_documents, explain_batches
from course_lib.tasks.documents.model import build_classifier
from course_lib.tasks.documents.runs import MODEL_FILE, SETTINGS_FILE, load_trained, save_trained
from course_lib.tasks.documents.training import TrainedDocuments, train_documents, trained_config

__all__ = [
    "GENERATED", "MODEL_FILE", "SETTINGS_FILE", "TrainedDialogs", "TrainedDocuments", "build_classifier",
    "check_parts_not_empty", "classify_texts", "data_kind", "default_limits", "dialog_metrics", "evaluate_documents",
    "explain_batches", "load_splits", "load_trained", "register_cli", "save_trained", "train_dialogs",
    "train_documents", "trained_config", "without_duplicates",
]
