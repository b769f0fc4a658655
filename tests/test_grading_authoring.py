"""Student notebooks generated from solutions: stubs, hints, up to date, no leaks."""

import shutil

import nbformat
import pytest

from course_lib.grading import authoring
from private_copy import needs_private_copy

SOLUTION_CELL = '''def softmax(scores):
    """Docstring stays."""
    # BEGIN SOLUTION
    # HINT: subtract the maximum
    shifted = scores - scores.max(-1, keepdims=True)
    return shifted
    # END SOLUTION


checks.check_softmax(softmax)'''


def test_region_becomes_an_indented_stub_with_the_hint():
    source, removed = authoring.strip_regions(SOLUTION_CELL)
    assert 'raise NotImplementedError("subtract the maximum")' in source
    assert '    # YOUR CODE HERE\n    raise NotImplementedError' in source
    assert '"""Docstring stays."""' in source and "checks.check_softmax(softmax)" in source
    assert "shifted" not in source
    assert any("shifted =" in line for line in removed)
    compile(source, "<stub>", "exec")


def test_region_without_hint_gets_a_generic_one():
    source, _ = authoring.strip_regions("x = 1\n# BEGIN SOLUTION\nanswer = 42\n# END SOLUTION\n")
    assert source.splitlines()[-1] == f'raise NotImplementedError("{authoring.DEFAULT_HINT}")'


@pytest.mark.parametrize(
    "source, message",
    [
        ("# BEGIN SOLUTION\nx = 1\n", "has no `# END SOLUTION`"),
        ("x = 1\n# END SOLUTION\n", "without a BEGIN"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "nested"),
    ],
)
def test_malformed_regions_are_errors(source, message):
    with pytest.raises(ValueError, match=message):
        authoring.strip_regions(source)


def test_whole_cells_markdown_answers_and_instructor_cells():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("# SOLUTION CELL: build the model\nmodel = make_model()"),
        nbformat.v4.new_markdown_cell("The answer is 42.", metadata={"tags": ["solution"]}),
        nbformat.v4.new_code_cell("secret = 1", metadata={"tags": ["instructor-only"]}),
        nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output("stream", text="1\n")], execution_count=3),
    ]
    student, removed = authoring.make_student_notebook(notebook)
    assert [c.cell_type for c in student.cells] == ["code", "markdown", "code"]
    assert student.cells[0].source == '# YOUR CODE HERE\nraise NotImplementedError("build the model")'
    assert student.cells[1].source == authoring.ANSWER_PLACEHOLDER
    assert "tags" not in student.cells[1].metadata
    assert student.cells[2].outputs == [] and student.cells[2].execution_count is None
    assert "model = make_model()" in removed and "secret = 1" in removed


def test_check_notices_a_stale_student_notebook(tmp_path):
    solutions, assignments = tmp_path / "solutions", tmp_path / "assignments"
    solutions.mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("# BEGIN SOLUTION\nx = 1\n# END SOLUTION")]
    path = solutions / "A9_demo.ipynb"
    nbformat.write(notebook, path)
    assert not authoring.is_up_to_date(path)
    authoring.generate(path)
    assert (assignments / "A9_demo.ipynb").is_file() and authoring.is_up_to_date(path)
    notebook.cells[0].source = "# BEGIN SOLUTION\nx = 2\n# END SOLUTION\ny = 3"
    nbformat.write(notebook, path)
    assert not authoring.is_up_to_date(path)


SOLUTIONS = authoring.solution_notebooks()


@needs_private_copy
def test_there_are_solution_notebooks():
    names = {p.stem for p in SOLUTIONS}
    assert {"A1_bahdanau_attention", "Q_self_test_quiz"} <= names, names


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_assignments_are_up_to_date_with_solutions(solution):
    assert authoring.is_up_to_date(solution), (
        f"{authoring.student_path(solution)} is out of date: run `course-lib assign {solution}`"
    )


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_no_solution_code_reaches_the_student_notebook(solution):
    solution_notebook = nbformat.read(solution, as_version=4)
    _, removed = authoring.make_student_notebook(solution_notebook)
    student_text = authoring.student_path(solution).read_text()
    student = nbformat.reads(student_text, as_version=4)
    student_lines = {line.strip() for cell in student.cells for line in cell.source.splitlines()}
    solution_marked = sum(("BEGIN SOLUTION" in c.source or authoring.is_solution_cell(c)) for c in solution_notebook.cells)
    assert solution_marked > 0, "a solution notebook without solution regions"
    leaked = [
        line.strip() for line in removed
        if line.strip() and not line.strip().startswith("#") and len(line.strip()) > 3
        and line.strip() not in {"return", "pass", ")", "]", "}", "},", "),"} and line.strip() in student_lines
    ]
    assert not leaked, f"solution lines found in the student notebook: {leaked[:5]}"
    assert "BEGIN SOLUTION" not in student_text and "END SOLUTION" not in student_text
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
    assert student_text.count("NotImplementedError") >= solution_marked


