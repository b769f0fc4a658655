"""Document pipeline: sentences, words, two-level padding, visible truncation."""

import warnings

import numpy as np
import pytest

from course_lib.text.documents import DocumentPipeline, pad_documents, split_sentences

TEXTS = [
    "Shares rose 1.5% today. Investors were happy!\nThe bank said so.",
    "One sentence only",
    "Is it raining? \"Yes,\" she said. It is.",
]


def test_split_sentences_keeps_numbers_and_splits_at_ends_and_lines():
    assert split_sentences(TEXTS[0]) == ["Shares rose 1.5% today.", "Investors were happy!", "The bank said so."]
    assert split_sentences(TEXTS[2]) == ["Is it raining?", "\"Yes,\" she said.", "It is."]
    assert split_sentences("   ") == []
    with pytest.raises(ValueError, match="string"):
        split_sentences(None)


def test_split_sentences_ends_hindi_sentences_at_the_danda():
    """Hindi text came back as one sentence: only . ! ? ended one."""
    text = "राम घर गया। वह खुश है॥ Then he slept."
    assert split_sentences(text) == ["राम घर गया।", "वह खुश है॥", "Then he slept."]


def test_pipeline_words_ids_and_round_trip(tmp_path):
    pipeline = DocumentPipeline.from_texts(TEXTS)
    words = pipeline.split(TEXTS)
    assert words[0][0] == ["shares", "rose", "1", "5", "today"]  # lower-cased, punctuation dropped
    assert words[1] == [["one", "sentence", "only"]]
    ids, report = pipeline.encode(TEXTS)
    assert ids.shape == (3, 3, 5) and ids.dtype == np.int32
    assert not report.truncated and report.documents == 3
    assert pipeline.words(ids[1]) == [["one", "sentence", "only"]]
    assert np.all(ids[1, 1:] == 0)
    pipeline.save(tmp_path)
    again = DocumentPipeline.load(tmp_path)
    np.testing.assert_array_equal(again.encode(TEXTS)[0], ids)
    unknown, _ = pipeline.encode(["Zebras rose."])
    assert unknown[0, 0].tolist() == [3, pipeline.vocabulary.index["rose"]]


def test_truncation_is_counted_and_warned():
    pipeline = DocumentPipeline.from_texts(TEXTS, max_sentences=2, max_words=3)
    with pytest.warns(UserWarning, match="2 of 3 documents cut"):
        ids, report = pipeline.encode(TEXTS)
    assert ids.shape == (3, 2, 3)
    assert report.documents_cut == 2 and report.sentences_dropped == 2
    # Only "shares rose 1 5 today" (5 words) is longer than 3 words.
    assert report.sentences_cut == 1
    # Dropped sentences "the bank said so" and "it is", and "5 today" of the long one.
    assert report.words_dropped == 4 + 2 + 2
    assert "8 words dropped" in str(report)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipeline.encode(["A b."])  # nothing cut, no warning


def test_pad_documents_to_limits_and_errors():
    ids, report = pad_documents([[[5, 6], [7]], [], [[8, 9, 10, 11]]], max_sentences=3, max_words=3, pad_to_limits=True)
    assert ids.shape == (3, 3, 3)
    assert ids[0].tolist() == [[5, 6, 0], [7, 0, 0], [0, 0, 0]]
    assert report.empty_documents == 1 and report.sentences_cut == 1 and report.words_dropped == 1
    with pytest.raises(ValueError, match="max_words"):
        pad_documents([[[1]]], max_words=0)
    with pytest.raises(ValueError, match="pad_to_limits"):
        pad_documents([[[1]]], pad_to_limits=True)
    with pytest.raises(ValueError, match="list of strings"):
        DocumentPipeline.from_texts("just one string")
