"""Crafted faulty submissions, made from a solution notebook.

An instructor (and the project's tests and benchmark) can use them to check
that a grader survives bad submissions and that hidden tests take off exactly
the points of the part a mistake breaks:

    from course_lib.grading import faults
    text = faults.make("A1", "infinite-loop", "solutions/A1_bahdanau_attention.ipynb")

Each fault returns the text of the file a student would hand in (usually a
notebook, sometimes not). `FAULTS` lists the generic ones (requirement: one
bad submission never stops the batch); `WRONG_PARTS[assignment]` lists
plausible mistakes in one graded part, and ways around a part's rules (A2's
`unlocks-library-decoder` calls the library's decoder, which must score zero).

The generic faults work on any solution notebook, so a new assignment can be
checked before it has any specifics: "syntax-error" breaks the `def` line of
the first graded function (a top-level `def` in a cell with a solution
region, else the first `def` of any code cell), "deleted-cell" deletes the
cell that defines it and "renamed-function" renames it. `SPECIFIC[assignment]`
overrides them with a chosen function (A1). "patches-everything" needs a wrong
answer to hide, so it exists only where `WRONG_PARTS` has one. `names()` lists
only the faults `make()` can build:

    for fault in faults.names("A6", "solutions/A6_my_topic.ipynb"):
        print(fault, "-", faults.describe("A6", fault))
        Path(f"submissions/{fault}.ipynb").write_text(faults.make("A6", fault, "solutions/A6_my_topic.ipynb"))
"""

import copy
import re
import textwrap

import nbformat


def _insert(code, position=2):
    def transform(notebook, targets):
        notebook.cells.insert(position, nbformat.v4.new_code_cell(textwrap.dedent(code).strip()))
        return notebook

    return transform


def _replace(old, new, count=1):
    def transform(notebook, targets):
        for cell in notebook.cells:
            if old in cell.source:
                cell.source = cell.source.replace(old, new, count)
                return notebook
        raise ValueError(f"Fault pattern not found in the notebook. Received: {old!r}")

    return transform


def _delete_cell_defining(name):
    def transform(notebook, targets):
        keep = [c for c in notebook.cells if f"def {name}(" not in c.source]
        if len(keep) == len(notebook.cells):
            raise ValueError(f"No cell defines {name!r}.")
        notebook.cells = keep
        return notebook

    return transform


DEFINITION = re.compile(r"^def\s+(?P<name>[A-Za-z_]\w*)\s*\(", re.M)
SOLUTION_MARK = re.compile(r"#\s*(BEGIN SOLUTION|SOLUTION CELL)\b", re.I)


def _first_graded_definition(notebook):
    """`(cell, name)` of the first graded function: a top-level `def` in a cell with a solution region
    (or tagged `solution`), else the first top-level `def` of any code cell."""
    code = [cell for cell in notebook.cells if cell.get("cell_type") == "code"]
    graded = [cell for cell in code
              if SOLUTION_MARK.search(cell.source) or "solution" in (cell.get("metadata", {}).get("tags") or [])]
    for cells in (graded, code):
        for cell in cells:
            match = DEFINITION.search(cell.source)
            if match:
                return cell, match
    raise ValueError(
        "No code cell of the notebook defines a function (a line starting with `def name(`). "
        f"Received: {len(code)} code cell(s)"
    )


def _break_first_definition(notebook, targets):
    cell, match = _first_graded_definition(notebook)
    end = cell.source.find("\n", match.start())
    end = len(cell.source) if end < 0 else end
    line = cell.source[match.start():end]
    broken = line.rstrip()[:-1] if line.rstrip().endswith(":") else line.replace("(", "((", 1)
    cell.source = cell.source[:match.start()] + broken + cell.source[end:]
    return notebook


def _delete_first_defining_cell(notebook, targets):
    cell, _ = _first_graded_definition(notebook)
    notebook.cells = [c for c in notebook.cells if c is not cell]
    return notebook


def _rename_first_function(notebook, targets):
    cell, match = _first_graded_definition(notebook)
    name = match.group("name")
    cell.source = cell.source[:match.start()] + f"def {name}_v2(" + cell.source[match.end():]
    return notebook


def _chain(*transforms):
    def transform(notebook, targets):
        for step in transforms:
            notebook = step(notebook, targets)
        return notebook

    return transform


