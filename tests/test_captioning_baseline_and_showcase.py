"""The image-blind next-word baseline and the choice of the test image lecture 7 draws."""

import numpy as np
import pytest

from course_lib.data.captions import caption_vocabulary
from course_lib.data.shapes import COLOUR_NAMES, SHAPES, generate_shapes, object_location_masks
from course_lib.metrics.captioning import bigram_next_word_accuracy, object_word_hits, object_words
from course_lib.tasks.captioning import image_blind_accuracy, pick_showcase_image

# Training pairs: 1 -> 4 three times; 4 -> 5 twice, 4 -> 6 once; 5 -> 2, 6 -> 2.
TRAIN = (np.array([[1, 4, 5, 0], [1, 4, 5, 0], [1, 4, 6, 0]]), np.array([[4, 5, 2, 0], [4, 5, 2, 0], [4, 6, 2, 0]]))


def test_bigram_baseline_guesses_the_most_frequent_next_word_and_skips_padding():
    # 1 -> 4 right, 4 -> 5 wrong (6 is next), 6 -> 2 right; the padding step is not counted (else 3/4).
    assert bigram_next_word_accuracy(TRAIN, (np.array([[1, 4, 6, 0]]), np.array([[4, 6, 2, 0]])), 10) == pytest.approx(2 / 3)
    # A word never followed by anything in training (9) gets the padding id, which is never right.
    assert bigram_next_word_accuracy(TRAIN, (np.array([[1, 9]]), np.array([[4, 2]])), 10) == 0.5
    # A tie goes to the lowest id: 7 -> 3 and 7 -> 8 once each, so 7 -> 3.
    tie = (np.array([[7], [7]]), np.array([[8], [3]]))
    assert bigram_next_word_accuracy(tie, (np.array([[7, 7]]), np.array([[3, 8]])), 10) == 0.5
    # The padding id need not be 0.
    shifted = tuple(np.where(a == 0, 9, a) for a in TRAIN)
    assert bigram_next_word_accuracy(shifted, (np.array([[1, 4, 6, 9]]), np.array([[4, 6, 2, 9]])), 10,
                                     pad_id=9) == pytest.approx(2 / 3)
    # ... and then a word never followed in training (8) guesses 9, not 0, which is a real word here.
    assert bigram_next_word_accuracy(shifted, (np.array([[8]]), np.array([[0]])), 10, pad_id=9) == 0.0


@pytest.mark.parametrize("train, evaluation, vocab_size, match", [
    (TRAIN, (np.array([[1, 4]]), np.array([[4]])), 10, "one shape"),
    (TRAIN, (np.array([1, 4]), np.array([4, 2])), 10, "one shape"),
    (TRAIN, (np.array([[1.0, 4.0]]), np.array([[4.0, 2.0]])), 10, "integer"),
    (TRAIN, (np.array([[1, 4]]), np.array([[4, 12]])), 10, "lie in"),
    (TRAIN, (np.array([[1, 4]]), np.array([[0, 0]])), 10, "no real target"),
    (TRAIN, (np.array([[1, 4]]), np.array([[4, 2]])), True, "vocab_size"),
    (TRAIN, (np.array([[1, 4]]), np.array([[4, 2]])), 0, "vocab_size"),
])
def test_bigram_baseline_refuses_bad_input(train, evaluation, vocab_size, match):
    with pytest.raises(ValueError, match=match):
        bigram_next_word_accuracy(train, evaluation, vocab_size)


@pytest.mark.parametrize("pad_id", [0.5, True, np.bool_(False), -1, 10, "0"])
def test_bigram_baseline_refuses_a_padding_id_that_is_not_an_id(pad_id):
    # pad_id=0.5 scored the padding as real targets (0.750 instead of 0.667), and True was read as 1.
    with pytest.raises(ValueError, match="pad_id"):
        bigram_next_word_accuracy(TRAIN, (np.array([[1, 4, 6, 0]]), np.array([[4, 6, 2, 0]])), 10, pad_id=pad_id)


def test_bigram_baseline_agrees_with_counting_every_pair():
    # Random captions with many ties, against a plain count of every (previous, next) pair.
    rng = np.random.default_rng(0)
    for _ in range(20):
        train_in, train_out = rng.integers(0, 6, size=(2, 30, 5))
        eval_in, eval_out = rng.integers(0, 7, size=(2, 10, 5))
        eval_out[0, 0] = 3  # at least one real target
        counts = np.zeros((7, 7), int)
        for previous, following in zip(train_in.ravel(), train_out.ravel()):
            if following != 0:
                counts[previous, following] += 1
        guess = np.where(counts.max(axis=1) > 0, counts.argmax(axis=1), 0)  # argmax: the lowest id of a tie
        real = eval_out != 0
        expected = np.mean(guess[eval_in[real]] == eval_out[real])
        assert bigram_next_word_accuracy((train_in, train_out), (eval_in, eval_out), 7) == pytest.approx(expected)


def test_image_blind_accuracy_scores_captions_through_the_vocabulary():
    train = ["a red circle", "a red square", "a blue circle"]
    vocabulary = caption_vocabulary(train + ["a blue square"])
    # <GO> -> a right; a -> red (2 of 3) wrong; blue -> circle wrong; square -> <stop> right.
    assert image_blind_accuracy(vocabulary, train, ["a blue square"]) == 0.5
    # Cut as the run's max_length would, with no <stop> after the cut: two steps (<GO> a / a blue) score
    # 1 of 2, one step (<GO> / a) 1 of 1.
    assert image_blind_accuracy(vocabulary, train, ["A blue square."], max_length=2) == 0.5
    assert image_blind_accuracy(vocabulary, train, ["A blue square."], max_length=1) == 1.0


