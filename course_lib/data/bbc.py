"""Loader for the BBC News distribution (Greene & Cunningham 2006).

Layout, as in `bbc-fulltext.zip`: `bbc/<class>/NNN.txt`, one article per
file, the first line its title, then a blank line and the paragraphs. The
files are UTF-8 except a few (at least one article is Latin-1): every file is
read, with Windows-1252 as the fallback (then Latin-1, for a file with one of
the five bytes Windows-1252 leaves undefined), and the files that needed it
are listed in `DocumentSet.fallback_files` (and reported with a warning).
Windows-1252 first, because it agrees with Latin-1 on letters and symbols
such as `é` and `£`, but reads the bytes 0x80-0x9F as the curly quotes,
dashes and `€` that Windows editors write there, where Latin-1 gives
invisible control characters.

The original archive holds some articles more than once: one up to white
space (sport/181.txt and 182.txt differ by a paragraph break), others under
the same title or retitled with small edits, or updated later the same day.
`duplicate_groups` puts the versions of an article in one group and
`split_indices(..., groups=...)` keeps each group in one part, so no version
of an article is trained on while another is tested.

The data is not part of the project: point `root` at your copy.
"""

import codecs
import itertools
import numbers
import warnings
from pathlib import Path

import numpy as np

from course_lib.data.documents import DocumentSet

FALLBACK_ENCODINGS = ("cp1252", "latin-1")  # tried in this order when a file is not UTF-8
FALLBACK_NOTE = "Windows-1252 (or Latin-1 if a byte is undefined in Windows-1252)"


# Byte-order marks of the UTF-16 and UTF-32 encodings (UTF-32 first: its little-endian mark starts with
# UTF-16's), and the codec that reads them and drops the mark.
_UNICODE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_text(path):
    """Returns `(text, used_fallback)`: UTF-8 if the bytes decode, else Windows-1252, else Latin-1.

    A UTF-8 byte-order mark (Excel's "CSV UTF-8" starts with one) is dropped:
    kept, it would glue itself to the first header or title. A file that
    starts with a UTF-16 byte-order mark (FF FE or FE FF: Windows Notepad's
    "Unicode", Excel's "Unicode Text") is read as UTF-16, and one with a
    UTF-32 mark as UTF-32 (neither counts as a fallback); read as Windows-1252,
    every other character would be a NUL. If such a file does not decode,
    `ValueError` names it. Windows-1252 leaves the bytes 0x81, 0x8D, 0x8F, 0x90
    and 0x9D undefined; a file with one of them is read as Latin-1, which
    decodes every byte.
    """
    data = Path(path).read_bytes()
    for mark, encoding in _UNICODE_BOMS:
        if data.startswith(mark):
            try:
                return data.decode(encoding), False
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{str(path)!r} starts with a {encoding.upper()} byte-order mark but is not valid "
                    f"{encoding.upper()} text. Received: {error.reason} at byte {error.start}"
                ) from None
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        pass
    for encoding in FALLBACK_ENCODINGS[:-1]:
        try:
            return data.decode(encoding), True
        except UnicodeDecodeError:
            continue
    return data.decode(FALLBACK_ENCODINGS[-1]), True


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

    An empty or white-space-only article file raises `ValueError` naming it
    (the distribution has none; one is a broken copy, and read as it is, it
    would be a document with no words).

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
            if not text.strip():
                raise ValueError(
                    f"A BBC article file must hold a title and its text. Received: an empty or white-space-only "
                    f"file {str(path)!r}"
                )
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
            f"{len(fallback)} BBC file(s) were not valid UTF-8 and were read as {FALLBACK_NOTE}: "
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


