"""Dialogs: the hierarchical encoder as a context encoder, trained on generated dialogs and scored by response."""

import time
from dataclasses import dataclass

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.training.profiles import check_ranges, pick


@dataclass
class TrainedDialogs:
    """What `train_dialogs` returns: `metrics` on the test dialogs (the final report), `valid_metrics` on the
    validation dialogs (the ones to choose settings such as epochs or the learning rate by)."""

    model: object
    vocabulary: object
    splits: dict
    arrays: dict
    seconds: float
    metrics: dict
    valid_metrics: dict


def dialog_metrics(dialogs, predictions):
    """Exact match of whole responses, and of their two parts.

    `question_kind`: the response has the template of the question asked
    (e.g. "it came out in ..." for a year question); `film_fact`: the
    response contains the fact of the film named in the context.
    """
    from course_lib.data.dialogs import FILMS, QUESTIONS

    exact, kind_right, fact_right = [], [], []
    for prediction, response, film, kind in zip(predictions, dialogs.responses, dialogs.films, dialogs.questions):
        title, actor, director, year, place = FILMS[film]
        fact = {"actor": actor, "director": director, "year": year, "place": place}[kind]
        template = QUESTIONS[kind][1].split("{")[0].strip()
        exact.append(prediction == response)
        kind_right.append(prediction.startswith(template) if template else prediction.endswith("of course"))
        fact_right.append(fact in prediction)
    return {
        "exact_match": float(np.mean(exact)),
        "question_kind": float(np.mean(kind_right)),
        "film_fact": float(np.mean(fact_right)),
    }


def train_dialogs(attention=True, sizes=None, epochs=None, seed=0, verbose=0, learning_rate=None, **model_kwargs):
    """Trains `HierarchicalDialogModel` on the generated dialogs.

    There is no early stopping: the model after the last epoch is scored on both the validation and the test
    dialogs. Compare settings by `valid_metrics`; `metrics` (test) is for the final report only.

    Args:
        attention: attentional decoder over the utterance states (else the
            plain decoder from the context vector only).
        sizes: `(train, valid, test)` dialog counts (default by profile: 1,200 / 200 / 200 fast,
            4,000 / 500 / 500 full; see `dialog_splits`).
        epochs: passes over the training dialogs (default by profile).
        seed: data and initialisation seed.
        verbose: Keras `fit` verbosity (0, 1 or 2).
        learning_rate: Adam's rate (default by profile). The fast profile's
            18 epochs at 1e-2 were chosen on the validation dialogs (5 Dec
            2026, seeds 0-7, docs/documents.md): film fact 1.00 for seven
            seeds and 0.87 for one, against a mean of 0.965 with 12 epochs
            and 0.07 to 0.865 at 3e-3 (seeds 0-3).
        **model_kwargs: `HierarchicalDialogModel` arguments (embedding_dim,
            units, ...).

    Returns:
        A `TrainedDialogs` with validation and test metrics (see `dialog_metrics`).
    """
    import keras

    from course_lib.data.dialogs import dialog_splits, encode_dialogs
    from course_lib.models.dialog import HierarchicalDialogModel
    from course_lib.text.vocabulary import Vocabulary
    from course_lib.training.fit import fit_arrays

    check_ranges({"epochs": epochs, "learning_rate": learning_rate}, "train_dialogs",
                 positive_integers=("epochs",), positive=("learning_rate",))
    if sizes is not None and (not isinstance(sizes, (tuple, list)) or len(sizes) != 3):
        raise ValueError(
            "`sizes` of train_dialogs must be three dialog counts (train, valid, test). "
            f"Received: sizes={sizes!r}"
        )
    train_size, valid_size, test_size = sizes or pick(fast=(1200, 200, 200), full=(4000, 500, 500))
    epochs = pick(fast=18, full=30) if epochs is None else epochs
    learning_rate = pick(fast=1e-2, full=3e-3) if learning_rate is None else learning_rate
    splits = dialog_splits(train=train_size, valid=valid_size, test=test_size, seed=seed)
    train = splits["train"]
    vocabulary = Vocabulary.from_texts(
        [u for context in train.contexts for u in context] + train.responses, level="word"
    )
    arrays = {name: encode_dialogs(part, vocabulary) for name, part in splits.items()}
    keras.utils.set_random_seed(seed)
    model = HierarchicalDialogModel(len(vocabulary), attention=attention, **model_kwargs)
    model.compile(keras.optimizers.Adam(learning_rate, clipnorm=5.0), jit_compile=training_jit_compile())
    start = time.perf_counter()
    fit_arrays(
        model, {"context": arrays["train"]["context"], "target_in": arrays["train"]["target_in"]},
        arrays["train"]["target_out"], batch_size=32, epochs=epochs, verbose=verbose, seed=seed,
    )
    seconds = time.perf_counter() - start
    scores = {}
    for part in ("valid", "test"):
        generated = model.generate(arrays[part]["context"])
        predictions = [" ".join(vocabulary.decode_tokens(row)) for row in generated["tokens"]]
        scores[part] = dialog_metrics(splits[part], predictions)
    return TrainedDialogs(model, vocabulary, splits, arrays, seconds, scores["test"], scores["valid"])