def _look_at_objects(data, masks, alignments, n):
    """Image `n`'s object words look at an object they name."""
    for position, colour, shape in object_words(data.captions[n].split(), COLOUR_NAMES, SHAPES):
        k = next(k for k in range(3) if data.shapes[n, k] == SHAPES.index(shape)
                 and data.colours[n, k] == COLOUR_NAMES.index(colour))
        alignments[n, position] = 0.0
        alignments[n, position, np.flatnonzero(masks[n, k])[0]] = 1.0


def _all_differ(data, n):
    """Image `n`'s objects all differ in colour and all differ in shape."""
    present = data.shapes[n] >= 0
    return (len(set(data.colours[n][present].tolist())) == present.sum()
            and len(set(data.shapes[n][present].tolist())) == present.sum())


def _showcase_data():
    data = generate_shapes(40, seed=5)
    masks = object_location_masks(data.boxes, data.image_size, 6, 6)
    several = [n for n in range(len(data)) if (data.shapes[n] >= 0).sum() >= 2]
    distinct = [n for n in several
                if len({(c, s) for c, s in zip(data.colours[n], data.shapes[n]) if s >= 0}) == (data.shapes[n] >= 0).sum()]
    steps = max(len(c.split()) for c in data.captions) + 1
    alignments = np.zeros((len(data), steps, 36), "float32")
    for n in range(len(data)):
        alignments[n, :, np.flatnonzero(~masks[n].any(axis=0))[0]] = 1.0  # every word looks at empty ground ...
    best = distinct[-1]
    _look_at_objects(data, masks, alignments, best)  # ... except in one image
    return data, masks, alignments, distinct, best, several


def test_showcase_prefers_exact_captions_then_one_object_per_phrase_then_hits():
    data, masks, alignments, distinct, best, several = _showcase_data()
    assert len(distinct) >= 3
    index, words = pick_showcase_image(data, data.captions, alignments, (6, 6))
    assert index == best
    assert words == object_word_hits(data.captions[best].split(), alignments[best], data.colours[best],
                                     data.shapes[best], masks[best], COLOUR_NAMES, SHAPES)
    assert all(word["hit"] for word in words)
    # A wrong caption loses to any exact one, however well it looks: the exact candidates tie on hits (none),
    # and the first whose objects all differ in colour and shape wins.
    captions = list(data.captions)
    captions[best] = captions[best].replace(" above ", " left of ") if " above " in captions[best] \
        else captions[best].replace(" left of ", " above ")
    assert pick_showcase_image(data, captions, alignments, (6, 6))[0] == next(
        n for n in distinct if _all_differ(data, n))
    # An image with two alike objects ("a blue triangle left of a blue triangle") looks at them as well, but
    # there a hit may be on the other one: an image whose phrases each name one object wins the tie.
    alike = next(n for n in several if n not in distinct and n < best)
    _look_at_objects(data, masks, alignments, alike)
    assert pick_showcase_image(data, data.captions, alignments, (6, 6))[0] == best
    # Among images with a single object, none is a candidate.
    single = data.subset([n for n in range(len(data)) if (data.shapes[n] >= 0).sum() == 1])
    with pytest.raises(ValueError, match="two or more objects"):
        pick_showcase_image(single, single.captions, np.zeros((len(single), 8, 36)), (6, 6))


def test_showcase_breaks_a_tie_of_hits_for_objects_that_all_differ():
    data, masks, alignments, distinct, _, _ = _showcase_data()
    differ = [n for n in distinct if _all_differ(data, n)]
    shared = [n for n in distinct if n not in differ]  # e.g. "a blue square above a green triangle above a yellow square"
    assert differ and shared and shared[0] < differ[-1]
    # Both look at every object they name (hit share 1.0): the image whose objects all differ in colour
    # and in shape wins, though the other comes first.
    _look_at_objects(data, masks, alignments, shared[0])
    _look_at_objects(data, masks, alignments, differ[-1])
    index, words = pick_showcase_image(data, data.captions, alignments, (6, 6))
    assert index == differ[-1] and all(word["hit"] for word in words)
    # More hits still come first: one object word of that image now looks at empty ground.
    position = object_words(data.captions[index].split(), COLOUR_NAMES, SHAPES)[0][0]
    alignments[index, position] = 0.0
    alignments[index, position, np.flatnonzero(~masks[index].any(axis=0))[0]] = 1.0
    assert pick_showcase_image(data, data.captions, alignments, (6, 6))[0] == shared[0]


def test_showcase_refuses_mismatched_input():
    data, _, alignments, _, _, _ = _showcase_data()
    with pytest.raises(ValueError, match="one caption"):
        pick_showcase_image(data, data.captions[:-1], alignments, (6, 6))
    with pytest.raises(ValueError, match="grid"):
        pick_showcase_image(data, data.captions, alignments, (5, 6))
    with pytest.raises(ValueError, match="not a str"):
        pick_showcase_image(data, data.captions[0], alignments, (6, 6))
