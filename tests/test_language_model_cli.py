"""`course-lib train language-model`: trains, reports perplexity, saves."""

import keras
import pytest

from course_lib.cli import main


def test_cli_trains_and_saves(tmp_path, capsys):
    path = tmp_path / "sub" / "lm.keras"  # a missing folder is made (it used to fail after training)
    assert main(["train", "language-model", "--cell", "gru", "--steps", "20", "--save", str(path)]) == 0
    output = capsys.readouterr().out
    assert "validation perplexity" in output and "unigram baseline" in output
    reloaded = keras.models.load_model(path)
    assert reloaded.output_shape[-1] > 4


def test_steps_not_a_multiple_of_ten_are_all_trained_and_a_second_save_says_it_replaced(tmp_path, capsys):
    from course_lib.tasks.language_model import default_settings, train_language_model

    settings = {**default_settings(), "steps": 25, "units": 8, "embedding_dim": 4}
    result = train_language_model("rnn", settings=settings)
    assert result["steps"] == 25  # 24 before: ten reports of 2 steps and no room for the last 5
    assert len(result["losses"]) == 13  # 12 reports of 2 steps, then one of 1
    path = tmp_path / "lm.keras"
    for _ in range(2):
        assert main(["train", "language-model", "--cell", "rnn", "--steps", "3", "--save", str(path)]) == 0
    output = capsys.readouterr().out
    assert output.count(f"saved {path}") == 2 and output.count(f"replaced {path}") == 1


def test_save_writes_the_model_whole_and_never_through_a_link_into_a_run(tmp_path, capsys, monkeypatch):
    from course_lib.tasks import run_files
    from course_lib.tasks.arguments import claim_run_folder

    run = tmp_path / "reversal_run"
    claim_run_folder(run, "reversal")
    model = run / "reversal.keras"
    model.write_bytes(b"the reversal run's model")
    link = tmp_path / "lm" / "best.keras"
    link.parent.mkdir()
    link.symlink_to(model)
    assert main(["train", "language-model", "--steps", "3", "--save", str(link)]) == 2  # it used to replace the run's
    assert "holds a reversal run" in capsys.readouterr().err and model.read_bytes() == b"the reversal run's model"
    # An interrupted save leaves the earlier model as it was (it used to write in place).
    path = tmp_path / "lm.keras"
    path.write_bytes(b"an earlier model")
    real_replace = run_files.os.replace

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_files.os, "replace", interrupted)
    assert main(["train", "language-model", "--steps", "3", "--save", str(path)]) == 130
    monkeypatch.setattr(run_files.os, "replace", real_replace)
    assert path.read_bytes() == b"an earlier model" and sorted(p.name for p in tmp_path.iterdir()) == [
        "lm", "lm.keras", "reversal_run"]


def test_save_into_another_tasks_run_folder_is_refused_before_training(tmp_path, capsys):
    from course_lib.tasks.arguments import claim_run_folder

    run = tmp_path / "reversal_run"
    claim_run_folder(run, "reversal", "metrics.json")
    model = run / "reversal.keras"
    model.write_bytes(b"the reversal run's model")
    assert main(["train", "language-model", "--steps", "3", "--save", str(model)]) == 2
    err = capsys.readouterr().err
    assert "holds a reversal run" in err and "--save" in err and "validation perplexity" not in err
    assert model.read_bytes() == b"the reversal run's model"


def test_training_data_given_without_validation_data_is_refused():
    # The given training part used to be thrown away: both parts were loaded again from the generated corpus.
    from course_lib.tasks.language_model import default_settings, load_corpus, train_language_model

    settings = {**default_settings(), "steps": 1, "num_train": 8, "num_valid": 8, "batch_size": 4, "units": 4,
                "embedding_dim": 4}
    train, valid = load_corpus(settings)
    with pytest.raises(ValueError, match=r"Give both `train` and `valid`, or neither .* Received: train=<dict>, "
                                         r"valid=None"):
        train_language_model("rnn", train=train, settings=settings)
    with pytest.raises(ValueError, match="Received: train=None, valid=<dict>"):
        train_language_model("rnn", valid=valid, settings=settings)


def test_fewer_training_rows_than_a_batch_is_refused_rather_than_waiting_forever():
    # The endless batch stream never yielded a batch, and training waited for one forever.
    from course_lib.tasks.language_model import default_settings, train_language_model

    settings = {**default_settings(), "steps": 1, "num_train": 8, "num_valid": 8, "batch_size": 64, "units": 4,
                "embedding_dim": 4}
    with pytest.raises(ValueError, match="Received: 8 rows, batch_size=64"):
        train_language_model("rnn", settings=settings)
