"""Where documents come from (generated, a BBC folder or a CSV file), their train/valid/test split, padding limits."""

from dataclasses import replace
from pathlib import Path

import numpy as np

from course_lib.training.profiles import pick

GENERATED = "generated"


def data_kind(data):
    """"generated", "bbc" or "csv" for a `--data` value (None = generated)."""
    if data is None or str(data) == GENERATED:
        return GENERATED
    path = Path(data)
    if path.is_dir():
        return "bbc"
    if path.is_file() and path.suffix.lower() == ".csv":
        return "csv"
    if not path.exists():
        raise FileNotFoundError(f"No document data here. Received: --data {str(data)!r}")
    raise ValueError(f"--data must be a folder (BBC layout) or a .csv file. Received: {str(data)!r}")


def load_splits(data=None, seed=0, sizes=None, class_names=None):
    """Train/valid/test `DocumentSet`s for a data source.

    Args:
        data: None / "generated", a BBC folder or a CSV file.
        seed: seed of the generated data or of the split of real data.
        sizes: for generated data, `(train, valid, test)` counts (default by profile).
        class_names: fixed class order (when evaluating a trained model); generated documents'
            labels are matched to it by name.
    """
    kind = data_kind(data)
    if kind == GENERATED:
        from course_lib.data.documents import document_splits

        train, valid, test = sizes or pick(fast=(1200, 200, 400), full=(4000, 500, 1000))
        splits = document_splits(train=train, valid=valid, test=test, seed=seed)
        return splits if class_names is None else {
            name: in_class_order(documents, class_names) for name, documents in splits.items()
        }
    from course_lib.data.bbc import FALLBACK_NOTE, duplicate_groups, split_indices

    if kind == "bbc":
        from course_lib.data.bbc import load_bbc

        documents = load_bbc(data)
        if class_names is not None and tuple(class_names) != documents.class_names:
            raise ValueError(
                f"The model was trained on classes {tuple(class_names)}. Received: folder classes {documents.class_names}"
            )
    else:
        from course_lib.data.csv_documents import load_csv_documents

        documents = load_csv_documents(data, class_names=class_names)
    if documents.fallback_files:
        print(f"{len(documents.fallback_files)} file(s) decoded as {FALLBACK_NOTE}: {documents.fallback_files[:5]}")
    if len(documents.class_names) < 2:  # a classifier of one class has nothing to learn
        raise ValueError(
            f"Classifying needs documents of at least two classes. Received: {str(data)!r} with the classes "
            f"{list(documents.class_names)}"
        )
    documents, dropped = without_duplicates(documents)
    if dropped:
        print(f"{dropped} duplicate document(s) left out (the same text as an earlier one), so that no text is "
              "both trained on and tested")
    groups = duplicate_groups(documents.texts, documents.titles)
    sizes = np.bincount(groups)
    if sizes.max(initial=0) > 1:
        print(f"{int(sizes[sizes > 1].sum())} documents are versions of {int(np.sum(sizes > 1))} articles (the same "
              "title, or half of the shorter one's word 5-grams in the other); each article's versions are kept in one "
              "part of the split")
    parts = split_indices(documents.labels, valid_fraction=0.1, test_fraction=0.2, seed=seed, groups=groups)
    splits = {name: documents.subset(idx) for name, idx in parts.items()}
    splits["all"] = documents
    return splits


def in_class_order(documents, class_names):
    """`documents` with their labels renumbered to index `class_names` (a trained model's order).

    A model trained on a CSV file numbers its classes in sorted order (business,
    politics, sport, technology); the generated documents number them as
    `data.documents.CLASS_NAMES` does (sport, politics, technology, business).
    Scoring one against the other by number would count right answers as wrong.
    Classes are matched by name, as a CSV file's labels are; a generated class
    the model does not know is refused.
    """
    class_names = tuple(class_names)
    unknown = [name for name in documents.class_names if name not in class_names]
    if unknown:
        raise ValueError(
            f"The model was trained on classes {class_names}; the documents' classes {documents.class_names} "
            f"include {unknown}, which it does not know. Received: class_names={class_names!r}"
        )
    index = np.asarray([class_names.index(name) for name in documents.class_names])
    return replace(documents, labels=index[np.asarray(documents.labels, dtype=int)], class_names=class_names)


def without_duplicates(documents):
    """`(documents, dropped)`: the first of each set of documents with the same text (white space aside).

    The original BBC News archive holds some articles twice under different
    file names; an exact copy adds nothing to training. Versions that differ
    (edited, retitled) are kept and split together (`data.bbc.duplicate_groups`).
    """
    from course_lib.data.bbc import duplicate_groups

    groups = duplicate_groups(documents.texts, min_overlap=None)
    first = np.flatnonzero(groups == np.arange(len(groups)))
    if len(first) == len(documents.texts):
        return documents, 0
    return documents.subset(first), len(documents.texts) - len(first)


def check_parts_not_empty(splits, names, data):
    """A `ValueError` naming the empty parts (a tiny CSV leaves valid or test empty)."""
    empty = [name for name in names if len(splits[name]) == 0]
    if empty:
        sizes = ", ".join(f"{name}={len(splits[name])}" for name in ("train", "valid", "test"))
        raise ValueError(
            f"The {' and '.join(empty)} part of the data is empty (each class is split 70/10/20, so it needs "
            f"at least 5 documents). Received: --data {str(data)!r} with {sizes} documents"
        )


def default_limits(kind):
    """`(max_sentences, max_words)` per data kind."""
    return (8, 20) if kind == GENERATED else (30, 40)
