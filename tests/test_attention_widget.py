"""The attention explorer: numbers, static figure and the headless widget."""

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from course_lib.plots import attention_widget as aw


def test_q5_numbers():
    weights = aw.softmax([0, 0, 1.25, 1.25, 0])
    np.testing.assert_allclose(weights, [0.10, 0.10, 0.35, 0.35, 0.10], atol=0.003)
    exact = aw.softmax([0, 0, np.log(3.5), np.log(3.5), 0])
    np.testing.assert_allclose(exact, [0.1, 0.1, 0.35, 0.35, 0.1], atol=1e-12)
    assert aw.squared_error(exact, aw.ORACLE_WEIGHTS[2]) == pytest.approx(0.075)


def test_shift_invariance_and_context_in_hull():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(4, 5))
    np.testing.assert_allclose(aw.softmax(scores), aw.softmax(scores + 7.3), atol=1e-12)
    context = aw.context_vector(aw.softmax(scores), aw.ENCODER_STATES)
    assert context.shape == (4, 2)
    low, high = aw.ENCODER_STATES.min(0), aw.ENCODER_STATES.max(0)
    assert np.all(context >= low) and np.all(context <= high)
    with pytest.raises(ValueError, match="one weight per encoder state"):
        aw.context_vector(np.ones(4) / 4, aw.ENCODER_STATES)


def test_oracle_button_brings_error_near_zero():
    explorer = aw.AttentionExplorer(step=2)
    before = explorer.readouts()["error"]
    explorer.use_oracle()
    after = explorer.readouts()
    assert after["error"] < 1e-3 < before
    assert after["largest"] == ("ja", "raha")  # the oracle splits "going" evenly: a tie
    assert "largest alpha on 'ja' and 'raha'" in explorer.summary()
    assert after["weight_sum"] == pytest.approx(1.0)


@pytest.mark.parametrize("step", range(4))
def test_bar_labels_sit_above_the_bar_and_the_oracle_outline(step):
    import matplotlib.pyplot as plt

    explorer = aw.AttentionExplorer(step=step)
    figure, (bars, plane, heat) = plt.subplots(1, 3)
    explorer.draw(bars, plane, heat)
    labels = sorted((text for text in bars.texts if "e=" in text.get_text()), key=lambda text: text.get_position()[0])
    weights, oracle = explorer.readouts()["weights"], explorer.oracle[step]
    assert len(labels) == len(weights)
    for label, weight, target in zip(labels, weights, oracle):
        assert label.get_text().startswith(f"{weight:.2f}")
        assert label.get_position()[1] > max(weight, target)  # the text starts above both tops
    plt.close(figure)


def test_explorer_rejects_bad_input():
    with pytest.raises(ValueError, match="step"):
        aw.AttentionExplorer(step=4)
    with pytest.raises(ValueError, match="scores"):
        aw.AttentionExplorer(scores=np.zeros((4, 3)))
    with pytest.raises(ValueError, match="mode"):
        aw.show_attention_explorer(mode="fancy")


def test_static_fallback_without_front_end(monkeypatch):
    import matplotlib.pyplot as plt

    assert not aw.widget_front_end_available()  # plain pytest: no kernel
    monkeypatch.setenv("COURSE_STATIC_PLOTS", "1")
    figure = aw.show_attention_explorer(mode="auto")
    assert isinstance(figure, matplotlib.figure.Figure)
    assert len(figure.axes) >= 3
    plt.close(figure)
    open_before = plt.get_fignums()
    shown = aw.show_attention_explorer(mode="static")  # displayed, then closed: nothing left open
    assert plt.get_fignums() == open_before and len(shown.axes) >= 3
    buffer = io.BytesIO()
    shown.savefig(buffer, format="png")  # a closed figure can still be saved
    assert buffer.getvalue()[:4] == b"\x89PNG"
    kept = aw.show_attention_explorer(mode="static", display=False)  # not shown: the caller's to close
    assert kept.number in plt.get_fignums()
    plt.close(kept)


def test_widget_updates_headless():
    import matplotlib.pyplot as plt

    pytest.importorskip("ipywidgets")
    box = aw.show_attention_explorer(aw.AttentionExplorer(step=0), mode="widget")
    explorer = box.explorer
    first_error = explorer.readouts()["error"]
    box.step_picker.value = 2  # go to "going"
    assert explorer.step == 2
    np.testing.assert_allclose([s.value for s in box.sliders], aw.DEFAULT_SCORES[2])
    for slider, value in zip(box.sliders, [0, 0, 1.25, 1.25, 0]):
        slider.value = value
    readouts = explorer.readouts()
    np.testing.assert_allclose(readouts["weights"], [0.10, 0.10, 0.35, 0.35, 0.10], atol=0.003)
    assert readouts["error"] == pytest.approx(0.075, abs=0.002)
    for _ in range(12):  # past the sliders' top: the row wraps down as a whole, never clipped alone
        box.add_button.click()
        np.testing.assert_allclose(explorer.readouts()["weights"], readouts["weights"], atol=1e-12)
        assert aw.SCORE_RANGE[0] <= min(s.value for s in box.sliders) <= max(s.value for s in box.sliders) <= aw.SCORE_RANGE[1]
    box.oracle_button.click()
    assert explorer.readouts()["error"] < 1e-3
    assert first_error != explorer.readouts()["error"]
    plt.close("all")
