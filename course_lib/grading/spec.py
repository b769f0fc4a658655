"""What an assignment's hidden tests look like, and how they are found.

An instructor writes one Python file per assignment in the top-level
`hidden_tests/` folder (never shipped to students: it is outside the
`course_lib` package). The file defines `ASSIGNMENT`, an `Assignment` made of
`Question`s, each scored by one or more `Test`s:

    ASSIGNMENT = Assignment(
        id="A1", notebook="A1_bahdanau_attention",
        questions=[Question("softmax", "Softmax over the source positions")],
        tests=[
            Test("softmax: random scores", question="softmax", points=1,
                 call="student.softmax(inputs['scores'])",
                 inputs=lambda rng: {"scores": rng.normal(size=(4, 7))},
                 expected=lambda inputs: reference_softmax(inputs["scores"])),
        ],
    )

`inputs(rng)` and `expected(inputs)` run in the grader's own process; only the
inputs travel to the student's kernel, where `call` is evaluated with
`student` (the notebook's namespace) and `inputs`. The value it returns comes
back as data and is compared with `expected` by `compare` in the grader, so
nothing the notebook does to `numpy`, `assert` or the check helpers can change
the verdict.
"""

import importlib.util
import inspect
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Question:
    """One graded part of an assignment; its points are the sum of its tests'."""

    id: str
    title: str = ""


@dataclass
class Test:
    """One hidden test.

    Args:
        name: shown to the student in the feedback file (values never are).
        question: id of the `Question` it scores.
        points: points earned when it passes.
        call: Python expression evaluated in the student's kernel, with
            `student` (attribute access to the notebook's names) and `inputs`.
        inputs: `rng -> dict` of hidden inputs (NumPy arrays, numbers, lists).
        expected: `inputs -> value` computed by the grader from its reference.
        compare: `(got, expected, inputs) -> (passed, reason)`; default
            `allclose`.
        substitute: names of reference functions (from the hidden test module)
            that replace the student's own while this test runs, so that a
            composite part is scored on its own and a broken helper is not
            counted twice.
        calls: `{name: count}`: how many times the call must use each
            substituted function (e.g. `{"project_keys": 1}`: the keys are
            projected once, not at every step). The kernel counts the calls.
        timeout: seconds allowed for the call in the kernel.
    """

    name: str
    question: str
    points: float
    call: str
    inputs: Callable = lambda rng: {}
    expected: Callable = lambda inputs: None
    compare: Callable = None
    substitute: tuple = ()
    calls: dict = field(default_factory=dict)
    timeout: float = 20.0

    def seed(self, assignment_id):
        return zlib.crc32(f"{assignment_id}/{self.name}".encode())

    def judge(self, got, expected, inputs, calls=None):
        """`(passed, reason)` for the value `got`: `compare` (or `allclose()`), then the call counts."""
        passed, reason = (self.compare or allclose())(got, expected, inputs)
        if not passed:
            return passed, reason
        for name, wanted in self.calls.items():
            made = (calls or {}).get(name, 0)
            if made == 0:
                return False, f"the right values, but `{name}` was never called: use your `{name}` as the task says"
            if made != wanted:
                return False, (f"the right values, but `{name}` was called {made} time(s) instead of {wanted}: "
                               "use it as the task says (once, not at every step)")
        return True, ""


@dataclass
class Assignment:
    """The hidden tests of one assignment.

    Args:
        id: short id, also the CSV's assignment name (`A1`).
        notebook: stem of the notebook in `solutions/` and `assignments/`.
        questions: the graded parts, in CSV column order.
        tests: the hidden tests.
        kernel_setup: Python source run in the student's kernel before the
            calls (helpers named `_grader_*`; e.g. to rebuild a Keras layer
            from weights sent as inputs).
        references: functions whose source the kernel needs for `substitute`.
        cell_timeout, notebook_timeout: default limits in seconds.
        memory_mb: address-space limit of each process of the student's kernel.
    """

    id: str
    notebook: str
    questions: list
    tests: list
    kernel_setup: str = ""
    references: dict = field(default_factory=dict)
    cell_timeout: float = 60.0
    notebook_timeout: float = 600.0
    memory_mb: int = 6144

    def __post_init__(self):
        question_ids = [q.id for q in self.questions]
        if len(set(question_ids)) != len(question_ids):
            raise ValueError(f"Question ids must be unique. Received: {question_ids}")
        names = [t.name for t in self.tests]
        if len(set(names)) != len(names):
            raise ValueError(f"Test names must be unique in {self.id}. Received duplicates in: {names}")
        for test in self.tests:
            if test.question not in question_ids:
                raise ValueError(
                    f"Test {test.name!r} scores unknown question {test.question!r}. "
                    f"Received questions: {question_ids}"
                )
            if test.points <= 0:
                raise ValueError(f"Test {test.name!r} must be worth points. Received: points={test.points}")
            for name in test.substitute:
                if name not in self.references:
                    raise ValueError(
                        f"Test {test.name!r} substitutes {name!r}, which is not in `references`. "
                        f"Received references: {sorted(self.references)}"
                    )
            for name in test.calls:
                if name not in test.substitute:
                    raise ValueError(
                        f"Test {test.name!r} counts the calls of {name!r}, which only a substituted function "
                        f"can be. Received: substitute={tuple(test.substitute)}"
                    )
        for question_id in question_ids:
            if not any(t.question == question_id for t in self.tests):
                raise ValueError(f"Question {question_id!r} of {self.id} has no test.")

    def points(self, question_id=None):
        tests = self.tests if question_id is None else [t for t in self.tests if t.question == question_id]
        return float(sum(t.points for t in tests))

    def reference_sources(self):
        """Source code of the reference functions, for substitution in the kernel."""
        return {name: inspect.getsource(function) for name, function in self.references.items()}


