"""The course's own answers, out of reach while a student's graded function runs.

Some graded functions have finished versions in the installed course: A3's metrics in
`course_lib.metrics.transliteration`, and the visible checks' own NumPy formulas (`common._additive_scores`,
`common._softmax_rows`) for A1's, A4's and A5's scores and softmax. `call_without_library_answers` runs a
student's function with them locked; the visible checks use it (A3's, and `common._call` for A1, A4 and A5), and
the hidden tests send its source into the student's kernel (`locked_answers_setup`) and run every call through
it (`with_locked_answers`).
"""

import dataclasses
import inspect
import re

# The visible checks' own formulas: the lecture's scores and a (masked) softmax.
CHECKS_ANSWERS = ("course_lib.grading.checks.common._additive_scores", "course_lib.grading.checks.common._softmax_rows")


def call_without_library_answers(functions, call, answers, error=RuntimeError):
    """Returns `call()`, which runs the student's `functions`, with the course's own answers out of reach.

    The answers are course functions, by dotted name (`"course_lib.metrics.transliteration.word_accuracy"`).
    For the call's duration each answer's code is swapped for code that records the use and raises, so
    every way to the function object fails alike: any alias, a default argument, a `functools.partial`,
    a list, a helper, a module imported only inside the call (each answer's module is imported first),
    and the object kept before a decoy was put in its module's place. Afterwards the code is put back,
    whatever happened, so nothing stays locked. (A copy of the answer's source is not caught.)

    The hidden tests send this function's source into the student's kernel (`locked_answers_setup`)
    instead of importing it there, where the submission could patch this module; so it imports
    what it needs itself.

    Args:
        functions: the student's function, or a list of them (named in the message).
        call: a function of no arguments that calls them and returns the result.
        answers: the answers' dotted names.
        error: the exception class raised when a function uses one (the visible checks' `CheckFailed`).

    Returns:
        What `call()` returns.

    Raises:
        `error`, naming the answer used, when a function uses one (after the call, whatever it returned).
    """
    import gc
    import importlib
    import types

    functions = functions if isinstance(functions, (list, tuple)) else [functions]
    used = []

    def locked_answer(*args, _grader_answer="", **kwargs):
        # Runs as the answer itself (its globals are the answer's module's, which hold the record below).
        record = _grader_answer_lock  # noqa: F821
        record["used"].append(_grader_answer)
        raise record["error"](f"{_grader_answer} is not available here: write it yourself")

    def original(dotted):
        """The answer's function object: its module's attribute, or, when that was replaced, the function of that
        module and name wherever it is kept."""
        module_name, _, name = dotted.rpartition(".")
        module = importlib.import_module(module_name)
        value = getattr(module, name, None)
        if not (isinstance(value, types.FunctionType) and value.__module__ == module_name and value.__qualname__ == name):
            value = next((candidate for candidate in gc.get_objects() if isinstance(candidate, types.FunctionType)
                          and candidate.__module__ == module_name and candidate.__qualname__ == name
                          and candidate.__globals__ is vars(module)), None)
        return value

    swapped = []
    try:
        for dotted in answers:
            function = original(dotted)
            if function is None:
                continue
            namespace = function.__globals__
            swapped.append((function, function.__code__, function.__kwdefaults__, namespace,
                            namespace.get("_grader_answer_lock")))
            namespace["_grader_answer_lock"] = {"used": used, "error": error}
            function.__code__ = locked_answer.__code__
            function.__kwdefaults__ = {"_grader_answer": dotted}
        try:
            result = call()
        except Exception:
            if not used:
                raise
            result = None
    finally:
        for function, code, kwdefaults, namespace, lock in reversed(swapped):
            function.__code__, function.__kwdefaults__ = code, kwdefaults
            if lock is None:
                namespace.pop("_grader_answer_lock", None)
            else:
                namespace["_grader_answer_lock"] = lock
    if used:
        names = " or ".join(getattr(function, "__name__", "function") for function in functions)
        raise error(f"your {names} calls {used[0]}, the course's own version of what this exercise asks for. The "
                    "exercise is to write it yourself: the grader makes the course's version unavailable, so this "
                    "answer would score zero.")
    return result


def locked_answers_setup(answers):
    """Source for a hidden test's `kernel_setup`: defines `_grader_without_library_answers(functions, call)`,
    which runs `call()` with `answers` locked (`call_without_library_answers`)."""
    return (f"_GRADER_ANSWERS = {tuple(answers)!r}\n\n{inspect.getsource(call_without_library_answers)}\n\n"
            "def _grader_without_library_answers(functions, call):\n"
            "    return call_without_library_answers(functions, call, _GRADER_ANSWERS)\n")


def with_locked_answers(tests):
    """The hidden `tests`, each call run through `_grader_without_library_answers` with the student's functions
    it names (`student.<name>`); needs `locked_answers_setup` in the assignment's `kernel_setup`."""
    locked = []
    for test in tests:
        names = sorted(set(re.findall(r"\bstudent\.(\w+)", test.call)))
        functions = "[" + ", ".join(f"student.{name}" for name in names) + "]"
        locked.append(dataclasses.replace(test, call=f"_grader_without_library_answers({functions}, lambda: {test.call})"))
    return locked
