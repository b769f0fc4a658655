"""Captioning metrics: BLEU over all references, exact match, attention on objects."""

import numpy as np
import pytest

from course_lib.data.shapes import COLOUR_NAMES, SHAPES, generate_shapes, object_location_masks
from course_lib.metrics.captioning import (
    attention_on_object, caption_bleu, caption_error_kind, caption_error_kinds, distinct_caption_rate,
    exact_caption_match, object_word_hits, object_words, parse_object_caption,
)


def test_bleu_uses_every_reference():
    hypotheses = ["a dog runs on the grass", "two men sit in a boat"]
    one = [["a cat sleeps on a sofa"], ["two men fish from a small boat"]]
    five = [["a cat sleeps on a sofa", "a dog runs on the grass"], ["two men fish from a small boat"]]
    low, high = caption_bleu(hypotheses, one), caption_bleu(hypotheses, five)
    assert set(high) == {"bleu1", "bleu2", "bleu3", "bleu4"}
    assert high["bleu4"] > low["bleu4"] and high["bleu1"] > low["bleu1"]
    assert high["bleu1"] >= high["bleu2"] >= high["bleu3"] >= high["bleu4"]
    perfect = caption_bleu(["a red circle above a blue square"], [["a red circle above a blue square"]])
    assert perfect == pytest.approx({f"bleu{n}": 100.0 for n in range(1, 5)})


def test_exact_match_and_distinct_rate():
    assert exact_caption_match(["a red circle", "a blue square"], ["a red  circle", "a blue circle"]) == 0.5
    assert distinct_caption_rate(["a dog", "a dog", "a cat", "A  dog"]) == 0.5
    with pytest.raises(ValueError, match="at least one. Received: 1 and 0"):
        exact_caption_match(["a"], [])


def test_object_words_pair_colours_with_shapes():
    words = "a red circle left of a blue square above a triangle".split()
    assert object_words(words, COLOUR_NAMES, SHAPES) == [
        (1, "red", "circle"), (2, "red", "circle"), (6, "blue", "square"), (7, "blue", "square"),
        (10, None, "triangle"),
    ]


def _one_image():
    data = generate_shapes(60, seed=5)
    n = next(i for i in range(len(data)) if (data.shapes[i] >= 0).sum() == 2)
    return data.subset([n])


def test_attention_on_the_right_object_scores_one_and_elsewhere_zero():
    data = _one_image()
    masks = object_location_masks(data.boxes, 48, 6, 6)  # (1, 3, 36)
    words = data.captions[0].split()  # "a C1 S1 <rel> a C2 S2"
    named = object_words(words, COLOUR_NAMES, SHAPES)
    good = np.zeros((1, len(words), 36), "float32")
    bad = np.zeros_like(good)
    empty = ~(masks[0, 0] | masks[0, 1])
    for position, _, _ in named:
        obj = 0 if position < words.index("a", 1) else 1
        good[0, position, np.flatnonzero(masks[0, obj])[0]] = 1.0
        bad[0, position, np.flatnonzero(empty)[0]] = 1.0
    args = (data.colours, data.shapes, masks, COLOUR_NAMES, SHAPES)
    right = attention_on_object(data.captions, good, *args)
    assert right["rate"] == 1.0 and right["words"] == 4 and right["colour_rate"] == 1.0
    assert attention_on_object(data.captions, bad, *args)["rate"] == 0.0
    # Looking at the other object when naming the first is a miss unless both look alike.
    swapped = good[:, :, :].copy()
    swapped[0, [1, 2]] = good[0, [5, 6]]
    same_kind = (data.colours[0, 0], data.shapes[0, 0]) == (data.colours[0, 1], data.shapes[0, 1])
    rate = attention_on_object(data.captions, swapped, *args)["rate"]
    assert rate == (1.0 if same_kind else 0.5)
    # Word by word: the first phrase's words now sit on object 1, the second's still on object 1.
    hits = object_word_hits(words, swapped[0], data.colours[0], data.shapes[0], masks[0], COLOUR_NAMES, SHAPES)
    assert [h["position"] for h in hits] == [1, 2, 5, 6]
    assert [h["on"] for h in hits] == [[1], [1], [1], [1]]
    assert [h["hit"] for h in hits] == ([True] * 4 if same_kind else [False, False, True, True])
    assert hits[0]["named"] == ([0, 1] if same_kind else [0]) and hits[1]["kind"] == "shape"
    covered = masks[0, hits[0]["named"]].any(axis=0).mean()  # share of the 36 locations on object 0
    assert hits[0]["chance"] == pytest.approx(covered) and 0 < covered < 0.5
    assert attention_on_object(data.captions, swapped, *args)["chance"] == pytest.approx(
        np.mean([h["chance"] for h in hits]))


