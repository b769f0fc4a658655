"""The course's own answers, out of reach while a student's graded function runs.

Some graded functions have finished versions in the installed course: A3's metrics in
`course_lib.metrics.transliteration`, and the visible checks' own NumPy formulas (`common._additive_scores`,
`common._softmax_rows`) for A1's, A4's and A5's scores and softmax. `call_without_library_answers` runs a
student's function with them locked; the hidden tests send its source into the student's kernel
(`locked_answers_setup`) and run every call through it (`with_locked_answers`).
"""

import dataclasses
import inspect
import re

# The visible checks' own formulas: the lecture's scores and a (masked) softmax.
CHECKS_ANSWERS = ("course_lib.grading.checks.common._additive_scores", "course_lib.grading.checks.common._softmax_rows")


def call_without_library_answers(functions, call, answers, error=RuntimeError):
    """Returns `call()`, which runs the student's `functions`, with the course's own answers out of reach.

    The answers are course functions, by dotted name (`"course_lib.metrics.transliteration.word_accuracy"`).
    A student's function uses one when a name it (or a function of the same notebook it calls by name)
    looks up is bound to it, in its globals or its closure, wherever the answer is bound (a decoy put in
    its module's place changes nothing), or when it reaches one through a module during the call: for
    the call's duration every attribute of a loaded `course_lib` module that holds an answer raises.

    The hidden tests send this function's source into the student's kernel (`locked_answers_setup`)
    instead of importing it there, where the submission could patch this module; so it imports
    what it needs itself.

    Args:
        functions: the student's function, or a list of them.
        call: a function of no arguments that calls them and returns the result.
        answers: the answers' dotted names.
        error: the exception class raised when a function uses one (the visible checks' `CheckFailed`).

    Returns:
        What `call()` returns.

    Raises:
        `error`, naming the answer used, when a function uses one (after the call, whatever it returned).
    """
    import sys
    import types

    functions = functions if isinstance(functions, (list, tuple)) else [functions]
    used = []

    def answer_name(value):
        """The answer's dotted name when `value` is one of `answers`, else None."""
        if not isinstance(value, types.FunctionType):
            return None
        name = f"{value.__module__}.{value.__qualname__}"
        return name if name in answers else None

    def look_up(code, namespace, seen):
        for constant in code.co_consts:  # functions, lambdas and comprehensions defined inside
            if isinstance(constant, types.CodeType):
                look_up(constant, namespace, seen)
        for name in code.co_names:
            value = namespace.get(name)
            if answer_name(value):
                used.append(answer_name(value))
            elif isinstance(value, types.FunctionType) and value.__globals__ is namespace and id(value) not in seen:
                seen.add(id(value))  # a helper of the same notebook
                look_up(value.__code__, namespace, seen)

    for function in functions:
        if not isinstance(function, types.FunctionType):
            continue
        look_up(function.__code__, function.__globals__, {id(function)})
        for cell in function.__closure__ or ():
            try:
                if answer_name(cell.cell_contents):
                    used.append(answer_name(cell.cell_contents))
            except ValueError:  # an empty cell
                pass

    def locked(name):
        def answer(*args, **kwargs):
            used.append(name)
            raise error(f"{name} is not available here: write it yourself")

        return answer

    swapped = []
    for module in list(sys.modules.values()):
        if not (getattr(module, "__name__", "") or "").startswith("course_lib"):
            continue
        for attribute, value in list(vars(module).items()):
            if answer_name(value):
                swapped.append((module, attribute, value))
                setattr(module, attribute, locked(answer_name(value)))
    try:
        try:
            result = call()
        except Exception:
            if not used:
                raise
            result = None
    finally:
        for module, attribute, value in swapped:
            setattr(module, attribute, value)
    if used:
        name = used[0]
        names = " or ".join(getattr(function, "__name__", "function") for function in functions)
        raise error(f"your {names} calls {name}, the course's own version of what this exercise asks for. The "
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