@needs_private_copy
def test_command_line_assign_check_links_and_grade(tmp_path, capsys):
    from course_lib.cli import main

    assert main(["assign", "--check"]) == 0
    assert main(["assign", "--links"]) == 0
    links = capsys.readouterr().out
    assert "https://colab.research.google.com/github/" in links and "/assignments/A1_bahdanau_attention.ipynb" in links
    assert main(["assign", "--links", str(tmp_path / "nope.ipynb")]) == 2  # it printed a link to nothing
    assert f"No such solution notebook: {tmp_path / 'nope.ipynb'}" in capsys.readouterr().err
    junk = tmp_path / "junk.ipynb"
    junk.write_text("not json")
    out = tmp_path / "grades.csv"
    assert main(["grade", "A1", str(junk), "--out", str(out), "--feedback", str(tmp_path / "feedback")]) == 0
    assert "not graded: not a Jupyter notebook" in out.read_text()
    assert main(["grade", "A9", str(junk)]) == 2
    assert "No hidden tests for assignment 'A9'" in capsys.readouterr().err


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_a_top_level_exercise_never_comes_before_a_function_of_its_cell(solution):
    """A student who cannot answer one part of a cell must still get its functions defined."""
    student = nbformat.read(authoring.student_path(solution), as_version=4)
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        raises = [n for n, line in enumerate(lines) if line.startswith("raise NotImplementedError")]
        defs = [n for n, line in enumerate(lines) if line.startswith("def ")]
        if raises and defs:
            assert raises[0] > defs[-1], (
                f"cell {index}: a top-level TODO comes before `{lines[defs[-1]].strip()}`, which a student "
                "who skips that TODO would never define; put the solution region after the functions"
            )


A6_SCRIPT = '''# %% [markdown]
# # A6 · A made-up assignment
# %%
import numpy as np
# %%
def helper(x):
    return x + 1
# %%
def softmax(scores):
    """Softmax over the last axis."""
    # BEGIN SOLUTION
    shifted = scores - scores.max(axis=-1, keepdims=True)
    return np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    # END SOLUTION


def double(x):
    return 2 * x
# %%
print(softmax(np.zeros((2, 3))))
'''


def _made_up_assignment(tmp_path, script=A6_SCRIPT):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("make_notebook", root / "tools" / "make_notebook.py")
    make_notebook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_notebook)
    (tmp_path / "a6.py").write_text(script)
    path = tmp_path / "A6_made_up.ipynb"
    make_notebook.build(tmp_path / "a6.py", path)
    return path


def _code(text):
    return [c.source for c in nbformat.reads(text, as_version=4).cells if c.cell_type == "code"]


def test_generic_faults_work_on_a_new_assignment(tmp_path):
    from course_lib.grading import faults

    solution = _made_up_assignment(tmp_path)
    original = _code(solution.read_text())
    listed = faults.names("A6", solution)
    assert listed == [f for f in faults.FAULTS if f != "patches-everything"]
    assert faults.names("A6") == listed
    for fault in listed:
        assert faults.describe("A6", fault)
        faults.make("A6", fault, solution, {"csv": str(tmp_path / "g.csv"), "feedback": str(tmp_path / "f")})
    # The first graded function is the one in the cell with a solution region, not `helper`.
    broken = _code(faults.make("A6", "syntax-error", solution))
    [cell] = [c for c in broken if "def softmax" in c]
    assert "def softmax(scores)\n" in cell
    with pytest.raises(SyntaxError):
        compile(cell, "<cell>", "exec")
    deleted = _code(faults.make("A6", "deleted-cell", solution))
    assert len(deleted) == len(original) - 1 and not any("def softmax" in c for c in deleted)
    assert any("def helper" in c for c in deleted)
    renamed = "\n".join(_code(faults.make("A6", "renamed-function", solution)))
    assert "def softmax_v2(scores):" in renamed and "def softmax(" not in renamed and "print(softmax(" in renamed


