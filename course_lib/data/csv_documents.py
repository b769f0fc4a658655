"""Loader for documents in a CSV file with the columns `label,text`.

A header line `label,text` is optional. Texts may contain commas, quotes and
newlines (standard CSV quoting). The file is read as UTF-8, with Latin-1 as
the fallback (reported in `fallback_files`).
"""

import csv
import io
from pathlib import Path

import numpy as np

from course_lib.data.bbc import read_text
from course_lib.data.documents import DocumentSet


def load_csv_documents(path, class_names=None):
    """Reads `label,text` rows.

    Args:
        path: the CSV file.
        class_names: optional fixed order of classes (e.g. those a model was
            trained with); a label outside it raises ValueError. Default: the
            labels found, sorted.

    Returns:
        A `DocumentSet`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No CSV file here. Received: path={str(path)!r}")
    text, used_fallback = read_text(path)
    rows = list(csv.reader(io.StringIO(text)))
    first = 1  # CSV row number (1 = the first row of the file, the header if there is one)
    if rows and [cell.strip().lower() for cell in rows[0]] == ["label", "text"]:
        rows, first = rows[1:], 2
    labels, texts = [], []
    for number, row in enumerate(rows, start=first):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise ValueError(
                f"Each CSV row must have two fields, label and text. Received: {len(row)} fields "
                f"in row {number} of {str(path)!r}: {row[:3]!r}"
            )
        labels.append(row[0].strip())
        texts.append(row[1])
    if not texts:
        raise ValueError(f"The CSV file holds no documents. Received: path={str(path)!r}")
    names = tuple(class_names) if class_names is not None else tuple(sorted(set(labels)))
    unknown = sorted(set(labels) - set(names))
    if unknown:
        raise ValueError(f"Labels not among the classes {names}. Received: {unknown[:10]}")
    index = {name: i for i, name in enumerate(names)}
    return DocumentSet(
        texts=texts,
        labels=np.asarray([index[label] for label in labels], dtype="int32"),
        class_names=names,
        paths=[str(path)] * len(texts),
        fallback_files=[str(path)] if used_fallback else [],
    )


__all__ = ["load_csv_documents"]
