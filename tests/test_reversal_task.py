"""The reversal data, task wiring and the `course-lib reversal` command."""

import json
import subprocess
import sys

import numpy as np
import pytest

from course_lib.data import reversal
from course_lib.metrics.sequence import alignment_share, exact_match
from course_lib.tasks.reversal import ReversalConfig, format_attention


def test_examples_reverse_and_frame_with_go_and_stop():
    source, target_in, target_out = reversal.make_examples(np.array([[7, 3, 2, 7, 7, 1]]))
    assert reversal.decode_ids(source[0]) == [7, 3, 2, 7, 7, 1]
    assert target_in[0, 0] == reversal.GO and reversal.decode_ids(target_in[0]) == [1, 7, 7, 2, 3, 7]
    assert target_out[0, -1] == reversal.STOP and reversal.decode_ids(target_out[0]) == [1, 7, 7, 2, 3, 7]
    for length in range(1, 15):  # every length reverses, the training lengths and those beyond
        digits = np.arange(length)[None] % 10
        _, _, target_out = reversal.make_examples(digits)
        assert reversal.decode_ids(target_out[0]) == digits[0, ::-1].tolist(), length


def test_training_batches_have_one_length_each_within_range_and_are_seeded():
    batches = list(reversal.training_batches(40, batch_size=8, seed=5))
    lengths = {b[0]["source"].shape[1] for b in batches}
    assert lengths <= set(range(5, 11)) and len(lengths) > 3
    again = list(reversal.training_batches(40, batch_size=8, seed=5))
    np.testing.assert_array_equal(batches[7][0]["source"], again[7][0]["source"])
    with pytest.raises(ValueError, match="min_length=6, max_length=5"):
        next(reversal.training_batches(1, min_length=6, max_length=5))
    with pytest.raises(ValueError, match=r"0..9. Received: \[3, 12\]"):
        reversal.encode_digits([3, 12])


def test_no_training_string_is_an_evaluation_string():
    seen = {}
    for inputs, _ in reversal.training_batches(2500, 64, 5, 10, seed=0):  # the full profile's stream
        seen.setdefault(inputs["source"].shape[1], set()).update(row.tobytes() for row in inputs["source"])
    for length in (5, 6, 7):  # 140, 10 and 1 of the 500 test strings were also training strings
        test_strings = {row.tobytes() for row in reversal.test_set(length)[0]}
        assert not test_strings & seen[length], length


def test_a_test_set_above_500_strings_is_held_out_too(monkeypatch):
    def overlap(**held):
        seen = set()
        for inputs, _ in reversal.training_batches(600, 64, 5, 5, seed=0, **held):  # 38,400 of the 10**5 strings
            seen.update(row.tobytes() for row in inputs["source"])
        return sum(row.tobytes() in seen for row in reversal.test_set(5, 1000)[0])

    assert overlap() > 100  # strings 500-999 of a 1,000-string test set were training strings
    assert overlap(held_out=1000) == 0
    # The task holds out what it will score, and the stream of a 500-string run is the one it always was.
    from course_lib.tasks import reversal as task

    received = {}
    monkeypatch.setattr(task.data, "as_dataset", lambda *args, **kwargs: received.update(kwargs) or 1 / 0)
    for test_size, want in ((1000, 1000), (200, 500)):
        with pytest.raises(ZeroDivisionError):
            task.train(ReversalConfig(steps=1, test_size=test_size), verbose=0)
        assert received["held_out"] == want
    with pytest.raises(ValueError, match=r"no string of length 1 to train on \(there are 10\)\. Received: held_out=200"):
        next(reversal.training_batches(1, min_length=1, max_length=1, held_out=200))


def test_exact_match_and_alignment_share_count_the_right_things():
    target = np.array([[5, 6, 2, 0], [7, 8, 2, 0]])
    predicted = np.array([[5, 6, 2, 9], [7, 9, 2, 0]])  # tokens after <stop> do not count
    assert exact_match(predicted, target, stop_id=2) == 0.5
    alignments = np.zeros((1, 3, 3))
    alignments[0, [0, 1, 2], [2, 1, 1]] = 1.0
    assert alignment_share(alignments, np.array([[2, 1, 0]])) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"Received: alignments.shape=\(3, 3\), gold_positions.shape=\(1, 3\)"):
        alignment_share(alignments[0], np.array([[2, 1, 0]]))


def test_digits_must_be_integers():
    with pytest.raises(ValueError, match="integers 0..9. Received: dtype=float64"):
        reversal.make_examples(np.array([[1.5, 2.0]]))  # was read as 1 and 2


def test_profiles_pick_the_budget(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "full")
    assert ReversalConfig.for_profile().steps == 2500
    monkeypatch.setenv("COURSE_PROFILE", "fast")
    assert ReversalConfig.for_profile().steps < 2500
    monkeypatch.setenv("COURSE_PROFILE", "turbo")
    with pytest.raises(ValueError, match="turbo"):
        ReversalConfig.for_profile()


def test_option_2_is_for_the_plain_model_only():
    # `ReversalConfig(option=2)` (attention on by default) used to train the attentional model, option ignored.
    # `train` refuses it through `Seq2Seq`, built right after `ReversalConfig.check` (no longer a second copy).
    from course_lib.tasks.reversal import train

    with pytest.raises(ValueError, match=r"has no option 2. Received: option=2, attention=True"):
        train(ReversalConfig.for_profile("fast", option=2, steps=1), verbose=0)
    with pytest.raises(ValueError, match=r"Received: option=3"):
        train(ReversalConfig.for_profile("fast", option=3, attention=False, steps=1), verbose=0)
    ReversalConfig.for_profile("fast", option=2, attention=False).check()


def test_attention_text_has_a_row_per_output_step():
    text = format_attention([1, 2], ["2", "1", "<stop>"], np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]]))
    assert len(text.splitlines()) == 4 and "<stop>" in text


def test_cli_trains_and_writes_metrics_heatmap_and_model(tmp_path, capsys):
    # In this process (a new Python spent 5 s importing TensorFlow again); `python -m course_lib`
    # itself is run by test_cli_rejects_bad_arguments.
    from course_lib.cli import main

    metrics_path = tmp_path / "m.json"
    assert main(["reversal", "--steps", "100", "--out", str(tmp_path / "run"),
                 "--metrics-json", str(metrics_path)]) == 0
    output = capsys.readouterr().out
    metrics = json.loads(metrics_path.read_text())
    assert set(metrics["exact_match"]) >= {"5", "7", "10"}
    assert all(0.0 <= v <= 1.0 for v in metrics["exact_match"].values())
    assert 0.0 <= metrics["alignment"] <= 1.0 and metrics["train_seconds"] > 0
    assert (tmp_path / "run" / "reversal_attention.png").stat().st_size > 1000
    assert (tmp_path / "run" / "reversal.keras").exists()
    assert "Exact match by input length" in output and "out\\in" in output
    # A plain model trained into the same folder says it replaces the run, and takes the old heat map away.
    assert main(["reversal", "--no-attention", "--steps", "2", "--out", str(tmp_path / "run")]) == 0
    output = capsys.readouterr().out
    assert "holds an earlier reversal run" in output and "Removed" in output
    assert not (tmp_path / "run" / "reversal_attention.png").exists()


def test_cli_rejects_bad_arguments():
    completed = subprocess.run(
        [sys.executable, "-m", "course_lib", "reversal", "--steps", "-3"], capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 2 and "positive integer" in completed.stderr