def _not_a_notebook(notebook, targets):
    return "This is my homework, I wrote it in a text file.\n"


def _truncated_json(notebook, targets):
    return nbformat.writes(notebook)[:500]


def _no_cells(notebook, targets):
    notebook.cells = []
    return notebook


def _writes_results(notebook, targets):
    csv_path, feedback_dir = targets.get("csv", "grades.csv"), targets.get("feedback", "feedback")
    code = f"""
    # tries to write its own grade, now and from a process that outlives the kernel
    import os, subprocess, sys
    rows = "submission,total\\ncheater,999\\n"
    for path in [{csv_path!r}, os.path.join({feedback_dir!r}, "writes-grades.md")]:
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            open(path, "w").write(rows)
        except OSError as error:
            print("could not write", path, error)
    script = "import time\\nfor _ in range(600):\\n    open({csv_path!r}, 'w').write({{rows!r}})\\n    time.sleep(0.2)\\n".format(rows=rows)
    subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    open("junk.bin", "wb").write(b"0" * 10_000_000)
    """
    return _insert(code, position=len(notebook.cells))(notebook, targets)


PATCH_EVERYTHING = """
# tries to make every check pass without doing the work
import builtins, json, sys, types
import numpy as np
from course_lib.grading import checks
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.shape(a), dtype=bool)
np.testing.assert_allclose = lambda *args, **kwargs: None
for name in dir(checks):
    if name.startswith("check_"):
        setattr(checks, name, lambda *args, **kwargs: None)
builtins.AssertionError = type("NeverRaised", (Exception,), {})
sys.modules["keras"] = types.SimpleNamespace(ops=types.SimpleNamespace(softmax=lambda x, axis=-1: x))
"""

FORGE_RESULTS = """
# replaces whatever the hidden tests write with claims of success
import json
_real_dump = json.dump
def _forged_dump(results, handle, *args, **kwargs):
    forged = {name: {"status": "ok", "value": "PASS"} for name in results}
    return _real_dump(forged, handle, *args, **kwargs)
json.dump = _forged_dump
"""

FORGE_RUN_REPORT = """
# overwrites the runner's report with one the grader cannot read, then stops the runner
import json, os, signal
with open("../private/run.json", "w") as handle:
    json.dump({"cells": {"x": {"status": "ok"}}}, handle)
os.kill(os.getppid(), signal.SIGKILL)
"""

UNLOCK_LIBRARY_DECODER = """
# brings back the library's decoder methods that the grader locks, and empties the checks' list of locked methods
from course_lib.grading import checks
checks.A2_LOCKED_METHODS.clear()


def unlocked(decoder):
    for name in ("step", "call", "__call__", "_recur", "_scheduled_sampling"):
        decoder.__dict__.pop(name, None)
    return decoder
"""

FAULTS = {
    "infinite-loop": ("a cell that never ends", _insert("while True:\n    pass")),
    "ignores-interrupt": (
        "a loop that swallows the interrupt",
        _insert("import time\nwhile True:\n    try:\n        time.sleep(0.5)\n    except KeyboardInterrupt:\n        pass"),
    ),
    "raises-on-import": ("imports a package that does not exist, first", _insert("import package_that_does_not_exist", position=1)),
    "syntax-error": ("a syntax error in a graded cell", _break_first_definition),
    "deleted-cell": ("deleted a graded cell", _delete_first_defining_cell),
    "renamed-function": ("renamed a graded function", _rename_first_function),
    "sys-exit": ("calls sys.exit()", _insert("import sys\nsys.exit(3)")),
    "os-exit": ("kills its own kernel with os._exit()", _insert("import os\nos._exit(1)")),
    "prints-megabytes": ("prints 50 MB", _insert("for _ in range(50):\n    print('x' * 1_000_000)")),
    "fills-memory": ("allocates until memory runs out", _insert("hoard = [bytearray(2**28) for _ in range(10_000)]")),
    "writes-files": ("writes to the grades and feedback files and leaves a writer process behind", _writes_results),
    "not-a-notebook": ("a text file with an .ipynb name", _not_a_notebook),
    "truncated-json": ("a notebook cut in the middle", _truncated_json),
    "no-cells": ("every cell deleted", _no_cells),
    "patches-everything": ("a wrong answer, with numpy, assert, the checks and keras patched", None),
    "forges-results": ("rewrites the hidden tests' results file", _insert(FORGE_RESULTS, position=3)),
    "forges-run-report": ("writes a malformed run report and kills its runner", _insert(FORGE_RUN_REPORT, position=3)),
}

