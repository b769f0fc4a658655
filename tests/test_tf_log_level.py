"""course_lib quiets TensorFlow's C++ log unless the user chose a level."""

import os
import subprocess
import sys

import pytest

PROBE = "import os, course_lib; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"


@pytest.mark.parametrize("preset, expected", [(None, "3"), ("1", "1")])
def test_importing_course_lib_sets_a_default_log_level(preset, expected):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    if preset is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = preset  # the user's own setting wins
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == expected
