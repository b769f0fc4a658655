"""Runs saved without a marker, damaged run files, a diverged fit, Ctrl-C and SIGTERM: refused or reported by name."""

import argparse
import math
import os
import signal
import subprocess
import sys
import time

import keras
import numpy as np
import pytest

from course_lib import cli
from course_lib.models.building import RefuseNonFiniteLoss
from course_lib.models.seq2seq import Seq2Seq
from course_lib.tasks import arguments
from course_lib.tasks.arguments import OWN_FILES, check_file_outside_runs, check_run_of, unmarked_run_owner
from course_lib.tasks.run_files import load_saved_model


def test_the_table_of_own_files_matches_each_tasks_constant():
    from course_lib.tasks import reversal
    from course_lib.tasks.captioning import runs as captioning_runs
    from course_lib.tasks.documents import runs as documents_runs
    from course_lib.tasks.translation import translator
    from course_lib.tasks.transliteration import runs as transliteration_runs

    assert OWN_FILES == {
        "translation": translator.STATE_FILE,
        "transliteration": transliteration_runs.STATE_FILE,
        "captioning": captioning_runs.RUN_FILE,
        "documents": documents_runs.SETTINGS_FILE,
        "reversal": reversal.MODEL_FILE,
    }


def _unmarked_run(folder, own_file):
    folder.mkdir()
    (folder / "model.keras").write_bytes(b"PK")
    (folder / own_file).write_text("{}")
    return folder


def test_an_unmarked_run_of_another_task_is_refused_by_its_files(tmp_path):
    translation_run = _unmarked_run(tmp_path / "translation_run", "state.json")
    assert unmarked_run_owner(translation_run) == "translation"
    with pytest.raises(ValueError, match=r"holds a translation run \(its state.json\); not a transliteration run. "
                                         r"Received: --model .*translation_run"):
        check_run_of(translation_run, "transliteration")
    assert check_run_of(translation_run, "translation") is False  # its own task: loaded as before
    # Its own file without a model is no run; two tasks' files are unclear: neither is refused by this check.
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "training.json").write_text("{}")
    assert unmarked_run_owner(tmp_path / "notes") is None
    (translation_run / "run.json").write_text("{}")
    assert unmarked_run_owner(translation_run) is None


def test_a_file_is_not_written_into_an_unmarked_run(tmp_path):
    documents_run = _unmarked_run(tmp_path / "bbc_han", "training.json")
    with pytest.raises(ValueError, match=r"holds a documents run \(its training.json\); writing --save there could "
                                         r"replace one of its files. .*Received: --save .*model.keras"):
        check_file_outside_runs(documents_run / "model.keras", "--save")
    check_file_outside_runs(tmp_path / "elsewhere" / "model.keras", "--save")  # anywhere else: allowed


def test_a_file_is_not_written_into_a_subfolder_of_a_run(tmp_path, monkeypatch):
    run = tmp_path / "rev"
    (run / "plots" / "old").mkdir(parents=True)
    (run / arguments.RUN_MARKER).write_text('{"task": "reversal"}')
    for path in (run / "plots" / "m.json", run / "plots" / "old" / "m.json"):
        with pytest.raises(ValueError, match=rf"holds a reversal run \(course_run.json\); writing --metrics-json there "
                                             rf"\(in its subfolder .*\) could replace one of its files"):
            check_file_outside_runs(path, "--metrics-json")
    monkeypatch.chdir(run / "plots")  # a relative path from inside the run
    with pytest.raises(ValueError, match=r"holds a reversal run"):
        check_file_outside_runs("m.json", "--metrics-json")
    monkeypatch.chdir(run)
    check_file_outside_runs("../m.json", "--metrics-json")  # `..` leads out of it: allowed (it used to be refused)
    (tmp_path / "link").symlink_to(run / "plots")  # a link into its subfolder leads into it
    with pytest.raises(ValueError, match=r"holds a reversal run .*writing --metrics-json there \(in its subfolder"):
        check_file_outside_runs(tmp_path / "link" / "m.json", "--metrics-json")
    # The folder a command reads or writes (`--model`, `--out`), marked or not: its subfolders too.
    unmarked = tmp_path / "new_run"
    with pytest.raises(ValueError, match=r"would write into the run folder .*new_run"):
        check_file_outside_runs(unmarked / "sub" / "m.json", "--metrics-json", unmarked)
    check_file_outside_runs(tmp_path / "rev_metrics" / "m.json", "--metrics-json", unmarked)  # beside it: allowed
    for path in (unmarked, tmp_path):  # the run folder itself, or a folder above it, given as the file
        with pytest.raises(ValueError, match=r"--metrics-json names the run folder .*new_run.* \(or a folder above it\)"):
            check_file_outside_runs(path, "--metrics-json", unmarked)


def test_reversal_refuses_metrics_json_that_names_its_out_folder_before_training(tmp_path, capsys):
    same = tmp_path / "same.json"
    assert cli.main(["reversal", "--steps", "1", "--out", str(same), "--metrics-json", str(same)]) == 2
    assert "--metrics-json names the run folder" in capsys.readouterr().err  # it used to fail after training
    assert not same.exists()


