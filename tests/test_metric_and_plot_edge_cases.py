"""Edge cases of the metrics, the plots and the training helpers: clear errors, no silent wrong numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.metrics.alignment import attention_agreement  # noqa: E402
from course_lib.metrics.classification import accuracy, macro_f1, planted_sentence_top1  # noqa: E402
from course_lib.metrics.language_model import perplexity_from_log_probs, unigram_perplexity  # noqa: E402
from course_lib.metrics.sequence import alignment_share, exact_match  # noqa: E402
from course_lib.metrics.transliteration import top_k_accuracy  # noqa: E402
from course_lib.plots.attention import attention_heatmap  # noqa: E402
from course_lib.plots.documents import confusion_matrix_plot  # noqa: E402
from course_lib.plots.fonts import devanagari_font  # noqa: E402
from course_lib.plots.grid import attention_grid  # noqa: E402
from course_lib.training.fit import fit_steps, steps_per_execution_for  # noqa: E402

STOP = 2


# -- metrics ---------------------------------------------------------------------------------------


def test_exact_match_cuts_at_padding_and_needs_the_stop():
    target = np.array([[5, 6, STOP, 0]])
    assert exact_match(np.array([[5, 6, STOP, 9]]), target, stop_id=STOP) == 1.0
    # "5 <pad> 6 <stop>" is not "5 6 <stop>": the docstring cuts at padding too
    assert exact_match(np.array([[5, 0, 6, STOP]]), target, stop_id=STOP) == 0.0
    # cut short before the <stop> (e.g. max_length too small): the <stop> is not right
    assert exact_match(np.array([[5, 6]]), target, stop_id=STOP) == 0.0
    with pytest.raises(ValueError, match="Received: 0 rows"):
        exact_match(np.zeros((0, 3), int), np.zeros((0, 3), int), stop_id=STOP)


def test_alignment_share_refuses_empty_nan_and_bad_masks():
    mirrored = np.eye(3)[None, ::-1]  # (1, 3, 3)
    gold = np.array([[2, 1, 0]])
    assert alignment_share(mirrored, gold) == 1.0
    assert alignment_share(mirrored, gold, valid=np.array([[True, True, False]])) == 1.0
    with pytest.raises(ValueError, match="undefined"):
        alignment_share(mirrored, gold, valid=np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match="undefined"):
        alignment_share(np.zeros((0, 3, 3)), np.zeros((0, 3), int))
    with pytest.raises(ValueError, match="valid.shape=\\(1, 2\\)"):
        alignment_share(mirrored, gold, valid=np.ones((1, 2), bool))
    with pytest.raises(ValueError, match="NaN"):
        alignment_share(np.full((1, 3, 3), np.nan), gold)  # argmax would silently pick position 0
    with pytest.raises(ValueError, match="range \\[0, 5\\]"):
        alignment_share(mirrored, np.array([[5, 1, 0]]))
    with pytest.raises(ValueError, match="range"):  # one past the last input position, not a miss
        alignment_share(mirrored, np.array([[3, 1, 0]]))


def test_alignment_share_counts_only_the_valid_steps():
    attention = np.eye(3)[None]  # steps 0, 1, 2 look at inputs 0, 1, 2
    assert alignment_share(attention, [[0, 1, 0]]) == pytest.approx(2 / 3)
    assert alignment_share(attention, [[0, 1, 0]], valid=[[True, True, False]]) == 1.0


def test_perplexity_refuses_nan_inf_and_probabilities():
    targets = np.array([[3, 4, 0]])
    log_probs = np.log([[0.5, 0.25, 1.0]])
    assert perplexity_from_log_probs(log_probs, targets) == pytest.approx(np.sqrt(8))
    with pytest.raises(ValueError, match="NaN"):
        perplexity_from_log_probs(np.array([[np.nan, -1.0, 0.0]]), targets)
    with pytest.raises(ValueError, match="infinite"):
        perplexity_from_log_probs(np.array([[-np.inf, -1.0, 0.0]]), targets)
    with pytest.raises(ValueError, match="probabilities"):
        perplexity_from_log_probs(np.array([[0.5, 0.25, 0.0]]), targets)  # probabilities, not logs
    # NaN / -inf at padding positions do not matter
    assert perplexity_from_log_probs(np.array([[np.log(0.5), np.log(0.25), np.nan]]), targets) == pytest.approx(
        np.sqrt(8)
    )


def test_unigram_perplexity_checks_ids():
    with pytest.raises(ValueError, match="min=-1"):
        unigram_perplexity([[1, 2, 2, 0]], [[-1, 1]], vocab_size=3)  # -1 would read the last id's probability
    with pytest.raises(ValueError, match="max=7"):
        unigram_perplexity([[1, 2, 2, 0]], [[7, 1]], vocab_size=3)
    with pytest.raises(ValueError, match="pad_id=5"):
        unigram_perplexity([[1, 2]], [[1, 2]], vocab_size=3, pad_id=5)
    with pytest.raises(ValueError, match="smoothing=0"):
        unigram_perplexity([[0, 0]], [[1, 0]], vocab_size=3, smoothing=0)


def test_unigram_perplexity_default_is_add_one_smoothing():
    # The language-model task reports this baseline with the default smoothing; computed here by hand.
    train = [[3, 3, 1, 0]]  # id 1 once, id 2 never, id 3 twice; 0 is <pad>
    valid = [[3, 2, 0], [1, 3, 0]]  # 4 real tokens: 3, 2, 1, 3
    counts = {1: 1 + 1, 2: 0 + 1, 3: 2 + 1}  # add one to every real id, seen or not; <pad> gets nothing
    total = sum(counts.values())  # 6
    expected = np.exp(-np.mean([np.log(counts[token] / total) for token in (3, 2, 1, 3)]))
    assert expected == pytest.approx(72 ** 0.25)  # P = 1/2, 1/6, 1/3, 1/2: (2 * 6 * 3 * 2) ** (1/4)
    assert unigram_perplexity(train, valid, vocab_size=4) == pytest.approx(expected, rel=1e-12)
    assert unigram_perplexity(train, valid, vocab_size=4, smoothing=1) == pytest.approx(expected, rel=1e-12)


def test_top_k_refuses_a_string_as_a_candidate_list():
    assert top_k_accuracy([["x", "a"], ["b"]], [["a"], "b"], k=2) == 1.0
    with pytest.raises(ValueError, match="not one string"):
        top_k_accuracy(["ab", "cd"], ["a", "c"], k=1)  # would count the characters as candidates
    with pytest.raises(ValueError, match="k=1.5"):
        top_k_accuracy([["x", "a"]], ["a"], k=1.5)


def test_classification_refuses_non_integer_labels():
    assert accuracy([0, 1, 2], [0.0, 1.0, 1.0]) == pytest.approx(2 / 3)  # whole floats are fine
    with pytest.raises(ValueError, match="integer class labels"):
        accuracy([0, 1], [0.4, 1.7])  # would be truncated to 0, 1
    with pytest.raises(ValueError, match="integer class labels"):
        macro_f1([0, np.nan], [0, 1])


def test_attention_metrics_refuse_nan_and_empty():
    with pytest.raises(ValueError, match="NaN"):
        attention_agreement([np.full((2, 2), np.nan)], [[0, 1]])
    with pytest.raises(ValueError, match="outside"):
        attention_agreement([np.eye(2)], [[0, 5]])
    with pytest.raises(ValueError, match=r"Received: sentence_weights.shape=\(0, 3\), planted_index.shape=\(0,\)"):
        planted_sentence_top1(np.zeros((0, 3)), np.zeros((0,), int))
    with pytest.raises(ValueError, match="NaN"):
        planted_sentence_top1([[np.nan, 0.9]], [1])


# -- plots -----------------------------------------------------------------------------------------


def _overlaps(boxes):
    boxes = sorted(boxes, key=lambda b: b.x0)
    return [(a, b) for a, b in zip(boxes, boxes[1:]) if b.x0 < a.x1 - 0.5]


def _visible_column_boxes(ax):
    renderer = ax.figure.canvas.get_renderer()
    labels = [tick.label2 for tick in ax.xaxis.get_major_ticks() if tick.label2.get_visible() and tick.label2.get_text()]
    return [label.get_window_extent(renderer) for label in labels]


@pytest.mark.parametrize("labels", [[f"token{i}" for i in range(30)], ["प्रतिस्पर्धात्मकता", "क्षत्रियों", "हिन्दी"] * 4])
def test_long_column_labels_do_not_overlap(labels):
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(len(labels)), size=4)
    ax = attention_heatmap(weights, labels, ["a", "b", "c", "<stop>"], fontproperties=devanagari_font())
    ax.figure.canvas.draw()
    boxes = _visible_column_boxes(ax)
    assert len(boxes) == len(labels) and not _overlaps(boxes)
    plt.close(ax.figure)
    figure = attention_grid([(weights, labels, ["a", "b", "c", "<stop>"], "long")] * 2, ncols=2)
    figure.canvas.draw()
    for ax in figure.axes[:2]:  # the heat maps (the colour bars come after them)
        boxes = _visible_column_boxes(ax)
        assert len(boxes) >= len(labels) // 3 and not _overlaps(boxes)
    plt.close(figure)


def _outside(figure, artists):
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    out = []
    for artist in artists:
        box = artist.get_window_extent(renderer)
        if artist.get_text() and (box.x0 < frame.x0 - 1 or box.y0 < frame.y0 - 1 or box.x1 > frame.x1 + 1
                                  or box.y1 > frame.y1 + 1):
            out.append(artist.get_text())
    return out


def test_own_figures_keep_title_and_labels_inside_for_a_plain_savefig():
    ax = attention_heatmap(np.eye(3), ["a", "b", "c"], ["x", "y", "<stop>"], title="Reversing")
    bar = ax.images[0].colorbar.ax  # drawn inside the heat map's own box: the layout must still make room
    artists = (ax.get_xticklabels() + ax.get_yticklabels() + [ax.title, ax.xaxis.label, ax.yaxis.label]
               + bar.get_yticklabels() + [bar.yaxis.label])
    assert _outside(ax.figure, artists) == []
    plt.close(ax.figure)
    ax = confusion_matrix_plot(np.array([[5, 1, 0], [2, 3, 1], [0, 0, 6]]), ["business", "entertainment", "sport"])
    assert _outside(ax.figure, ax.get_xticklabels() + ax.get_yticklabels()) == []
    plt.close(ax.figure)


def _assert_bar_spans(heat_map, bar):
    """The colour bar's drawn top and bottom are the heat map's, within 2 pixels."""
    heat_map, bar = heat_map.get_window_extent(), bar.get_window_extent()
    assert abs(bar.y0 - heat_map.y0) < 2 and abs(bar.y1 - heat_map.y1) < 2, (heat_map, bar)
    return bar


@pytest.mark.parametrize("rows, columns", [(7, 6), (30, 12), (5, 20), (20, 4), (60, 3)])
def test_colour_bar_spans_the_heat_map_from_top_to_bottom(rows, columns):
    weights = np.full((rows, columns), 1.0 / columns)
    ax = attention_heatmap(weights, [str(j) for j in range(columns)], [str(t) for t in range(rows)], title="t")
    ax.figure.canvas.draw()  # constrained layout places the bar at drawing time
    bar = _assert_bar_spans(ax, ax.images[0].colorbar.ax)
    assert 5 < bar.width < 0.3 * ax.figure.dpi, bar.width  # a bar, not a sliver or a slab
    plt.close(ax.figure)


def test_grid_colour_bars_span_their_row_after_the_layout():
    examples = [(np.full((n + 1, n), 1.0 / n), [str(j) for j in range(n)], [str(t) for t in range(n + 1)])
                for n in (4, 6, 8, 5, 9)]
    figure = attention_grid(examples, ncols=3)
    figure.canvas.draw()
    bars = {index: ax.images[0].colorbar for index, ax in enumerate(figure.axes[:5]) if ax.images[0].colorbar}
    assert list(bars) == [2, 4]  # one per row, beside its last heat map
    for index, bar in bars.items():
        _assert_bar_spans(figure.axes[index], bar.ax)
    plt.close(figure)


def test_heatmap_title_uses_the_devanagari_font_and_nan_is_refused():
    font = devanagari_font()
    ax = attention_heatmap(np.eye(2), ["a", "b"], ["क", "ख"], title="देवनागरी", fontproperties=font)
    assert ax.title.get_fontfamily() == font.get_family()
    plain = attention_heatmap(np.eye(2), ["a", "b"], ["x", "y"], title="Latin")
    assert ax.title.get_fontsize() == plain.title.get_fontsize()  # the title's size, not the labels'
    plt.close(ax.figure)
    plt.close(plain.figure)
    with pytest.raises(ValueError, match="non-finite"):
        attention_heatmap(np.array([[np.nan, 1.0]]), ["a", "b"], ["x"])


def test_grid_with_a_bad_example_leaves_no_figure_open():
    plt.close("all")
    with pytest.raises(ValueError, match=r"Received: weights.shape=\(2, 2\), len\(input_labels\)=1, len\(output_labels\)=2"):
        attention_grid([(np.eye(2), ["a"], ["b", "c"])])
    assert plt.get_fignums() == []


# -- training helpers -------------------------------------------------------------------------------


def test_step_helpers_refuse_non_integers_and_non_positive_reports():
    with pytest.raises(ValueError, match="steps_per_epoch=2.5"):
        steps_per_execution_for(2.5, 2)
    with pytest.raises(ValueError, match="report_every=0"):
        fit_steps(object(), None, 10, report_every=0)
    with pytest.raises(ValueError, match="report_every=-5"):
        fit_steps(object(), None, 10, report_every=-5)
    with pytest.raises(ValueError, match="steps=2.5"):
        fit_steps(object(), None, 2.5, report_every=1)


def test_document_figure_explains_its_marks():
    """A PNG has no hover text: the figure says what the bar, the shading and the marker mean."""
    from course_lib.plots.documents import document_figure

    sentences = [["the", "team", "won"], ["it", "rained"]]
    figure = document_figure(sentences, [0.9, 0.1], np.full((2, 3), 1 / 3), title="true: sport, predicted: sport",
                             highlight=0, highlight_label="planted sentence")
    key = [text.get_text() for text in figure.axes[0].texts if "Bar and number" in text.get_text()]
    assert len(key) == 1 and "α_i" in key[0] and "Shading" in key[0] and "planted sentence" in key[0]
    assert figure.axes[0].get_title(loc="left") == "true: sport, predicted: sport"
    plt.close(figure)
    figure = document_figure(sentences, [0.9, 0.1])  # no word weights, no marker: only the bar is explained
    key = [text.get_text() for text in figure.axes[0].texts if "Bar and number" in text.get_text()]
    assert len(key) == 1 and "Shading" not in key[0] and "\u25c0" not in key[0]
    plt.close(figure)
    figure = document_figure(sentences, [0.9, 0.1], key=False)
    assert not any("Bar and number" in text.get_text() for text in figure.axes[0].texts)
    plt.close(figure)
