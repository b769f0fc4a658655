"""What the grader's run of an untouched student notebook must show.

The grader runs every cell (past errors too) and keeps each cell's status in
`SubmissionResult.cells`, so the grading tests check this on the run they
already made instead of executing the student notebook a second time.
"""


def assert_runs_until_its_first_exercise(cells):
    """Every cell before the first exercise runs; the first one that does not raises NotImplementedError.

    Args:
        cells: `SubmissionResult.cells`, [(cell index, status, exception name)] in notebook order.
    """
    failing = [cell for cell in cells if cell[1] != "ok"]
    assert failing, f"the student notebook ran to the end without meeting an exercise: {cells}"
    assert failing[0][1:] == ("error", "NotImplementedError"), (failing[0], cells)