# Per-assignment specifics of the generic faults, and wrong answers in one part.
A1_SPECIFIC = {
    "syntax-error": _replace("def softmax(scores):", "def softmax(scores)"),
    "deleted-cell": _delete_cell_defining("context_vector"),
    "renamed-function": _replace("def apply_mask(scores, mask):", "def apply_mask_v2(scores, mask):"),
}

WRONG_PARTS = {
    "A1": {
        "softmax-wrong-axis": (
            "softmax over the batch axis",
            _chain(
                _replace("np.max(scores, axis=-1, keepdims=True)", "np.max(scores, axis=0, keepdims=True)"),
                _replace("np.sum(exponentials, axis=-1, keepdims=True)", "np.sum(exponentials, axis=0, keepdims=True)"),
            ),
        ),
        "mask-ignored": ("apply_mask returns the scores unchanged", _replace("return np.where(mask, scores, checks.NEGATIVE_SCORE)", "return scores")),
        "tanh-missing": ("no tanh in the score", _replace("np.tanh(projected_keys + projected_query[:, None, :])", "(projected_keys + projected_query[:, None, :])")),
        "keys-recomputed": (
            "recomputes the keys inside the loop with the wrong matrix",
            _replace("scores = attention_scores(decoder_states[:, step], keys, U_att, v_att)",
                     "keys = project_keys(values, U_att)\n        scores = attention_scores(decoder_states[:, step], keys, U_att, v_att)"),
        ),
        "keys-every-step": (
            "projects the keys (rightly) again at every step instead of once",
            _replace("scores = attention_scores(decoder_states[:, step], keys, U_att, v_att)",
                     "keys = project_keys(values, W_att)\n        scores = attention_scores(decoder_states[:, step], keys, U_att, v_att)"),
        ),
    },
    "A2": {
        "calls-library-step": (
            "returns the library's decoder.step instead of writing the step",
            _replace("    embedded = decoder.embedding(previous_tokens)  # (batch, embedding_dim)",
                     "    return decoder.step(previous_tokens, state, memory)\n"
                     "    embedded = decoder.embedding(previous_tokens)  # (batch, embedding_dim)"),
        ),
        "attends-with-new-state": (
            "updates the state first and attends with s_t instead of s_{t-1}",
            _replace("    cell_input = ops.concatenate([embedded, context], axis=-1)",
                     "    state, _ = decoder.cell(ops.concatenate([embedded, context], axis=-1), state)\n"
                     "    context, weights = decoder.attention(state, memory[\"values\"], mask=memory[\"mask\"], "
                     "projected_keys=memory[\"keys\"])\n"
                     "    cell_input = ops.concatenate([embedded, context], axis=-1)"),
        ),
        "unlocks-library-decoder": (
            "undoes the grader's lock on the library's decoder (deleting the locked attributes, emptying "
            "checks.A2_LOCKED_METHODS), then calls decoder.step and decoder(...)",
            _chain(
                _insert(UNLOCK_LIBRARY_DECODER, position=3),
                _replace("    embedded = decoder.embedding(previous_tokens)  # (batch, embedding_dim)",
                         "    return unlocked(decoder).step(previous_tokens, state, memory)"),
                _replace("    state = initial_state\n",
                         "    return unlocked(decoder)(target_inputs, memory[\"values\"], initial_state, "
                         "source_mask=memory[\"mask\"])\n"),
            ),
        ),
        "ignores-mask": (
            "attends without the source mask, so padded positions get weight",
            _replace('mask=memory["mask"], projected_keys=memory["keys"]', 'mask=None, projected_keys=memory["keys"]'),
        ),
        "keys-projected-in-step": (
            "leaves out projected_keys, so the attention projects the keys again at every step",
            _replace('mask=memory["mask"], projected_keys=memory["keys"]', 'mask=memory["mask"]'),
        ),
    },
}

