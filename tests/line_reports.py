"""One check for every loader that reports malformed lines by number."""

import pytest


def load_reporting(load, path, line_numbers):
    """Calls `load(path)`, which must warn about exactly `line_numbers`; returns what it loaded."""
    with pytest.warns(UserWarning) as record:
        loaded = load(path)
    message = str(record[0].message)
    for line_number in line_numbers:
        assert f"line {line_number}:" in message
    assert f"{len(line_numbers)} malformed" in message
    return loaded
