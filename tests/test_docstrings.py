"""Docstrings name the arguments the code takes.

Every Keras layer, model, loss and metric of `course_lib` documents each constructor argument under `Args:` and
each argument of `call` under `Call arguments:` (Keras's own style); every public function or method that has an
`Args:` section lists exactly its parameters, none missing and none left over from an older signature.
"""

import importlib
import inspect
import pkgutil
import re

import keras
import pytest

import course_lib

SECTION = re.compile(r"^(Args|Call arguments|Returns|Raises|Example|Examples):\s*$")
# `name:`, `name (type):` or `a, b, c:` at the section's own indentation; `**kwargs:` too.
ENTRY = re.compile(r"^((?:\*{0,2}\w+)(?:\s*,\s*\*{0,2}\w+)*)\s*(?:\([^)]*\))?\s*:")
KERAS_BASES = (keras.layers.Layer, keras.losses.Loss, keras.metrics.Metric)


def documented(docstring, section):
    """The names a docstring's section lists, or None when it has no such section."""
    lines = inspect.cleandoc(docstring or "").splitlines()
    names, inside, indent = None, False, None
    for line in lines:
        if SECTION.match(line):
            inside = line.startswith(section + ":")
            if inside:
                names, indent = [], None
            continue
        if not inside or not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth == 0:  # prose after the section ends it
            inside = False
            continue
        indent = depth if indent is None else indent
        match = ENTRY.match(line.strip())
        if depth == indent and match:
            names += [name.strip().lstrip("*") for name in match.group(1).split(",")]
    return names


def parameters(function):
    """Named parameters (not self, cls, *args or **kwargs)."""
    return [
        p.name for p in inspect.signature(function).parameters.values()
        if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def public_objects():
    modules = [importlib.import_module(info.name)
               for info in pkgutil.walk_packages(course_lib.__path__, "course_lib.")
               if not info.name.endswith("__main__")]
    seen = set()
    for module in modules:
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__ or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{module.__name__}.{name}", obj


OBJECTS = sorted(public_objects(), key=lambda item: item[0])
KERAS_CLASSES = [(name, obj) for name, obj in OBJECTS if inspect.isclass(obj) and issubclass(obj, KERAS_BASES)]


def test_the_parser_reads_a_keras_style_docstring():
    docstring = """Summary.

    Args:
        units: size,
            continued on a second line: not a name.
        source_vocab_size, target_vocab_size: two at once.
        **kwargs: the rest.

    Call arguments:
        inputs: `(batch, length)`.

    Returns:
        `(batch, units)`.
    """
    assert documented(docstring, "Args") == ["units", "source_vocab_size", "target_vocab_size", "kwargs"]
    assert documented(docstring, "Call arguments") == ["inputs"]
    assert documented("Summary only.", "Args") is None


def test_every_keras_class_is_found():
    names = {name.rsplit(".", 1)[1] for name, _ in KERAS_CLASSES}
    assert {"BahdanauAttention", "AttentionGRUDecoder", "Seq2Seq", "MaskedTokenLoss", "MaskedTokenAccuracy"} <= names


@pytest.mark.parametrize("name, cls", KERAS_CLASSES, ids=[name for name, _ in KERAS_CLASSES])
def test_keras_classes_document_their_arguments(name, cls):
    docstring = cls.__dict__.get("__doc__")
    if "__init__" in cls.__dict__:
        listed = documented(docstring, "Args")
        assert listed is not None, f"{name} has no Args: section"
        real = parameters(cls.__init__)
        assert sorted(set(real) - set(listed)) == [], f"{name}: constructor arguments missing from Args:"
        assert sorted(set(listed) - set(real) - {"kwargs"}) == [], f"{name}: Args: names no such argument"
    if issubclass(cls, keras.layers.Layer) and "call" in cls.__dict__:
        listed = documented(docstring, "Call arguments")
        assert listed is not None, f"{name} has no Call arguments: section"
        assert sorted(set(parameters(cls.call)) ^ set(listed)) == [], f"{name}: Call arguments: differ from call"


def functions_with_args():
    for name, obj in OBJECTS:
        members = [(name, obj)] if inspect.isfunction(obj) else []
        if inspect.isclass(obj):
            for member_name, member in obj.__dict__.items():
                function = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if inspect.isfunction(function) and not member_name.startswith("_") and member_name != "call":
                    members.append((f"{name}.{member_name}", function))
        for member_name, function in members:
            if documented(function.__doc__, "Args") is not None:
                yield member_name, function


FUNCTIONS = list(functions_with_args())


def test_functions_with_an_args_section_exist():
    assert len(FUNCTIONS) > 50, len(FUNCTIONS)


@pytest.mark.parametrize("name, function", FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_args_sections_match_signatures(name, function):
    signature = inspect.signature(function).parameters.values()
    variadic = {p.name for p in signature if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    listed = set(documented(function.__doc__, "Args")) - variadic  # `**kwargs:` may be documented, or not
    real = set(parameters(function))
    assert sorted(real - listed) == [], f"{name}: parameters missing from Args:"
    assert sorted(listed - real) == [], f"{name}: Args: names no such parameter"
