"""Dakshina romanisation lexicons: `native<TAB>roman<TAB>count` per line.

For Hindi these are `hi.translit.sampled.{train,dev,test}.tsv` in the
Dakshina dataset (Google Research): a Devanagari word, one romanisation of it
and how many annotators wrote that romanisation. Malformed lines (not three
columns, a count that is not a positive integer, an empty side, a side in the
wrong script, bytes that are not UTF-8) are reported with their line numbers:
as a warning by default, as a `ValueError` with `errors="raise"`.
"""

from course_lib.data.tatoeba import _report
from course_lib.data.transliteration_pairs import parse_pair_lines, read_raw_lines


def _split_fields(line):
    fields = line.split("\t")
    if len(fields) != 3:
        return f"expected 3 tab-separated columns (native, roman, count), found {len(fields)}"
    native, roman, count = (field.strip() for field in fields)
    if not count.isdecimal() or int(count) < 1:  # isdigit() also takes "²", which int() refuses
        return f"the count {count!r} is not a positive integer"
    return roman, native, int(count)


def parse_lines(raw_lines):
    """Parses byte or str lines; returns `(pairs, malformed)`."""
    return parse_pair_lines(raw_lines, _split_fields)


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