def test_a_named_object_absent_from_the_image_is_a_miss():
    data = _one_image()
    masks = object_location_masks(data.boxes, 48, 6, 6)
    colour = next(c for c in COLOUR_NAMES if COLOUR_NAMES.index(c) not in data.colours[0])
    caption = [f"a {colour} circle"]
    weights = np.tile(masks[0].any(axis=0)[None, None].astype("float32"), (1, 3, 1))
    result = attention_on_object(caption, weights, data.colours, data.shapes, masks, COLOUR_NAMES, SHAPES)
    assert result["words"] == 2 and result["hits"] == 0


def test_an_even_attention_scores_the_share_of_its_tied_locations_on_the_object():
    data = _one_image()
    masks = object_location_masks(data.boxes, 48, 6, 6)
    words = data.captions[0].split()
    even = np.full((1, len(words) + 1, 36), 1 / 36)  # an untrained model: every location ties
    args = (data.colours, data.shapes, masks, COLOUR_NAMES, SHAPES)
    result = attention_on_object(data.captions, even, *args)
    hits = object_word_hits(words, even[0], data.colours[0], data.shapes[0], masks[0], COLOUR_NAMES, SHAPES)
    # Each word scores what a random look would, not 1 or 0 by where the object happens to lie.
    assert [h["credit"] for h in hits] == pytest.approx([h["chance"] for h in hits])
    assert result["rate"] == pytest.approx(result["chance"]) and 0 < result["rate"] < 0.5
    # A single largest weight still scores 1 or 0, and credit agrees with hit.
    first_location = np.zeros((len(words) + 1, 36))
    first_location[:, 0] = 1.0
    for h in object_word_hits(words, first_location, data.colours[0], data.shapes[0], masks[0],
                              COLOUR_NAMES, SHAPES):
        assert h["credit"] == float(h["hit"])


def test_shape_mismatch_raises():
    data = _one_image()
    masks = object_location_masks(data.boxes, 48, 6, 6)
    with pytest.raises(ValueError, match="same locations"):
        attention_on_object(data.captions, np.zeros((1, 7, 49)), data.colours, data.shapes, masks,
                            COLOUR_NAMES, SHAPES)


REFERENCE = "a red circle above a blue square left of a green triangle"


@pytest.mark.parametrize("hypothesis, kind", [
    (REFERENCE, None),
    ("A red circle above  a blue square left of a green triangle", None),  # exact as exact_caption_match counts it
    ("a red circle above a green triangle left of a blue square", "order"),  # the image's objects, out of order
    ("a blue square above a red circle left of a green triangle", "order"),
    ("a red circle above a blue circle left of a green triangle", "recognition"),  # no blue circle in the image
    ("a yellow circle above a blue square left of a green triangle", "recognition"),
    ("a red circle left of a blue square left of a green triangle", "relation"),
    ("a red circle above a green triangle", "order"),  # skipped the blue square; "above" fits the triangle
    ("a red circle left of a yellow triangle", "recognition"),  # a wrong object, whatever its link word
    ("a red circle above a blue square above a green triangle", "relation"),
    ("a red circle above a blue square", "count"),
    ("a red circle above a blue square left of a green triangle left of a red circle", "count"),
    ("a red circle above a blue square left of", "malformed"),
    ("a red circle above blue square", "malformed"),
    ("a red above a blue square", "malformed"),
    ("", "malformed"),
])
def test_the_first_mistake_of_a_caption_is_named(hypothesis, kind):
    assert caption_error_kind(hypothesis, REFERENCE, COLOUR_NAMES, SHAPES) == kind


def test_the_parser_inverts_the_data_captions():
    data = generate_shapes(60, seed=4)
    for n, caption in enumerate(data.captions):
        objects, links = parse_object_caption(caption.split(), COLOUR_NAMES, SHAPES)
        count = int((data.shapes[n] >= 0).sum())
        assert objects == [(COLOUR_NAMES[data.colours[n, k]], SHAPES[data.shapes[n, k]]) for k in range(count)]
        assert links == ["above" if data.rows[n, k] > data.rows[n, k - 1] else "left of" for k in range(1, count)]


def test_error_kinds_count_a_test_set_and_refuse_bad_input():
    hypotheses = [REFERENCE, "a red circle above a blue circle left of a green triangle",
                  "a red circle above a blue square"]
    counts = caption_error_kinds(hypotheses, [REFERENCE] * 3, COLOUR_NAMES, SHAPES)
    assert counts == {"exact": 1, "recognition": 1, "order": 0, "relation": 0, "count": 1, "malformed": 0}
    with pytest.raises(ValueError, match="Received: 1 captions, 2 references"):
        caption_error_kinds([REFERENCE], [REFERENCE] * 2, COLOUR_NAMES, SHAPES)
    with pytest.raises(ValueError, match="Received: 'a dog runs'"):
        caption_error_kind("a red circle", "a dog runs", COLOUR_NAMES, SHAPES)
    with pytest.raises(ValueError, match="not a str"):
        caption_error_kinds(REFERENCE, REFERENCE, COLOUR_NAMES, SHAPES)
