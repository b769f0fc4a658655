"""Loader for the BBC News distribution (Greene & Cunningham 2006).

Layout, as in `bbc-fulltext.zip`: `bbc/<class>/NNN.txt`, one article per
file, the first line its title, then a blank line and the paragraphs. The
files are UTF-8 except a few (at least one article is Latin-1): every file is
read, with Latin-1 as the fallback, and the files that needed it are listed
in `DocumentSet.fallback_files` (and reported with a warning).

The data is not part of the project: point `root` at your copy.
"""

import warnings
from pathlib import Path

import numpy as np

from course_lib.data.documents import DocumentSet

FALLBACK_ENCODING = "latin-1"


def read_text(path):
    """Returns `(text, used_fallback)`: UTF-8 if the bytes decode, else Latin-1.

    A UTF-8 byte-order mark (Excel's "CSV UTF-8" starts with one) is dropped:
    kept, it would glue itself to the first header or title.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode(FALLBACK_ENCODING), True


def _class_root(root):
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"No BBC News folder here. Received: root={str(root)!r}")
    if not root.is_dir():
        raise ValueError(f"Expected the BBC News folder, not a file. Received: root={str(root)!r}")
    # Accept both the folder that holds `bbc/` and `bbc/` itself.
    if (root / "bbc").is_dir() and not any(p.suffix == ".txt" for p in root.glob("*/*.txt")):
        root = root / "bbc"
    return root


def load_bbc(root, warn=True):
    """Reads every article under `root`.

    Args:
        root: the `bbc/` folder (or the folder that contains it), with one
            sub-folder of `.txt` files per class.
        warn: warn once listing the files decoded with the fallback encoding.

    Returns:
        A `DocumentSet`: `texts` (title and body joined by a newline),
        `titles`, `paths`, `labels` (class index, classes sorted by name) and
        `fallback_files`.
    """
    root = _class_root(root)
    class_names = tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.txt"))))
    if not class_names:
        raise ValueError(
            "Expected one sub-folder of .txt files per class (bbc/<class>/NNN.txt). "
            f"Received: root={str(root)!r} with no such sub-folder"
        )
    texts, titles, paths, labels, fallback = [], [], [], [], []
    for label, name in enumerate(class_names):
        for path in sorted((root / name).glob("*.txt")):
            text, used_fallback = read_text(path)
            if used_fallback:
                fallback.append(str(path))
            lines = text.replace("\r\n", "\n").strip().split("\n")
            title = lines[0].strip()
            body = "\n".join(line.strip() for line in lines[1:] if line.strip())
            texts.append(f"{title}\n{body}" if body else title)
            titles.append(title)
            paths.append(str(path))
            labels.append(label)
    if fallback and warn:
        warnings.warn(
            f"{len(fallback)} BBC file(s) were not valid UTF-8 and were read as {FALLBACK_ENCODING}: "
            + ", ".join(fallback[:10]),
            stacklevel=2,
        )
    return DocumentSet(
        texts=texts,
        labels=np.asarray(labels, dtype="int32"),
        class_names=class_names,
        paths=paths,
        titles=titles,
        fallback_files=fallback,
    )


def split_indices(labels, valid_fraction=0.1, test_fraction=0.2, seed=0):
    """Stratified train/valid/test indices (each class split in the same proportions).

    Returns:
        A dict of sorted int arrays `{"train", "valid", "test"}`.
    """
    if not (0 <= valid_fraction < 1 and 0 < test_fraction < 1 and valid_fraction + test_fraction < 1):
        raise ValueError(
            "Fractions must be in [0, 1) with valid + test < 1. "
            f"Received: valid_fraction={valid_fraction}, test_fraction={test_fraction}"
        )
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    parts = {"train": [], "valid": [], "test": []}
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        n_test = int(round(test_fraction * len(members)))
        n_valid = int(round(valid_fraction * len(members)))
        parts["test"].extend(members[:n_test])
        parts["valid"].extend(members[n_test:n_test + n_valid])
        parts["train"].extend(members[n_test + n_valid:])
    return {name: np.sort(np.asarray(idx, dtype=int)) for name, idx in parts.items()}


__all__ = ["FALLBACK_ENCODING", "load_bbc", "read_text", "split_indices"]
