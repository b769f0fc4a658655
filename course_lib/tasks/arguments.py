"""What the tasks' command-line verbs share: an argument type, and checks on a run's data."""

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