# -- finding hidden tests --------------------------------------------------------


def default_tests_dir():
    return REPOSITORY_ROOT / "hidden_tests"


def load_assignment(name, tests_dir=None):
    """Loads `hidden_tests/<id>.py` for `name` (`A1`, `A1_bahdanau_attention` or a path)."""
    path = Path(name)
    if path.suffix == ".py" and path.is_file():
        return _load_module(path).ASSIGNMENT
    tests_dir = Path(tests_dir) if tests_dir is not None else default_tests_dir()
    if not tests_dir.is_dir():
        raise FileNotFoundError(
            f"No hidden tests folder at {tests_dir}. Pass --tests DIR (the folder with A1.py, ...)."
        )
    short = path.name.split("_")[0].removesuffix(".ipynb")
    candidate = tests_dir / f"{short}.py"
    if not candidate.is_file():
        available = sorted(p.stem for p in tests_dir.glob("*.py") if not p.name.startswith("_"))
        raise ValueError(f"No hidden tests for assignment {name!r}. Received: {name!r}; available: {available}")
    assignment = _load_module(candidate).ASSIGNMENT
    if assignment.id != short:
        raise ValueError(f"{candidate} defines assignment {assignment.id!r}, expected {short!r}.")
    return assignment


def _load_module(path):
    """Runs the hidden-test file `path`; returns it as a module, whose `ASSIGNMENT` is an `Assignment`.

    Raises:
        ValueError: naming the file, when running it fails (the error, and the line of the file where it
            was raised) or when it defines no `Assignment` as `ASSIGNMENT`.
    """
    spec = importlib.util.spec_from_file_location(f"hidden_tests_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the instructor's code may raise anything: name the file, not a traceback
        lines = [frame.lineno for frame in traceback.extract_tb(error.__traceback__)
                 if Path(frame.filename).resolve() == Path(path).resolve()]
        where = f" (raised at line {lines[-1]})" if lines else ""
        raise ValueError(f"The hidden tests {path} could not be loaded: {type(error).__name__}: {error}{where}. "
                         f"Fix the file. Received: {path}") from error
    if not hasattr(module, "ASSIGNMENT"):
        raise ValueError(f"{path} must define ASSIGNMENT. Received names: {sorted(vars(module))[:20]}")
    assignment = module.ASSIGNMENT
    if not isinstance(assignment, Assignment):
        raise ValueError(f"{path} must define ASSIGNMENT as an Assignment (from course_lib.grading.spec). "
                         f"Received: ASSIGNMENT = {repr(assignment)[:80]} (of type {type(assignment).__name__})")
    return module


# -- comparing values -----------------------------------------------------------


def allclose(rtol=1e-4, atol=1e-6, names=None):
    """A comparison for numbers, arrays and tuples of them.

    The reason given on failure names the shape or the size of the difference,
    never the expected values.
    """

    def compare(got, expected, inputs):
        return _compare(got, expected, rtol, atol, names, "result")

    return compare


def _returned_nothing(label):
    """The reason for a function that returned None where a value was due (a `return` left out)."""
    return f"{label}: the function returned None (is a `return` missing?)"


def _compare(got, expected, rtol, atol, names, label):
    if got is None and expected is not None:
        return False, _returned_nothing(label)
    if isinstance(expected, (tuple, list)) and not _is_numeric_sequence(expected):
        if not isinstance(got, (tuple, list)):
            return False, f"{label}: expected a tuple of {len(expected)} values, got {_describe(got)}"
        if len(got) != len(expected):
            return False, f"{label}: expected {len(expected)} values, got {len(got)}"
        for index, (g, e) in enumerate(zip(got, expected)):
            part = names[index] if names and index < len(names) else f"{label}[{index}]"
            ok, reason = _compare(g, e, rtol, atol, None, part)
            if not ok:
                return ok, reason
        return True, ""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return False, f"{label}: expected a dict, got {_describe(got)}"
        missing = [k for k in expected if k not in got]
        if missing:
            return False, f"{label}: missing keys {missing}"
        for key in expected:
            ok, reason = _compare(got[key], expected[key], rtol, atol, None, f"{label}[{key!r}]")
            if not ok:
                return ok, reason
        return True, ""
    if isinstance(expected, str):
        if not isinstance(got, str):
            return False, f"{label}: expected a string, got {_describe(got)}"
        return (got.strip().lower() == expected.strip().lower(), f"{label}: wrong answer")
    if _holds_text(got):
        # NumPy would read "0.69" as a number; the answer asked for is one.
        return False, f"{label}: expected numbers, got {_describe(got)}"
    try:
        got_array = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return False, f"{label}: expected numbers, got {_describe(got)}"
    expected_array = np.asarray(expected, dtype=float)
    if got_array.shape != expected_array.shape:
        return False, f"{label}: wrong shape {tuple(got_array.shape)}, expected {tuple(expected_array.shape)}"
    if not np.all(np.isfinite(got_array)):
        return False, f"{label}: contains NaN or infinity"
    close = np.isclose(got_array, expected_array, rtol=rtol, atol=atol)
    if not close.all():
        # Only how many entries are wrong: a difference would give away the
        # expected value of a single number.
        wrong = int((~close).sum())
        if close.size == 1:
            return False, f"{label}: differs from the reference"
        return False, f"{label}: values differ from the reference at {wrong} of {close.size} entries"
    return True, ""


def _holds_text(value):
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO" and any(isinstance(v, (str, bytes)) for v in value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return any(_holds_text(v) for v in value)
    return False


def _is_numeric_sequence(value):
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in value) and len(value) > 0


