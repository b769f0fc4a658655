"""Caption words, the caption vocabulary (a text.Vocabulary) and teacher-forcing arrays."""

import numpy as np
import pytest

from course_lib.data.captions import caption_arrays, caption_vocabulary, tokenize_caption
from course_lib.text.vocabulary import GO, PAD, STOP, UNK, Vocabulary

CAPTIONS = ["A dog runs in the park .", "A black dog jumps!", "Two dogs run, in the snow", "a dog's ball"]


def test_tokenize_caption_lowercases_and_drops_punctuation():
    assert tokenize_caption("A dog runs, in the park .") == ["a", "dog", "runs", "in", "the", "park"]
    assert tokenize_caption("A dog's ball!") == ["a", "dog's", "ball"]
    with pytest.raises(ValueError, match="Received: int 3"):
        tokenize_caption(3)


def test_caption_vocabulary_orders_words_by_frequency_then_alphabet():
    vocabulary = caption_vocabulary(CAPTIONS)
    assert isinstance(vocabulary, Vocabulary)
    assert vocabulary.tokens[:4] == ["<pad>", "<GO>", "<stop>", "<unk>"]
    assert vocabulary.tokens[4:7] == ["a", "dog", "in"]  # a x4, dog x2, then the ties: in, the
    assert "." not in vocabulary.tokens and "," not in vocabulary.tokens
    rare = caption_vocabulary(CAPTIONS, min_count=2)
    assert rare.tokens[4:] == ["a", "dog", "in", "the"]
    assert len(caption_vocabulary(CAPTIONS, max_size=6)) == 6


def test_caption_arrays_teacher_forcing_unknown_words_and_cutting():
    vocabulary = caption_vocabulary(CAPTIONS, min_count=2)
    target_in, target_out = caption_arrays(vocabulary, ["A dog in the zoo.", "the dog"])
    a, dog, in_, the = (vocabulary.index[w] for w in ("a", "dog", "in", "the"))
    np.testing.assert_array_equal(target_in[0], [GO, a, dog, in_, the, UNK])
    np.testing.assert_array_equal(target_out[0], [a, dog, in_, the, UNK, STOP])
    np.testing.assert_array_equal(target_in[1], [GO, the, dog, PAD, PAD, PAD])
    np.testing.assert_array_equal(target_out[1], [the, dog, STOP, PAD, PAD, PAD])
    cut_in, cut_out = caption_arrays(vocabulary, ["A dog in the zoo."], max_length=3)
    np.testing.assert_array_equal(cut_in[0], [GO, a, dog])
    # No <stop> after a cut: "a dog <stop>" taught the model to stop in the middle of a sentence.
    np.testing.assert_array_equal(cut_out[0], [a, dog, in_])
    whole_in, whole_out = caption_arrays(vocabulary, ["the dog"], max_length=3)  # 2 words fit with their <stop>
    np.testing.assert_array_equal(whole_in[0], [GO, the, dog])
    np.testing.assert_array_equal(whole_out[0], [the, dog, STOP])
    assert vocabulary.decode(target_out[0]) == "a dog in the <unk>"
    with pytest.raises(ValueError, match="0 captions"):
        caption_arrays(vocabulary, [])


def test_a_bare_string_is_not_taken_for_a_list_of_captions():
    # "a dog runs" used to be read as ten one-letter captions.
    message = r"`captions` must be a list of strings, not a single string. Received: captions='a dog runs'"
    with pytest.raises(ValueError, match=message):
        caption_vocabulary("a dog runs")
    with pytest.raises(ValueError, match=message):
        caption_arrays(caption_vocabulary(CAPTIONS), "a dog runs")


def test_caption_vocabulary_saves_and_loads(tmp_path):
    vocabulary = caption_vocabulary(CAPTIONS)
    vocabulary.save(tmp_path / "vocabulary.json")
    again = Vocabulary.load(tmp_path / "vocabulary.json")
    assert again.tokens == vocabulary.tokens
    np.testing.assert_array_equal(caption_arrays(again, CAPTIONS)[0], caption_arrays(vocabulary, CAPTIONS)[0])


def test_accented_letters_stay_in_their_words():
    """`[a-z0-9]` split "naïve café" into "na", "ve", "caf"; a decomposed accent joins its letter (NFC)."""
    assert tokenize_caption("A naïve café-goer") == ["a", "naïve", "café", "goer"]
    assert tokenize_caption("A nai\u0308ve dog's ball.") == ["a", "naïve", "dog's", "ball"]
    assert tokenize_caption("Two dogs_ run 2 km") == ["two", "dogs", "run", "2", "km"]  # "_" is not a letter
