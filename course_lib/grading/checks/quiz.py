"""The self-test quiz: answers of the right kind (a number, a whole number, a dict of them)."""

import numpy as np

from course_lib.grading.spec import as_scalar, is_integer, is_whole_number
from course_lib.grading.checks.common import _fail


def check_answer_type(value, kind, name):
    """Quiz answers: the right kind of value (never checks the answer itself).

    It accepts what the grader accepts (`course_lib.grading.spec`): a shape
    as a tuple or list of ints, a whole number also as `98432.0`, a number
    also as a 0-d array or tensor, a set of names also as a list or tuple.
    """
    if kind == "shape":
        ok = isinstance(value, (tuple, list)) and all(is_integer(v) for v in value)
        form = "a tuple of ints"
    elif kind == "int":
        ok = is_whole_number(as_scalar(value))
        form = "a whole number"
    elif kind == "number":
        number = as_scalar(value)  # a 0-d array or tensor is the number it holds, as for the grader
        ok = isinstance(number, (int, float, np.integer, np.floating)) and not isinstance(number, (bool, np.bool_))
        form = "a number"
    elif kind == "choice":
        ok = isinstance(value, str) and len(value.strip()) == 1
        form = "one letter"
    elif kind == "set":
        ok = isinstance(value, (set, frozenset, list, tuple)) and all(isinstance(v, str) for v in value)
        form = "a set of names"
    else:
        raise ValueError(f"Unknown answer kind. Received: kind={kind!r}")
    if not ok:
        _fail(f"{name} should be {form}. Received: {value!r}")
    print(f"\u2713 {name} has the right form")


def check_answer_dict(value, kinds, name):
    """Quiz answers given as a dict: exactly the keys of `kinds`, each of its kind (`check_answer_type`)."""
    if not isinstance(value, dict):
        _fail(f"{name} should be a dict. Received: {type(value).__name__}")
    if set(value) != set(kinds):
        _fail(f"{name} should have the keys {sorted(kinds)}. Received: {sorted(map(str, value))}")
    for key, kind in kinds.items():
        check_answer_type(value[key], kind, f"{name}[{key!r}]")


def check_multiplies(shape, vector_size, name):
    """A matrix answer in the quiz's orientation: `(rows, columns)`, so it multiplies a vector of `columns` numbers.

    Catches a shape written the way Keras stores kernels, `(inputs, outputs)`,
    without saying what the rows are.
    """
    check_answer_type(shape, "shape", name)
    if len(shape) != 2 or shape[1] != vector_size:
        _fail(f"{name} multiplies a vector of {vector_size} numbers, so in (rows, columns) it needs "
              f"{vector_size} columns: is it written the way Keras stores kernels, (inputs, outputs)? "
              f"Received: {tuple(shape)}")
    print(f"\u2713 {name} multiplies a {vector_size}-number vector")
