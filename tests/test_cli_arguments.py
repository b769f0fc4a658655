"""Counts and sizes on the command line: 0 or a negative number is a usage error, never "the default"."""

import pytest

from course_lib.cli import main


@pytest.mark.parametrize(
    "argv, bad",
    [
        (["reversal", "--steps", "0"], "0"),
        (["train", "language-model", "--steps", "0"], "0"),
        (["train", "captioning", "--limit", "-5", "--out", "unused"], "-5"),
        (["train", "captioning", "--epochs", "0", "--out", "unused"], "0"),
        (["train", "documents", "--epochs", "0", "--out", "unused"], "0"),
        (["train", "translation", "--batch-size", "0", "--out", "unused"], "0"),
        (["train", "transliteration", "--units", "0", "--out", "unused"], "0"),
        (["evaluate", "transliteration", "--model", "unused", "--beam", "0"], "0"),
        (["evaluate", "captioning", "--model", "unused", "--beam-width", "zero"], "zero"),
    ],
    ids=lambda value: " ".join(value[:2] + [a for a in value if a.startswith("--")][:1]) if isinstance(value, list) else None,
)
def test_non_positive_counts_are_usage_errors(argv, bad, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert f"expected a positive integer, received {bad!r}" in error, error