def duplicate_groups(texts, titles=None, min_overlap=0.5):
    """One group id per document: documents that are versions of one article share it.

    Two documents are versions of one article when any of these holds (and
    groups are closed under it: a version of a version is in the group):

    - their texts are equal up to white space;
    - with `titles`: their titles are equal up to white space and case
      (empty titles group nothing);
    - unless `min_overlap` is None: at least `min_overlap` of the shorter
      document's word 5-grams (the set of its lower-cased word 5-grams) are
      also 5-grams of the other. Measured against the shorter one, a story
      and its longer update count as versions: the update repeats most of
      the story while adding as much again, so a share of the union of
      their 5-grams (Jaccard overlap) stays low. In BBC News, retitled or
      lightly edited copies share 0.97-1.0 of the shorter one's 5-grams, a
      story and its update or follow-up 0.50-0.96 (the preview and the
      result of one auction: 0.54), and other pairs at most 0.49 (two
      reports of one continuing story, such as the oil price on two days).
      The shares form a continuum, not two clusters; the default 0.5 is
      where reused text becomes half of an article. A 5-gram found in more
      than `_COMMON_SHINGLE_DOCUMENTS` documents (boilerplate) does not make
      two documents candidates, so the search stays fast.

    Args:
        texts: the document strings.
        titles: optional title of each document (`DocumentSet.titles`).
        min_overlap: a number in (0, 1], or None for equal texts (and titles) only.

    Returns:
        An int array `(n,)`: the index of the group's first document, so a
        document without another version has its own index.
    """
    texts = list(texts)
    if titles is not None and len(titles) != len(texts):
        raise ValueError(
            f"Need one title per text. Received: len(texts)={len(texts)}, len(titles)={len(titles)}"
        )
    if min_overlap is not None and (
        isinstance(min_overlap, bool) or not isinstance(min_overlap, numbers.Real) or not 0 < min_overlap <= 1
    ):
        raise ValueError(f"`min_overlap` must be None or a number in (0, 1]. Received: min_overlap={min_overlap!r}")
    parent = list(range(len(texts)))

    def root(index):
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def join(a, b):
        a, b = root(a), root(b)
        parent[max(a, b)] = min(a, b)  # a group's id is its first document

    keys = {}
    for index, text in enumerate(texts):
        join(index, keys.setdefault(("text", " ".join(text.split())), index))
        title = " ".join(str(titles[index]).split()).casefold() if titles is not None else ""
        if title:
            join(index, keys.setdefault(("title", title), index))
    if min_overlap is not None:
        shingles = [_shingles(text) for text in texts]
        holders = {}
        for index, document in enumerate(shingles):
            for shingle in document:
                holders.setdefault(shingle, []).append(index)
        candidates = set()
        for indices in holders.values():
            if 1 < len(indices) <= _COMMON_SHINGLE_DOCUMENTS:
                candidates.update(itertools.combinations(indices, 2))
        for a, b in candidates:
            shared = len(shingles[a] & shingles[b])
            if shared >= min_overlap * min(len(shingles[a]), len(shingles[b])):
                join(a, b)
    return np.asarray([root(index) for index in range(len(texts))], dtype=int)


_SHINGLE_WORDS = 5
_COMMON_SHINGLE_DOCUMENTS = 100


def _shingles(text):
    """The set of lower-cased word 5-grams of `text` (a shorter text: its words as one n-gram)."""
    words = tuple(text.casefold().split())
    return {words[i:i + _SHINGLE_WORDS] for i in range(max(1, len(words) - _SHINGLE_WORDS + 1))}


def split_indices(labels, valid_fraction=0.1, test_fraction=0.2, seed=0, groups=None):
    """Stratified train/valid/test indices (each class split in the same proportions).

    Args:
        labels: class index of each document.
        valid_fraction, test_fraction: shares of each class for valid and test.
        seed: seed of the shuffle.
        groups: optional group id of each document (e.g. `duplicate_groups`):
            a group's documents all go to one part, so a near-copy of a test
            article is never trained on. A group is split with the class of
            its first document; a part may then exceed its share by the size
            of one group. Without groups (or with no group larger than one
            document) the split is the plain per-document one.

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
    groups = np.arange(len(labels)) if groups is None else np.asarray(groups)
    if groups.shape != labels.shape:
        raise ValueError(
            f"Need one group id per label. Received: groups.shape={groups.shape}, labels.shape={labels.shape}"
        )
    members_of = {}
    for index, group in enumerate(groups.tolist()):
        members_of.setdefault(group, []).append(index)
    group_label = {group: labels[members[0]] for group, members in members_of.items()}
    parts = {"train": [], "valid": [], "test": []}
    for label in np.unique(labels):
        # Groups in order of their first document; one document per group gives the plain split.
        class_groups = [members for group, members in members_of.items() if group_label[group] == label]
        n_documents = sum(len(members) for members in class_groups)
        n_test = int(round(test_fraction * n_documents))
        n_valid = int(round(valid_fraction * n_documents))
        placed = 0
        for position in rng.permutation(len(class_groups)):
            members = class_groups[position]
            part = "test" if placed < n_test else "valid" if placed < n_test + n_valid else "train"
            parts[part].extend(members)
            placed += len(members)
    return {name: np.sort(np.asarray(idx, dtype=int)) for name, idx in parts.items()}


__all__ = ["FALLBACK_ENCODINGS", "FALLBACK_NOTE", "duplicate_groups", "load_bbc", "read_text", "split_indices"]
