"""Metrics and pictures given the wrong thing say so, and tied arg-maxes split their credit."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_lib.metrics.alignment import attention_agreement, chance_agreement  # noqa: E402
from course_lib.metrics.bleu import corpus_bleu  # noqa: E402
from course_lib.metrics.captioning import attention_on_object, object_word_hits  # noqa: E402
from course_lib.metrics.classification import planted_sentence_top1  # noqa: E402
from course_lib.metrics.language_model import unigram_perplexity  # noqa: E402
from course_lib.metrics.sequence import alignment_share  # noqa: E402
from course_lib.plots.attention import attention_heatmap, exact_match_by_length  # noqa: E402
from course_lib.plots.captioning import as_rgb_uint8, attention_overlay_grid, white_region  # noqa: E402
from course_lib.plots.documents import confusion_matrix_plot, document_figure, document_html  # noqa: E402

COLOURS, SHAPES = ["red", "blue"], ["square", "circle"]


def test_attention_on_object_refuses_object_arrays_that_do_not_match_the_masks():
    """A (1, 1) colour array against two objects was broadcast and scored 0.25 instead of 0.5."""
    masks = np.array([[[True, False, False, False], [False, False, True, True]]])  # (1 image, 2 objects, 4)
    alignments = np.zeros((1, 3, 4))
    alignments[0, :, 2] = 1.0
    colours, shapes = np.array([[0, 1]]), np.array([[0, 1]])
    good = attention_on_object(["a blue circle"], alignments, colours, shapes, masks, COLOURS, SHAPES)
    assert good["rate"] == 1.0 and good["words"] == 2
    with pytest.raises(ValueError, match=r"object_colours.shape=\(1, 1\)"):
        attention_on_object(["a blue circle"], alignments, colours[:, :1], shapes, masks, COLOURS, SHAPES)
    with pytest.raises(ValueError, match=r"object_shapes.shape=\(1,\)"):
        object_word_hits(["a", "blue", "circle"], alignments[0], colours[0], shapes[0][:1], masks[0], COLOURS, SHAPES)


def test_tied_largest_weights_split_the_credit_instead_of_crediting_the_first_position():
    uniform = np.full((1, 2, 4), 0.25)
    # argmax took position 0: gold 0 scored 1, gold 3 scored 0, for the same attention
    assert alignment_share(uniform, [[0, 3]]) == pytest.approx(0.25)
    assert attention_agreement(uniform, [[0, 3]]) == pytest.approx(0.25)
    assert attention_agreement(uniform, [[{0, 1}, 3]]) == pytest.approx((0.5 + 0.25) / 2)
    assert planted_sentence_top1([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7]], [1, 2]) == pytest.approx(0.75)
    sharp = np.eye(4)[None]  # (1, 4, 4): untied rows still score 1 or 0
    assert alignment_share(sharp, [[0, 1, 2, 0]]) == pytest.approx(0.75)


def test_gold_positions_and_lengths_must_be_whole_numbers():
    attention = np.full((2, 2, 3), 1 / 3)
    with pytest.raises(ValueError, match="gold_positions"):
        alignment_share(attention, [[0.5, 1.7], [0, 1]])  # cut to [0, 1] it scored 0.0
    with pytest.raises(ValueError, match="gold links"):
        chance_agreement([[0.7]], [1])
    with pytest.raises(ValueError, match="gold links"):
        attention_agreement(attention[:1], [[1.5, 0]])
    with pytest.raises(ValueError, match="`target_lengths` must hold one number per example"):
        attention_agreement(attention, [[0, 1], [1, 2]], target_lengths=[2])  # IndexError before
    with pytest.raises(ValueError, match="planted_index"):
        planted_sentence_top1([[0.2, 0.8]], [0.5])


def test_bleu_and_perplexity_name_the_argument_they_refuse():
    with pytest.raises(ValueError, match="Received: max_order='2'"):
        corpus_bleu(["the cat sat"], [["the cat sat"]], max_order="2")
    assert corpus_bleu(["the cat"], [["the cat"]]) == 0.0  # no 3- or 4-gram at all: 0 whatever the smoothing
    assert corpus_bleu(["the cat"], [["the cat"]], max_order=2) == pytest.approx(100.0)
    train, evaluated = np.array([[3, 4, 0]]), np.array([[3, 4]])
    with pytest.raises(ValueError, match="smoothing=nan"):
        unigram_perplexity(train, evaluated, 5, smoothing=float("nan"))
    with pytest.raises(ValueError, match="vocab_size=5.5"):
        unigram_perplexity(train, evaluated, 5.5)


def test_overlay_images_are_taken_as_grey_float_or_pil_and_refused_otherwise():
    from PIL import Image

    colour = np.zeros((28, 28, 3), np.uint8)
    colour[..., 1] = 102
    np.testing.assert_array_equal(as_rgb_uint8(colour / 255.0), colour)  # floats in [0, 1] are scaled
    np.testing.assert_array_equal(as_rgb_uint8(Image.fromarray(colour)), colour)
    assert as_rgb_uint8(colour[..., 1]).shape == (28, 28, 3)  # grey
    blended = white_region(colour / 255.0, np.zeros((28, 28)))
    np.testing.assert_array_equal(blended, colour)  # unattended pixels keep their colour (were drawn black)
    before = len(plt.get_fignums())
    for bad, message in [(np.zeros((28, 28, 2)), r"image.shape=\(28, 28, 2\)"), (colour * 3.0, "in \\[0, 1\\]")]:
        with pytest.raises(ValueError, match=message):
            attention_overlay_grid(bad, ["a"], np.full((1, 4), 0.25), (2, 2))
    with pytest.raises(ValueError, match="list of words"):
        attention_overlay_grid(colour, "ab", np.full((2, 4), 0.25), (2, 2))
    assert len(plt.get_fignums()) == before  # a refused image leaves no figure open
    figure = attention_overlay_grid(colour, ["one"], np.full((1, 4), 0.25), (2, 2), title="a long caption " * 3)
    figure.canvas.draw()
    title = figure._suptitle.get_window_extent()
    assert title.x0 >= 0 and title.x1 <= figure.bbox.width  # wrapped, not cut off on a narrow figure
    assert "max α 0.250" in [axis.get_title() for axis in figure.axes][1]
    plt.close(figure)


def test_text_with_dollar_signs_is_drawn_as_text():
    figure = document_figure([["it", "cost", "$5$"]], [1.0], [[0.2, 0.3, 0.5]], title="price $x$")
    texts = [text for axis in figure.axes for text in axis.texts]
    assert any(text.get_text() == "$5$" and not text.get_parse_math() for text in texts)
    assert not figure.axes[0].title.get_parse_math() or not figure.axes[0]._left_title.get_parse_math()
    plt.close(figure)
    axis = attention_heatmap(np.full((1, 2), 0.5), ["$a$", "b"], ["$c$"])
    assert not any(label.get_parse_math() for label in axis.get_xticklabels() + axis.get_yticklabels())
    plt.close(axis.figure)


def test_document_and_summary_plots_refuse_strings_ragged_rows_nan_and_bad_lengths():
    with pytest.raises(ValueError, match="list of words"):
        document_html(["hello world"], [1.0], [[0.5] * 11])
    with pytest.raises(ValueError, match=r"rows of lengths \[2, 1\]"):
        document_html([["a", "b"], ["c"]], [0.5, 0.5], [[0.5, 0.5], [1.0]])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        confusion_matrix_plot([[1.0, np.nan], [0.0, 2.0]], ["a", "b"])
    axis = confusion_matrix_plot([[3, 1], [0, 4]], ["a", "b"], normalize=True)
    assert axis.images[0].get_clim() == (0.0, 1.0)  # one scale for every normalised matrix
    plt.close(axis.figure)
    axis = exact_match_by_length({"model": {"05": 0.5, "7": 0.25}})  # JSON keys; "05" was a KeyError
    assert list(axis.lines[0].get_xdata()) == [5, 7]
    plt.close(axis.figure)
    with pytest.raises(ValueError, match="two scores for length 5"):
        exact_match_by_length({"model": {"05": 0.5, 5: 0.4}})
    with pytest.raises(ValueError, match="whole numbers"):
        exact_match_by_length({"model": {"five": 0.5}})
