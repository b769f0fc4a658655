"""The command line's arguments: counts and sizes of 0 or less are usage errors (never "the default"), and
building the parser loads no Keras or TensorFlow, so `course-lib --help` answers at once."""

import subprocess
import sys

import pytest

from course_lib.cli import main
from private_copy import needs_private_copy


@pytest.mark.parametrize(
    "argv, bad",
    [
        (["reversal", "--steps", "0"], "0"),
        (["train", "language-model", "--steps", "0"], "0"),
        (["train", "captioning", "--limit", "-5", "--out", "unused"], "-5"),
        (["train", "captioning", "--epochs", "0", "--out", "unused"], "0"),
        (["train", "documents", "--epochs", "0", "--out", "unused"], "0"),
        (["train", "translation", "--batch-size", "0", "--out", "unused"], "0"),
        (["train", "transliteration", "--units", "0", "--out", "unused"], "0"),
        (["evaluate", "transliteration", "--model", "unused", "--beam", "0"], "0"),
        (["evaluate", "captioning", "--model", "unused", "--beam-width", "zero"], "zero"),
    ],
    ids=lambda value: " ".join(value[:2] + [a for a in value if a.startswith("--")][:1]) if isinstance(value, list) else None,
)
def test_non_positive_counts_are_usage_errors(argv, bad, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert f"expected a positive integer, received {bad!r}" in error, error


# Building the whole parser (what `course-lib --help` does) in a fresh interpreter, reporting which heavy
# libraries it loaded; the tasks import Keras inside the functions that train and evaluate.
PARSER_PROBE = """
import sys
from course_lib.cli import build_parser
build_parser()
print(sorted(name for name in ("keras", "tensorflow", "tensorflow_text", "matplotlib") if name in sys.modules))
"""


def test_building_the_parser_loads_no_keras_or_tensorflow():
    result = subprocess.run([sys.executable, "-c", PARSER_PROBE], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout


# A help page and a refused choice read the choices that a library module keeps, without importing it.
CHOICES_PROBE = """
import contextlib, io, sys
from course_lib.cli import main
for argv in (["train", "documents", "--help"], ["train", "documents", "--encoder", "nope", "--out", "unused"]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
print(sorted(name for name in ("keras", "tensorflow") if name in sys.modules))
"""


def test_reading_choices_for_help_or_a_check_loads_no_keras(monkeypatch):
    result = subprocess.run([sys.executable, "-c", CHOICES_PROBE], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout
    from course_lib.models import document_classifier
    from course_lib.tasks.arguments import ChoicesFrom

    # The tuple read from the source is the module's own.
    assert tuple(ChoicesFrom("course_lib.models.document_classifier", "ENCODERS")) == document_classifier.ENCODERS
    monkeypatch.delitem(sys.modules, "course_lib.tasks.arguments")  # as if not imported: read from the source
    with pytest.raises(AttributeError, match="no literal MISSING"):
        list(ChoicesFrom("course_lib.tasks.arguments", "MISSING"))
    assert tuple(ChoicesFrom("course_lib.tasks.arguments", "IMAGE_SUFFIXES")) == (".png", ".pdf", ".svg", ".jpg", ".jpeg")


def test_choices_kept_in_a_library_module_still_check_and_show(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["train", "documents", "--encoder", "hierarchical", "--out", "unused"])
    assert stop.value.code == 2
    assert "invalid choice: 'hierarchical' (choose from 'han', 'plain', 'flat')" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "documents", "--help"])
    assert "--encoder ENCODER     one of: han, plain, flat (default: han)" in capsys.readouterr().out


@needs_private_copy  # `assign --links` lists the solutions
def test_a_reader_that_goes_away_stops_the_command_quietly():
    # `course-lib assign --links | head -1`: the pipe closes before the command writes.
    command = subprocess.Popen([sys.executable, "-m", "course_lib", "assign", "--links"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    command.stdout.close()
    error = command.stderr.read()
    assert command.wait(timeout=60) == 1
    assert error == "", error  # no "Broken pipe" error line, no traceback at exit


def test_a_broken_pipe_of_the_commands_own_is_reported(monkeypatch, capsys):
    # Standard output is fine here: the pipe that broke is another one (a kernel's, say).
    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("course_lib.grading.authoring._assign_command", broken)
    assert main(["assign", "--links"]) == 2
    assert "course-lib: error: [Errno 32] Broken pipe" in capsys.readouterr().err


def test_resuming_accepts_the_recorded_training_file_by_another_path(tmp_path, monkeypatch):
    # `--train data/words.csv` then `--train ./data/words.csv` (or its absolute path, or a link to it)
    # name the same file; refusing it would stop every resume typed a little differently.
    from course_lib.tasks.arguments import check_same_training_data

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "words.csv").write_text("kamal,कमल\n", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(tmp_path / "data" / "words.csv")
    monkeypatch.chdir(tmp_path)
    for given in ("./data/words.csv", str(tmp_path / "data" / "words.csv"), "link.csv"):
        check_same_training_data("run", "data/words.csv", given)
    (tmp_path / "other.csv").write_text("ghar,घर\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs the same file"):
        check_same_training_data("run", "data/words.csv", "other.csv")
