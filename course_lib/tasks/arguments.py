"""Argument types shared by the tasks' command-line verbs."""

import argparse


def positive_int(text):
    """An `argparse` type: a whole number of at least 1 (a count, a size, a beam width).

    `0` is refused rather than read as "the default", and a usage error names
    what was received.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received {text!r}")
    return value