@needs_private_copy
def test_faults_that_cannot_be_built_are_not_listed_and_say_why(tmp_path):
    from course_lib.grading import faults

    solution = _made_up_assignment(tmp_path)
    with pytest.raises(ValueError, match="needs a wrong answer.*Received: assignment_id='A6'"):
        faults.make("A6", "patches-everything", solution)
    with pytest.raises(ValueError, match="Unknown fault. Received: fault='nope'"):
        faults.make("A6", "nope", solution)
    # A notebook without any function: the three function faults are left out, and say why.
    no_functions = _made_up_assignment(tmp_path, "# %%\nanswer = 42\n")
    listed = faults.names("A6", no_functions)
    assert not {"syntax-error", "deleted-cell", "renamed-function"} & set(listed) and "infinite-loop" in listed
    with pytest.raises(ValueError, match="No code cell of the notebook defines a function"):
        faults.make("A6", "renamed-function", no_functions)
    # A1 keeps its own versions, and assignments with a wrong answer get "patches-everything".
    assert faults.names("A1") == list(faults.FAULTS) + list(faults.WRONG_PARTS["A1"])
    assert "patches-everything" in faults.names("A2")
    a1 = authoring.REPOSITORY_ROOT / "solutions" / "A1_bahdanau_attention.ipynb"
    assert "def apply_mask_v2(scores, mask):" in faults.make("A1", "renamed-function", a1)


# -- never replacing a student's work ----------------------------------------------


def _demo_solution(tmp_path, name="A9_demo", answer="x = 1"):
    """A solution notebook in `tmp_path/solutions/` (a set-up cell, then one solution region); its path."""
    from course_lib import course_repository

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(course_repository.setup_cell_source()),
        nbformat.v4.new_code_cell(f"# BEGIN SOLUTION\n# HINT: set x\n{answer}\n# END SOLUTION\nprint(x)"),
    ]
    path = tmp_path / "solutions" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def _edit_stub(student_path, line="STUDENT_WORK = 1"):
    """What a student does: adds a line to the stub cell and saves."""
    notebook = nbformat.read(student_path, as_version=4)
    stub = next(cell for cell in notebook.cells if "NotImplementedError" in cell.source)
    stub.source += f"\n{line}"
    nbformat.write(notebook, student_path)


def test_assign_refuses_to_replace_an_edited_student_notebook(tmp_path, capsys):
    from course_lib.cli import main

    solution = _demo_solution(tmp_path)
    student = authoring.student_path(solution)
    assert main(["assign", str(solution)]) == 0 and student.is_file()
    # Regenerating an untouched notebook, after the solution changed, still works.
    _demo_solution(tmp_path, answer="x = 2")
    assert main(["assign", str(solution)]) == 0 and authoring.is_up_to_date(solution)
    capsys.readouterr()
    _edit_stub(student)
    edited = student.read_text()
    assert main(["assign", str(solution)]) == 2
    err = capsys.readouterr().err
    assert f"Refusing to replace {student}" in err and "changed since" in err and "--force" in err
    assert student.read_text() == edited  # the student's work is still there
    with pytest.raises(ValueError, match="changed since `course-lib assign` wrote it"):
        authoring.generate(solution)
    assert student.read_text() == edited
    assert main(["assign", "--force", str(solution)]) == 0
    assert "STUDENT_WORK" not in student.read_text() and authoring.is_up_to_date(solution)
    with pytest.raises(SystemExit):
        main(["assign", "--help"])
    assert "--force" in capsys.readouterr().out


def test_running_a_cell_counts_as_work_but_a_refreshed_set_up_cell_does_not(tmp_path):
    from course_lib import course_repository

    solution = _demo_solution(tmp_path)
    student = authoring.generate(solution)
    # What `python tools/course_map.py` does after a fork's course.toml changed: the fork's set-up cell (the real
    # one: a made-up set-up cell is a hand edit, which counts as work) and a new runtime.
    (tmp_path / "course.toml").write_text('repository = "https://github.com/someone/fork.git"\nbranch = "dev"\n')
    notebook = nbformat.read(student, as_version=4)
    course_repository.write_setup_cell(notebook, course_repository.setup_cell_source(tmp_path))
    course_repository.write_colab_runtime(notebook, gpu=True)
    nbformat.write(notebook, student)
    assert authoring.unsaved_changes(solution) is None and authoring.unsaved_changes(solution, root=tmp_path) is None
    authoring.generate(solution)
    # Outputs of a (long) run are kept too.
    notebook = nbformat.read(student, as_version=4)
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nbformat.write(notebook, student)
    with pytest.raises(ValueError, match="changed since"):
        authoring.generate(solution)


