"""Shared pieces of the transliteration loaders (Aksharantar, Dakshina).

A loader returns `TransliterationPair(roman, native, line_number, count)`
records. One roman word may have several accepted native spellings, so
`references_by_source` groups them for evaluation.
"""

import dataclasses
import re

from course_lib.data.tatoeba import MalformedLine

_DEVANAGARI = re.compile("[\u0900-\u097f]")
_LATIN = re.compile("[A-Za-z]")


@dataclasses.dataclass(frozen=True)
class TransliterationPair:
    roman: str
    native: str
    line_number: int
    count: int = 1


def check_pair(roman, native, line_number, line):
    """Returns a `MalformedLine` when the two sides are not a plausible pair, else None."""
    if not roman or not native:
        return MalformedLine(line_number, "empty roman or native column", line)
    if not _LATIN.search(roman) or _DEVANAGARI.search(roman):
        return MalformedLine(line_number, "the roman column has no Latin letters or has Devanagari", line)
    if not _DEVANAGARI.search(native) or _LATIN.search(native):
        return MalformedLine(line_number, "the native column has no Devanagari or has Latin letters", line)
    return None


def decode_line(raw, line_number, malformed):
    """Bytes to str without the line ending and byte-order mark; None (and a report) if not UTF-8."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            malformed.append(MalformedLine(line_number, f"not UTF-8 ({error.reason})", repr(raw[:60])))
            return None
    return raw.rstrip("\r\n").lstrip("\ufeff")


def read_raw_lines(path_or_url, inner_name):
    """The raw byte lines of a local file, an archive member, or a downloaded URL."""
    import zipfile

    from course_lib.data.tatoeba import resolve_file

    path = resolve_file(path_or_url, inner_name=inner_name)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith(inner_name)]
            if not names:
                raise FileNotFoundError(
                    f"No {inner_name!r} in the archive {path!r}. Found: {archive.namelist()[:20]}"
                )
            return path, archive.read(names[0]).splitlines(keepends=True)
    with open(path, "rb") as handle:
        return path, handle.readlines()


def references_by_source(pairs, source="roman"):
    """`{roman: [native spellings, most frequent first]}` from a list of pairs
    (with `source="native"`: `{native: [roman spellings]}`, for the reverse model)."""
    if source not in ("roman", "native"):
        raise ValueError(f"`source` must be 'roman' or 'native'. Received: source={source!r}")
    target = "native" if source == "roman" else "roman"
    grouped = {}
    for pair in pairs:
        spellings = grouped.setdefault(getattr(pair, source), {})
        output = getattr(pair, target)
        spellings[output] = spellings.get(output, 0) + pair.count
    return {
        word: sorted(spellings, key=lambda output: -spellings[output])
        for word, spellings in grouped.items()
    }


def parse_pair_lines(raw_lines, split_fields):
    """Parses byte or str lines into pairs; returns `(pairs, malformed)`.

    `split_fields(line)` turns one non-blank line into `(roman, native, count)`
    or returns a string saying why the line is malformed. Undecodable lines,
    bad fields and bad pairs are all reported with their line number.
    """
    pairs, malformed = [], []
    for line_number, raw in enumerate(raw_lines, start=1):
        line = decode_line(raw, line_number, malformed)
        if line is None or not line.strip():
            continue  # undecodable (reported) or blank
        fields = split_fields(line)
        if isinstance(fields, str):
            malformed.append(MalformedLine(line_number, fields, line))
            continue
        roman, native, count = fields
        problem = check_pair(roman, native, line_number, line)
        if problem:
            malformed.append(problem)
            continue
        pairs.append(TransliterationPair(roman, native, line_number, count))
    return pairs, malformed