WRONG_PARTS["A3"] = {
    "calls-library-metrics": (
        "hands word accuracy, top-k accuracy and edit distance to the library's own functions (an import under "
        "another name, an import inside the function, a default argument), without the visible checks",
        _chain(
            _replace("    return float(np.mean([prediction in accepted for prediction, accepted in zip(predictions, "
                     "references)]))",
                     "    return library_accuracy(predictions, references)"),
            _replace("checks.check_word_accuracy(word_accuracy)",
                     "from course_lib.metrics.transliteration import word_accuracy as library_accuracy"),
            _replace("    hits = [any(candidate in accepted for candidate in cands[:k]) for cands, accepted in "
                     "zip(candidates, references)]\n    return float(np.mean(hits))",
                     "    from course_lib.metrics.transliteration import top_k_accuracy\n"
                     "    return top_k_accuracy(candidates, references, k)"),
            _replace("checks.check_top_k_accuracy(top_k_accuracy)", ""),
            _replace("def edit_distance(a, b):\n",
                     "import course_lib.metrics.transliteration\n\n\n"
                     "def edit_distance(a, b, _implementation=course_lib.metrics.transliteration.edit_distance):\n"),
            _replace("    previous = list(range(len(b) + 1))", "    return _implementation(a, b)"),
            _replace("checks.check_edit_distance(edit_distance)", ""),
        ),
    ),
}

SPECIFIC = {"A1": A1_SPECIFIC}


def _transform(assignment_id, fault):
    """The transform that builds `fault` for an assignment, or None when it cannot be built."""
    if fault in WRONG_PARTS.get(assignment_id, {}):
        return WRONG_PARTS[assignment_id][fault][1]
    specific = SPECIFIC.get(assignment_id, {}).get(fault)
    if specific is not None or fault not in FAULTS:
        return specific
    if fault == "patches-everything" and WRONG_PARTS.get(assignment_id):
        # The first wrong answer, hidden behind patched comparisons.
        first = next(iter(WRONG_PARTS[assignment_id].values()))[1]
        return _chain(first, _insert(PATCH_EVERYTHING, position=3))
    return FAULTS[fault][1]


def names(assignment_id, solution_path=None):
    """The faults `make()` can build for an assignment: the generic ones, then its wrong parts.

    With `solution_path`, each is built once and those that fail on that
    notebook (e.g. "syntax-error" in a notebook without a `def`) are left out.
    """
    found = [f for f in list(FAULTS) + list(WRONG_PARTS.get(assignment_id, {})) if _transform(assignment_id, f)]
    if solution_path is None:
        return found
    buildable = []
    for fault in found:
        try:
            make(assignment_id, fault, solution_path)
        except ValueError:
            continue
        buildable.append(fault)
    return buildable


def make(assignment_id, fault, solution_path, targets=None):
    """Returns the text of the faulty submission `fault` for an assignment.

    Raises ValueError for a fault that is unknown, or that cannot be built for
    this assignment or notebook.
    """
    targets = targets or {}
    known = list(FAULTS) + list(WRONG_PARTS.get(assignment_id, {}))
    if fault not in known:
        raise ValueError(f"Unknown fault. Received: fault={fault!r}; known: {names(assignment_id)}")
    transform = _transform(assignment_id, fault)
    if transform is None:
        raise ValueError(
            f"Fault {fault!r} needs a wrong answer to hide: add one to WRONG_PARTS[{assignment_id!r}] "
            f"in course_lib/grading/faults.py. Received: assignment_id={assignment_id!r}"
        )
    solution = nbformat.read(solution_path, as_version=4)
    notebook = copy.deepcopy(solution)
    try:
        result = transform(notebook, targets)
    except ValueError as error:
        raise ValueError(f"Fault {fault!r} cannot be built from {solution_path}: {error}") from None
    if isinstance(result, str):
        return result
    for index, cell in enumerate(result.cells):
        cell.setdefault("id", f"fault-{index}")
    return nbformat.writes(result)


def describe(assignment_id, fault):
    """One line saying what the fault does, e.g. "syntax-error" -> "a syntax error in a graded cell"."""
    if fault in WRONG_PARTS.get(assignment_id, {}):
        return WRONG_PARTS[assignment_id][fault][0]
    if fault == "patches-everything" and WRONG_PARTS.get(assignment_id):
        first = next(iter(WRONG_PARTS[assignment_id].values()))[0]
        return f"a wrong answer ({first}), with numpy, assert, the checks and keras patched"
    if fault not in FAULTS:
        raise ValueError(f"Unknown fault. Received: fault={fault!r}; known: {names(assignment_id)}")
    return FAULTS[fault][0]


__all__ = ["FAULTS", "WRONG_PARTS", "describe", "make", "names"]
