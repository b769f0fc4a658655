"""Tatoeba / Anki sentence pairs: `English<TAB>Hindi<TAB>attribution` per line.

This is the format of the `hin-eng.zip` export from manythings.org/anki (the
file inside is `hin.txt`): UTF-8, no header, one translation per line, the
same English sentence possibly on several lines with different translations.
The attribution column is kept, since the CC-BY licence asks for it. A line
with only the first two columns (as in older exports) is read with an empty
attribution.

Malformed lines (wrong number of columns, an empty side, a Hindi column
without Devanagari, bytes that are not UTF-8) are collected with their line
numbers and reported: as a warning by default, as a `ValueError` with
`errors="raise"`. They are never dropped silently.
"""

import dataclasses
import os
import re
import warnings
import zipfile

DEFAULT_URL = "https://www.manythings.org/anki/hin-eng.zip"
_DEVANAGARI = re.compile("[\u0900-\u097f]")


@dataclasses.dataclass(frozen=True)
class TatoebaPair:
    english: str
    hindi: str
    attribution: str
    line_number: int


@dataclasses.dataclass(frozen=True)
class MalformedLine:
    line_number: int
    reason: str
    text: str

    def __str__(self):
        return f"line {self.line_number}: {self.reason}: {self.text[:60]!r}"


def parse_lines(raw_lines):
    """Parses byte or str lines; returns `(pairs, malformed)` lists."""
    pairs, malformed = [], []
    for line_number, raw in enumerate(raw_lines, start=1):
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                malformed.append(MalformedLine(line_number, f"not UTF-8 ({error.reason})", repr(raw[:60])))
                continue
        line = raw.rstrip("\r\n").lstrip("\ufeff")
        if not line.strip():
            continue  # blank lines (e.g. a trailing newline) carry nothing
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            malformed.append(MalformedLine(
                line_number,
                f"expected 3 tab-separated columns (English, Hindi, attribution) or the first 2, found {len(fields)}",
                line,
            ))
            continue
        english, hindi = fields[0].strip(), fields[1].strip()
        attribution = fields[2].strip() if len(fields) == 3 else ""
        if not english or not hindi:
            malformed.append(MalformedLine(line_number, "empty English or Hindi column", line))
            continue
        if not _DEVANAGARI.search(hindi):
            malformed.append(MalformedLine(line_number, "the Hindi column has no Devanagari", line))
            continue
        pairs.append(TatoebaPair(english, hindi, attribution, line_number))
    return pairs, malformed


def _report(malformed, path, errors):
    if not malformed:
        return
    shown = "\n  ".join(str(problem) for problem in malformed[:10])
    more = f"\n  ... and {len(malformed) - 10} more" if len(malformed) > 10 else ""
    message = f"{len(malformed)} malformed line(s) in {os.fspath(path)!r}:\n  {shown}{more}"
    if errors == "raise":
        raise ValueError(message)
    warnings.warn(message + "\nThese lines were skipped.", stacklevel=3)


def resolve_file(path_or_url, inner_name="hin.txt"):
    """A local path, or a URL fetched with `keras.utils.get_file` (zip archives extracted)."""
    path_or_url = os.fspath(path_or_url)
    if re.match(r"^(https?|ftp)://", path_or_url):
        import keras

        name = os.path.basename(path_or_url.split("?")[0]) or "tatoeba.txt"
        try:
            path = keras.utils.get_file(name, origin=path_or_url, extract=name.endswith(".zip"),
                                        cache_subdir="datasets")
        except Exception as error:  # get_file raises several error types when offline
            raise FileNotFoundError(
                f"Could not download {path_or_url!r} ({type(error).__name__}: {error}). "
                "Offline, or when the site refuses a script's download (some refuse Python's), download it in a "
                "browser and pass the local file path."
            ) from None
        if os.path.isdir(path):
            for root, _, files in os.walk(path):
                if inner_name in files:
                    return os.path.join(root, inner_name)
            raise FileNotFoundError(f"The archive from {path_or_url!r} has no {inner_name!r}.")
        return path
    if not os.path.exists(path_or_url):
        raise FileNotFoundError(f"No such file: {path_or_url!r}")
    if os.path.isdir(path_or_url):
        raise ValueError(f"Expected a file, not a directory. Received: {path_or_url!r}")
    return path_or_url


def load_tatoeba(path_or_url=DEFAULT_URL, errors="warn"):
    """Reads a Tatoeba/Anki file (a path, a `.zip`, or a URL).

    Args:
        path_or_url: local `hin.txt`, a zip archive holding it, or a URL.
        errors: "warn" (skip malformed lines after a warning that lists them
            with their line numbers) or "raise" (`ValueError` listing them).

    Returns:
        A list of `TatoebaPair(english, hindi, attribution, line_number)`.
    """
    if errors not in ("warn", "raise"):
        raise ValueError(f"`errors` must be 'warn' or 'raise'. Received: errors={errors!r}")
    path = resolve_file(path_or_url)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith(".txt") and not n.startswith("_")]
            if not names:
                raise FileNotFoundError(f"No sentence file in the archive {path!r}. Found: {archive.namelist()}")
            raw_lines = archive.read(names[0]).splitlines(keepends=True)
    else:
        with open(path, "rb") as handle:
            raw_lines = handle.readlines()
    pairs, malformed = parse_lines(raw_lines)
    _report(malformed, path, errors)
    if not pairs:
        raise ValueError(f"No sentence pairs in {path!r}.")
    return pairs


def write_tatoeba(pairs, path):
    """Writes pairs as `English<TAB>Hindi<TAB>attribution` lines, as `load_tatoeba` reads them.

    Args:
        pairs: objects with `english`, `hindi` and, optionally, `attribution`.
        path: the file to write (UTF-8).
    """
    lines = []
    for pair in pairs:
        fields = (pair.english, pair.hindi, getattr(pair, "attribution", ""))
        if any("\t" in field or "\n" in field for field in fields):
            raise ValueError(f"A tab or a line break inside a sentence would split its line. Received: {pair!r}")
        lines.append("\t".join(fields) + "\n")
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
