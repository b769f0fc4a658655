"""`course-lib train language-model`: trains, reports perplexity, saves."""

import keras

from course_lib.cli import main


def test_cli_trains_and_saves(tmp_path, capsys):
    path = tmp_path / "lm.keras"
    assert main(["train", "language-model", "--cell", "gru", "--steps", "20", "--save", str(path)]) == 0
    output = capsys.readouterr().out
    assert "validation perplexity" in output and "unigram baseline" in output
    reloaded = keras.models.load_model(path)
    assert reloaded.output_shape[-1] > 4
