"""Every assignment: the solution scores full marks, the untouched student
notebook scores zero on every graded part, and the student notebook runs top
to bottom until its first unfinished exercise (NotImplementedError), read
from the grader's own run of it.

(nbval runs the solution notebooks in CI; A1's solution and student notebook
are graded in tests/test_grading_grader.py instead, with the same checks.)
"""

import pytest

from course_lib.grading import grader
from course_lib.grading.authoring import solution_notebooks, student_path
from course_lib.grading.spec import load_assignment
from private_copy import needs_private_copy
from student_runs import assert_runs_until_its_first_exercise

SOLUTIONS = [p for p in solution_notebooks() if not p.stem.startswith("A1_")]


@needs_private_copy
def test_the_private_copy_has_solutions_to_grade():
    # With none found (a broken file pattern), every test below would be skipped for an empty parameter set,
    # and the file would pass; the public copy has no solutions/ and skips this test too.
    assert SOLUTIONS, "no solution notebook found in solutions/ (besides A1's)"


@needs_private_copy
@pytest.mark.parametrize("solution", solution_notebooks(), ids=lambda p: p.stem)
def test_each_graded_answer_has_a_cell_of_its_own(solution):
    # A cell that fails to parse defines nothing: with two answers in one cell, a SyntaxError in one cost the other
    # its marks too (A1's shapes and parameter count, A4's map and cell, five quiz questions, before the split).
    import nbformat

    notebook = nbformat.read(solution, as_version=4)
    crowded = [index for index, cell in enumerate(notebook.cells)
               if cell.cell_type == "code" and cell.source.count("# BEGIN SOLUTION") > 1]
    assert crowded == [], f"{solution.name}: cells {crowded} hold more than one solution region"


@pytest.fixture(scope="module", params=SOLUTIONS, ids=lambda p: p.stem)
def graded(request):
    solution = request.param
    assignment = load_assignment(solution.stem)
    results = grader.grade(assignment.id, [solution, student_path(solution)], jobs=2, progress=lambda line: None)
    return assignment, results[0], results[1]


def test_solution_scores_full_marks(graded):
    assignment, solution, _ = graded
    failed = [(t.name, t.reason) for t in solution.tests if not t.earned]
    assert solution.total == assignment.points() > 0, (failed, solution.notes)
    assert solution.notes == [], solution.notes


def test_untouched_student_notebook_scores_zero(graded):
    assignment, _, student = graded
    assert student.total == 0.0
    assert all(points == 0.0 for points in student.questions.values())
    assert all("not implemented" in t.reason or "is not defined" in t.reason for t in student.tests), [
        t.reason for t in student.tests
    ]


def test_student_notebook_runs_until_its_first_exercise(graded):
    _, _, student = graded
    assert_runs_until_its_first_exercise(student.cells)