def test_the_language_model_command_leaves_an_unmarked_run_alone(tmp_path, capsys):
    documents_run = _unmarked_run(tmp_path / "bbc_han", "training.json")
    before = (documents_run / "model.keras").read_bytes()
    assert cli.main(["train", "language-model", "--steps", "1", "--save", str(documents_run / "model.keras")]) == 2
    assert "holds a documents run" in capsys.readouterr().err
    assert (documents_run / "model.keras").read_bytes() == before


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 cut short"])
def test_a_damaged_keras_file_is_named_not_missing(tmp_path, damage):
    path = tmp_path / "model.keras"
    path.write_bytes(damage)
    with pytest.raises(ValueError, match=rf"model.keras' is damaged: not a complete .keras file .*Received: a file "
                                         rf"of {len(damage)} bytes"):
        load_saved_model(path)


@pytest.mark.parametrize("text", ['{"task": "translation"}', '{"task": "translation", "config": {', "[1, 2]"])
def test_a_damaged_translation_state_is_named(tmp_path, text):
    from course_lib.tasks.translation.translator import read_state

    (tmp_path / "state.json").write_text(text)
    with pytest.raises(ValueError, match=r"state.json' is damaged .*Received: "):
        read_state(tmp_path)


def test_a_diverged_fit_stops_before_the_epoch_is_saved():
    source = np.random.default_rng(0).integers(3, 14, size=(32, 5)).astype("int32")
    target_in = np.concatenate([np.ones((32, 1), "int32"), source[:, ::-1][:, :4]], axis=1)
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6)
    model.compile(keras.optimizers.SGD(1e38))  # the weights overflow in the first epoch
    saved = []

    class Checkpoint(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            saved.append(epoch)

    with pytest.raises(ValueError, match=r"Training diverged: the mean loss of epoch 1 is (nan|inf).*"
                                         r"Received: learning_rate=1e\+38"):
        model.fit({"source": source, "target_in": target_in}, source[:, ::-1], batch_size=8, epochs=2,
                  verbose=0, callbacks=[Checkpoint()])
    assert saved == []  # the checkpoint callback never saw the diverged epoch


def test_a_finite_loss_passes_the_check_and_inf_does_not():
    check = RefuseNonFiniteLoss()
    check.on_epoch_end(0, {"loss": 0.5})  # returns quietly
    check.on_epoch_end(0, {})
    check.set_model(keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)]))
    check.model.compile(keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(1.0, 10, 0.5)), "mse")  # a schedule: its current rate
    with pytest.raises(ValueError, match=r"epoch 3 is inf\..*Received: learning_rate=1$"):
        check.on_epoch_end(2, {"loss": math.inf})


def test_ctrl_c_in_a_command_says_what_is_kept(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=interrupted)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    released = []
    monkeypatch.setattr(cli, "release_unused_claims", lambda: released.append(True))
    assert cli.main([]) == 130
    assert "interrupted" in capsys.readouterr().err and released == [True]
    assert arguments.RUN_MARKER == "course_run.json"


def test_sigterm_in_a_command_is_handled_as_ctrl_c(monkeypatch, capsys):
    def terminated(args):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises as soon as the main thread runs Python again

    class ReachedTheTest(Exception):
        pass

    def outside_handler(signal_number, frame):  # what runs if `main` sets no handler of its own
        raise ReachedTheTest("SIGTERM was not handled by the command")

    previous = signal.signal(signal.SIGTERM, outside_handler)

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=terminated)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    released = []
    monkeypatch.setattr(cli, "release_unused_claims", lambda: released.append(True))
    try:
        assert cli.main([]) == 128 + signal.SIGTERM
        assert "course-lib: terminated (SIGTERM)." in capsys.readouterr().err and released == [True]
        assert signal.getsignal(signal.SIGTERM) is outside_handler  # put back once the command is over
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sigterm_right_after_a_folder_is_claimed_leaves_nothing(tmp_path):
    """`kill` (or a job scheduler's limit) used to end the process at once, leaving a folder with only its marker."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "course_lib", "reversal", "--steps", "200", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COURSE_PROFILE": "fast"},
    )
    deadline = time.monotonic() + 120
    while not (out / arguments.RUN_MARKER).exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (out / arguments.RUN_MARKER).exists(), process.communicate()
    process.send_signal(signal.SIGTERM)  # while TensorFlow loads or the model trains
    _, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "course-lib: terminated (SIGTERM)." in err and "Traceback" not in err
    assert not out.exists()  # the claimed, still empty folder is released


@pytest.mark.parametrize("text", ["2147483648", "99999999999999999999"])
def test_a_count_too_large_for_tensorflow_is_a_usage_error(text):
    with pytest.raises(argparse.ArgumentTypeError, match=rf"up to 2\*\*31 - 1, received '{text}'"):
        arguments.positive_int(text)
    assert arguments.positive_int("2147483647") == 2**31 - 1