def _describe(value):
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, dict) and "__unencodable__" in value:
        return f"an object of type {value['__unencodable__']}"
    return f"a {type(value).__name__}"


def exact(compare_as=None):
    """Equality (after `compare_as`, e.g. `set` or `tuple`).

    `exact(int)` takes a whole number: an integer, or a float with no
    fractional part (`98432.0`), also as a 0-d array or tensor; a string, a
    bool or `98432.5` fails rather than being truncated by `int()`. `exact(set)` (or tuple, list) refuses a
    string, which `set()` would split into characters.
    """

    def compare(got, expected, inputs):
        if got is None and expected is not None:
            return False, _returned_nothing("result")
        got = as_scalar(got)
        if compare_as is int and not is_whole_number(got):
            return False, f"result: expected a whole number, got {_describe(got)}"
        if compare_as in (set, frozenset, tuple, list) and isinstance(got, (str, bytes, dict)):
            # set("Vb") would be {"V", "b"}: a string is not a collection of names.
            return False, f"result: expected a collection, got {_describe(got)}"
        try:
            a = compare_as(got) if compare_as else got
            b = compare_as(expected) if compare_as else expected
        except (TypeError, ValueError):
            return False, f"result: could not read {_describe(got)} as {compare_as.__name__}"
        a, b = _normalise(a), _normalise(b)
        if a == b:
            return True, ""
        if isinstance(a, tuple) and isinstance(b, tuple) and len(b) > 1:
            # How many entries are wrong, as `allclose` says; never which value was expected.
            if len(a) != len(b):
                return False, f"result: expected {len(b)} entries, got {len(a)}"
            wrong = sum(x != y for x, y in zip(a, b))
            return False, f"result: wrong at {wrong} of {len(b)} entries"
        return False, "result: wrong answer"

    return compare


def as_scalar(value):
    """A 0-d array or tensor (`np.asarray(98432)`, `keras.ops.sum(...)`) as its NumPy scalar, which
    `is_whole_number` and the quiz's checks read as the number it holds; anything else unchanged."""
    if hasattr(value, "__array__") and not isinstance(value, (np.ndarray, np.generic)):
        try:
            array = np.asarray(value)
        except Exception:  # not array-like after all: judged as it is
            return value
        return array[()] if array.ndim == 0 else value
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def is_integer(value):
    """An int or NumPy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_whole_number(value):
    """An integer, or a float with no fractional part (`98432.0`); not a bool or a string."""
    return is_integer(value) or (isinstance(value, (float, np.floating)) and float(value).is_integer())


def _normalise(value):
    if isinstance(value, (list, tuple)):
        return tuple(_normalise(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_normalise(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _normalise(v)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return _normalise(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, str):
        return value.strip().lower()
    return value
