"""Dakshina romanisation lexicons: `native<TAB>roman<TAB>count` per line.

For Hindi these are `hi.translit.sampled.{train,dev,test}.tsv` in the
Dakshina dataset (Google Research): a Devanagari word, one romanisation of it
and how many annotators wrote that romanisation. Malformed lines (not three
columns, a count that is not a positive integer, an empty side, a side in the
wrong script, bytes that are not UTF-8) are reported with their line numbers:
as a warning by default, as a `ValueError` with `errors="raise"`.
"""

from course_lib.data.tatoeba import MalformedLine, _report
from course_lib.data.transliteration_pairs import (
    TransliterationPair,
    check_pair,
    decode_line,
    read_raw_lines,
)


def parse_lines(raw_lines):
    """Parses byte or str lines; returns `(pairs, malformed)`."""
    pairs, malformed = [], []
    for line_number, raw in enumerate(raw_lines, start=1):
        line = decode_line(raw, line_number, malformed)
        if line is None or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            malformed.append(MalformedLine(
                line_number, f"expected 3 tab-separated columns (native, roman, count), found {len(fields)}", line
            ))
            continue
        native, roman, count = (field.strip() for field in fields)
        if not count.isdigit() or int(count) < 1:
            malformed.append(MalformedLine(line_number, f"the count {count!r} is not a positive integer", line))
            continue
        problem = check_pair(roman, native, line_number, line)
        if problem:
            malformed.append(problem)
            continue
        pairs.append(TransliterationPair(roman, native, line_number, int(count)))
    return pairs, malformed


def load_dakshina(path_or_url, errors="warn", inner_name=None):
    """Reads a Dakshina lexicon TSV file.

    Args:
        path_or_url: a local `.tsv`, an archive holding it, or a URL
            (downloaded with `keras.utils.get_file`; a clear error offline).
        errors: "warn" or "raise", as for `load_aksharantar`.
        inner_name: the member to read from an archive (default:
            "hi.translit.sampled.train.tsv").

    Returns:
        A list of `TransliterationPair(roman, native, line_number, count)`.
    """
    if errors not in ("warn", "raise"):
        raise ValueError(f"`errors` must be 'warn' or 'raise'. Received: errors={errors!r}")
    name = str(path_or_url).split("?")[0].rsplit("/", 1)[-1]
    inner_name = inner_name or (name if name.endswith(".tsv") else "hi.translit.sampled.train.tsv")
    path, raw_lines = read_raw_lines(path_or_url, inner_name)
    pairs, malformed = parse_lines(raw_lines)
    _report(malformed, path, errors)
    if not pairs:
        raise ValueError(f"No transliteration pairs in {path!r}.")
    return pairs
