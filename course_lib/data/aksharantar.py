"""Aksharantar (AI4Bharat) transliteration pairs: `roman,native` per line, no header.

The Hindi split used in IIT Madras CS6910 comes as `hin_train.csv`,
`hin_valid.csv` and `hin_test.csv` (UTF-8, the last line possibly without a
newline), e.g. inside `aksharantar_sampled.zip`. Malformed lines (not two
columns, an empty side, a roman side without Latin letters, a native side
without Devanagari, bytes that are not UTF-8) are reported with their line
numbers: as a warning by default, as a `ValueError` with `errors="raise"`.
"""

import csv

from course_lib.data.tatoeba import _report
from course_lib.data.transliteration_pairs import parse_pair_lines, read_raw_lines


def _split_fields(line):
    fields = next(csv.reader([line]))
    if len(fields) != 2:
        return f"expected 2 comma-separated columns (roman, native), found {len(fields)}"
    return fields[0].strip(), fields[1].strip(), 1


def parse_lines(raw_lines):
    """Parses byte or str lines; returns `(pairs, malformed)`."""
    return parse_pair_lines(raw_lines, _split_fields)


def load_aksharantar(path_or_url, errors="warn", inner_name=None):
    """Reads an Aksharantar CSV file.

    Args:
        path_or_url: a local `.csv`, a `.zip` holding it, or a URL (downloaded
            with `keras.utils.get_file`; a clear `FileNotFoundError` offline).
        errors: "warn" (skip malformed lines after a warning listing them) or
            "raise" (`ValueError` listing them).
        inner_name: the member to read from an archive, e.g. "hin_valid.csv"
            (default: the file name of `path_or_url`, else "hin_train.csv").

    Returns:
        A list of `TransliterationPair(roman, native, line_number, count=1)`.
    """
    if errors not in ("warn", "raise"):
        raise ValueError(f"`errors` must be 'warn' or 'raise'. Received: errors={errors!r}")
    name = str(path_or_url).split("?")[0].rsplit("/", 1)[-1]
    inner_name = inner_name or (name if name.endswith(".csv") else "hin_train.csv")
    path, raw_lines = read_raw_lines(path_or_url, inner_name)
    pairs, malformed = parse_lines(raw_lines)
    _report(malformed, path, errors)
    if not pairs:
        raise ValueError(f"No transliteration pairs in {path!r}.")
    return pairs