def test_assign_writes_all_or_none(tmp_path, capsys):
    from course_lib.cli import main

    first, second = _demo_solution(tmp_path, "A8_first"), _demo_solution(tmp_path, "A9_second")
    assert main(["assign", str(first), str(second)]) == 0
    _demo_solution(tmp_path, "A8_first", answer="x = 3")  # its student version is now out of date
    before = authoring.student_path(first).read_text()
    _edit_stub(authoring.student_path(second))
    assert main(["assign", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert "no notebook was written" in err and str(authoring.student_path(second)) in err
    assert authoring.student_path(first).read_text() == before


def test_a_notebook_from_before_the_digest_is_replaced_only_when_its_solution_gives_it(tmp_path):
    import subprocess

    solution = _demo_solution(tmp_path)
    student = authoring.generate(solution)
    notebook = nbformat.read(student, as_version=4)
    del notebook.metadata[authoring.METADATA_KEY]  # as `assign` wrote it before it recorded a digest
    nbformat.write(notebook, student)
    legacy = student.read_text()
    authoring.generate(solution)  # what the current solution gives: replaced
    student.write_text(legacy)
    _edit_stub(student)
    with pytest.raises(ValueError, match="records no digest"):
        authoring.generate(solution)
    # Committed in git, then the solution changes: the untouched committed version may be replaced.
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the committed-solution case needs it")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git + ["init", "-q"], check=True)
    student.write_text(legacy)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "course"], check=True)
    _demo_solution(tmp_path, answer="x = 5")
    assert authoring.unsaved_changes(solution) is None
    _edit_stub(student)
    assert "records no digest" in authoring.unsaved_changes(solution)
    authoring.generate(solution, force=True)
    assert authoring.is_up_to_date(solution)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_shipped_student_notebooks_record_their_digest(solution, tmp_path):
    student = nbformat.read(authoring.student_path(solution), as_version=4)
    assert authoring.recorded_digest(student) == authoring.content_digest(student)
    assert authoring.unsaved_changes(solution) is None
    # The reviewer's case: STUDENT_WORK added to a stub cell of the handed-out notebook.
    copy = tmp_path / authoring.student_path(solution).name
    copy.write_text(authoring.student_path(solution).read_text())
    _edit_stub(copy)
    with pytest.raises(ValueError, match=f"Refusing to replace {copy}"):
        authoring.generate(solution, copy)
    assert "STUDENT_WORK = 1" in copy.read_text()


def test_assign_from_inside_solutions_writes_the_repositorys_assignments(tmp_path, monkeypatch, capsys):
    # `cd solutions && course-lib assign A1_....ipynb` wrote solutions/assignments/A1_....ipynb, a stray copy,
    # and `assign --check` from there checked that copy.
    from course_lib.cli import main

    solution = _demo_solution(tmp_path)
    monkeypatch.chdir(solution.parent)
    assert main(["assign", solution.name]) == 0
    student = tmp_path / "assignments" / solution.name
    assert f"wrote {student}" in capsys.readouterr().out
    assert student.is_file() and not (solution.parent / "assignments").exists()
    assert main(["assign", "--check", solution.name]) == 0
    student.unlink()
    assert main(["assign", "--check", solution.name]) == 1
    assert f"out of date: {student}: it does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("text, error", [('{"cells": 5}', "TypeError"), ("not json", "NotJSONError")])
def test_a_solution_that_is_not_a_notebook_is_an_error_naming_it(tmp_path, capsys, text, error):
    # `{"cells": 5}` gave a TypeError traceback, and a file that is not JSON nbformat's message without the
    # file's name (which of the notebooks of `assign --all`?).
    from course_lib.cli import main

    good, weird = _demo_solution(tmp_path), tmp_path / "solutions" / "weird.ipynb"
    weird.write_text(text)
    for command in (["assign", str(good), str(weird)], ["assign", "--check", str(weird)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert f"course-lib: error: The solution notebook {weird} is not a valid Jupyter notebook ({error}: " in err
        assert f"Received: {weird}" in err and "Traceback" not in err
    assert not (tmp_path / "assignments").exists()  # the good one is not written either
    with pytest.raises(ValueError, match=f"The solution notebook {weird} is not a valid Jupyter notebook"):
        authoring.generate(weird)
