"""Loader for documents in a CSV file with the columns `label,text`.

A header line `label,text` is optional. A first row whose two cells are both
header words (label, labels, category, class, text, body, document,
content; any case) but not `label,text` in that order, e.g. `category,body`
or `text,label`, is refused with a `ValueError`: it is a header naming other
or swapped columns, not a document. Every row needs a non-empty label and a
non-empty text. Texts may contain commas, quotes and newlines (standard CSV
quoting). The file is read as UTF-8, else Windows-1252, else Latin-1
(`course_lib.data.bbc.read_text`; a fallback is reported in `fallback_files`);
a file that starts with a UTF-16 byte-order mark is read as UTF-16.
"""

import csv
import io
from pathlib import Path

import numpy as np

from course_lib.data.bbc import read_text
from course_lib.data.documents import DocumentSet

_HEADER_WORDS = {"label", "labels", "category", "class", "text", "body", "document", "content"}


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
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if header == ["label", "text"]:
        rows, first = rows[1:], 2
    elif len(header) == 2 and set(header) <= _HEADER_WORDS:
        raise ValueError(
            "The CSV columns must be `label,text` (label first); the first row looks like a header "
            f"for other columns. Received: header {rows[0]!r} in {str(path)!r}"
        )
    labels, texts = [], []
    for number, row in enumerate(rows, start=first):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise ValueError(
                f"Each CSV row must have two fields, label and text. Received: {len(row)} fields "
                f"in row {number} of {str(path)!r}: {row[:3]!r}"
            )
        if not row[0].strip() or not row[1].strip():
            raise ValueError(
                f"Each CSV row needs a non-empty label and text. Received: an empty "
                f"{'label' if not row[0].strip() else 'text'} in row {number} of {str(path)!r}: {row!r:.80}"
            )
        labels.append(row[0].strip())
        texts.append(row[1])
    if not texts:
        raise ValueError(f"The CSV file holds no documents. Received: path={str(path)!r}")
    names = tuple(class_names) if class_names is not None else tuple(sorted(set(labels)))
    if len(set(names)) != len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"`class_names` must be unique. Received duplicates: {duplicates}")
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
