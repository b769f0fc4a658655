"""Every assignment: the solution scores full marks, the untouched student
notebook scores zero on every graded part, and the student notebook runs top
to bottom until its first unfinished exercise (NotImplementedError).

(nbval runs the solution notebooks in CI; A1's solution and student notebook
are also graded in tests/test_grading_grader.py.)
"""

import pytest

from course_lib.grading import grader, running
from course_lib.grading.authoring import solution_notebooks, student_path
from course_lib.grading.spec import load_assignment

SOLUTIONS = [p for p in solution_notebooks() if not p.stem.startswith("A1_")]


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


@pytest.mark.parametrize("solution", solution_notebooks(), ids=lambda p: p.stem)
def test_student_notebook_runs_until_its_first_exercise(solution):
    report = running.run_notebook(student_path(solution), stop_on_error=True, cell_timeout=300)
    statuses = report["statuses"]
    failing = [s for s in statuses if s[1] != "ok"]
    assert failing, "the student notebook ran to the end without meeting an exercise"
    first = failing[0]
    assert first[1] == "error" and first[2] == "NotImplementedError", first
    assert all(status == "ok" for _, status, _ in statuses[: statuses.index(first)])
