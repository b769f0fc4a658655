"""What the tasks' command-line verbs share: argument types, and checks on a run's data."""

import argparse
import importlib


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


class ChoicesFrom:
    """`argparse` choices kept in a library module, read when first needed.

    Argparse reads choices only to check a value or to write a help text, so
    building the whole parser (`course-lib --help`) does not import the
    module, and with it Keras and TensorFlow. Give the argument a `metavar`
    (without one, `add_argument` reads the choices to make it) and name the
    choices in its help with `%(choices)s`.

    Args:
        module: the module's dotted name, e.g. `"course_lib.models.document_classifier"`.
        attribute: the name of the tuple of choices in it, e.g. `"ENCODERS"`.
    """

    def __init__(self, module, attribute):
        self.module = module
        self.attribute = attribute

    def _choices(self):
        return getattr(importlib.import_module(self.module), self.attribute)

    def __contains__(self, value):
        return value in self._choices()

    def __iter__(self):
        return iter(self._choices())


GENERATED = "generated"  # how a run records that it trained on the generated data, not a file


def check_same_training_data(out_dir, trained_on, train_file):
    """Refuses to resume the run in `out_dir` (trained on `trained_on`) with the other kind of data."""
    if (trained_on == GENERATED) != (not train_file):
        raise ValueError(
            f"{str(out_dir)!r} was trained on {trained_on!r}; resuming it needs the same kind of data "
            f"(pass --train again, or choose another --out). Received: --train {train_file!r}"
        )


def check_generated_test_fits(trained_on, what):
    """Refuses to score a model trained on a file on the generated test data (`what`)."""
    if trained_on != GENERATED:
        raise ValueError(
            f"This model was trained on {trained_on!r}; {what} would not measure it. "
            "Pass the test file with --test FILE. Received: no --test"
        )
