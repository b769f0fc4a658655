"""Tests that need the instructors' private copy of the course.

The students' public copy is this repository without `solutions/` and
`hidden_tests/` (docs/instructors.md, section 3). Its test command must
still pass there, so the tests that read those folders skip, saying why,
instead of failing: `needs_private_copy` marks a test, and `skip_module_unless_private_copy()`
skips a whole file (for files that read the folders when they are imported).
"""

import pytest

from course_lib.grading.spec import REPOSITORY_ROOT

PRIVATE_FOLDERS = ("solutions", "hidden_tests")
REASON = ("needs solutions/ and hidden_tests/, which only the instructors' private copy holds "
          "(the students' public copy leaves them out: docs/instructors.md, section 3)")


def is_private_copy():
    return all((REPOSITORY_ROOT / folder).is_dir() for folder in PRIVATE_FOLDERS)


needs_private_copy = pytest.mark.skipif(not is_private_copy(), reason=REASON)


def skip_module_unless_private_copy():
    if not is_private_copy():
        pytest.skip(REASON, allow_module_level=True)
