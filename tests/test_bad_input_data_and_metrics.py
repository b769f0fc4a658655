"""Bad input to the data loaders, the vocabulary and the metrics gives a clear
`ValueError` that says what was received, never a silent wrong result."""

import json

import numpy as np
import pytest
from PIL import Image

from course_lib.data.bbc import load_bbc
from course_lib.data.csv_documents import load_csv_documents
from course_lib.data.dakshina import parse_lines as parse_dakshina_lines
from course_lib.data.flickr8k import load_flickr8k
from course_lib.data.tatoeba import parse_lines as parse_tatoeba_lines
from course_lib.metrics.alignment import attention_agreement
from course_lib.metrics.bleu import corpus_bleu, corpus_chrf
from course_lib.metrics.captioning import (
    attention_on_object, caption_bleu, distinct_caption_rate, exact_caption_match,
)
from course_lib.metrics.language_model import unigram_perplexity
from course_lib.metrics.sequence import exact_match
from course_lib.metrics.transliteration import character_error_rate, word_accuracy
from course_lib.text.vocabulary import Vocabulary


@pytest.mark.parametrize("content, class_names, match", [
    ("category,body\nsport,a match\n", None, r"must be `label,text`.*Received: header \['category', 'body'\]"),
    ("text,label\na match,sport\n", None, r"must be `label,text`.*Received: header \['text', 'label'\]"),
    ("label,text\nsport,fine\n,a match\n", None, "Received: an empty label in row 3"),
    ("sport,fine\nsport,\n", None, "Received: an empty text in row 2"),
    ("label,text\na,one\nb,two\n", ["a", "a", "b"], r"Received duplicates: \['a'\]"),
], ids=["other-header", "swapped-header", "empty-label", "empty-text", "duplicate-classes"])
def test_csv_documents_refuse_bad_headers_rows_and_classes(tmp_path, content, class_names, match):
    path = tmp_path / "docs.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        load_csv_documents(path, class_names=class_names)


def _alignment_args(alignments):
    return (["red circle"], alignments, [[0]], [[0]], np.array([[[True, False]]]), ["red"], ["circle"])


@pytest.mark.parametrize("call, match", [
    (lambda: caption_bleu(["a cat"], [["a cat"]], max_order=0), "max_order=0"),
    (lambda: corpus_chrf(["a cat"], [["a cat"]], char_order=0), "char_order=0"),
    (lambda: corpus_chrf(["a cat"], [["a cat"]], word_order=-1), "word_order=-1"),
    (lambda: corpus_chrf(["a cat"], [["a cat"]], beta=0), "beta=0"),
    (lambda: exact_caption_match("ab", "ab"), "list of captions, not a str. Received"),
    (lambda: distinct_caption_rate("a cat"), "list of captions, not a str. Received"),
    (lambda: word_accuracy([1, 2], ["a", "b"]), r"Received: predictions\[0\] of type int"),
    (lambda: character_error_rate([12], ["a"]), r"Received: predictions\[0\] of type int"),
    (lambda: character_error_rate(["a"], [None]), "Received: NoneType"),
    (lambda: exact_match(np.zeros((2, 0), int), np.zeros((2, 0), int), stop_id=2),
     r"needs `<stop>` \(id 2\).*Received: target.shape=\(2, 0\), 2 row\(s\) without <stop>: \[0, 1\]"),
    (lambda: exact_match([[4, 2]], [[0, 0]], stop_id=2), r"Received: .*without <stop>: \[0\]; target\[0\]=\[0, 0\]"),
    (lambda: exact_match([[5, 6, 2, 0], [5, 6, 2, 0]], [[5, 6, 2, 0], [5, 6, 0, 0]], stop_id=2),
     r"Received: target.shape=\(2, 4\), 1 row\(s\) without <stop>: \[1\]; target\[1\]=\[5, 6, 0, 0\]"),
    (lambda: exact_match([[5, 6]], [[5, 6]], stop_id=2), r"without <stop>: \[0\]; target\[0\]=\[5, 6\]"),
    (lambda: attention_agreement(np.ones((1, 1, 2)), [[0]], source_lengths=[-1]), r"Received: source_lengths=\[-1\]"),
    (lambda: attention_agreement(np.ones((1, 1, 2)), [[0]], source_lengths=[2, 2]), "one integer per example"),
    (lambda: attention_agreement(np.ones((1, 1, 2)), [[0]], source_lengths=[3]), r"source_lengths\[0\]=3"),
    (lambda: corpus_bleu(["a"], [["a"]], smooth_method="foo"), r"one of \['add-k'.*Received: smooth_method='foo'"),
    (lambda: corpus_bleu(["a"], [["a"]], tokenize="foo"), r"one of \[.*'13a'.*Received: tokenize='foo'"),
    (lambda: corpus_bleu(["a"], [None]), "list of strings. Received: NoneType"),
    (lambda: unigram_perplexity([], [], 4), "Received: eval_targets of size 0"),
    (lambda: unigram_perplexity([1, 2], [1.0, 2.0], 4), "integer token ids. Received: dtype=float64"),
    (lambda: unigram_perplexity([1.5], [1], 4), "integer token ids. Received: dtype=float64"),
    (lambda: attention_on_object(*_alignment_args(np.full((1, 2, 2), np.nan))), "NaN or infinite"),
], ids=[
    "bleu-max-order-0", "chrf-char-order-0", "chrf-word-order-neg", "chrf-beta-0", "caption-match-str",
    "distinct-str", "word-accuracy-ints", "cer-ints", "cer-none-refs", "exact-match-width-0",
    "exact-match-empty-target", "exact-match-padding-without-stop", "exact-match-cut-without-stop",
    "agreement-negative-length", "agreement-length-count", "agreement-too-long",
    "bleu-smooth", "bleu-tokenize", "bleu-none-refs", "perplexity-empty", "perplexity-float-eval",
    "perplexity-float-train", "on-object-nan",
])
def test_metrics_refuse_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def _flickr_folder(tmp_path):
    images = tmp_path / "Images"
    images.mkdir()
    for name in ("a.png", "b.png"):
        Image.new("RGB", (8, 8), (200, 10, 10)).save(images / name)
    captions = tmp_path / "captions.txt"
    captions.write_text("image,caption\na.png,a red square\nb.png,another red square\n", encoding="utf-8")
    return images, captions


@pytest.mark.parametrize("keywords, match", [
    ({"limit": -1}, "None or an integer of at least 1. Received: limit=-1"),
    ({"limit": 0}, "Received: limit=0"),
    ({"image_size": 0}, "at least 1. Received: image_size=0"),
    ({"image_size": -4}, "Received: image_size=-4"),
])
def test_flickr8k_refuses_bad_limit_and_image_size(tmp_path, keywords, match):
    images, captions = _flickr_folder(tmp_path)
    with pytest.raises(ValueError, match=match):
        load_flickr8k(images, captions, fractions=(1.0, 0.0, 0.0), verbose=False, **keywords)


def test_dakshina_reports_a_count_that_is_a_digit_but_not_decimal():
    pairs, malformed = parse_dakshina_lines(["घर\tghar\t3\n", "घर\tghr\t²\n"])
    assert [p.roman for p in pairs] == ["ghar"]
    assert [m.line_number for m in malformed] == [2] and "'²' is not a positive integer" in malformed[0].reason


def test_tatoeba_column_report_says_two_columns_are_read_too():
    # Two columns (older exports without attribution) stay accepted, as tests/test_translation_data.py
    # expects; the report for a wrong column count now says so instead of asking for exactly 3.
    pairs, malformed = parse_tatoeba_lines(["Go.\tजाओ।\n", "Too\tmany\tcolumns\there\n"])
    assert [(p.english, p.attribution) for p in pairs] == [("Go.", "")]
    assert "or the first 2, found 4" in malformed[0].reason


def test_load_bbc_refuses_a_file(tmp_path):
    path = tmp_path / "article.txt"
    path.write_text("A title\n\nA body.\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a file. Received: root=.*article.txt"):
        load_bbc(path)


def _saved_vocabulary(tmp_path, **changes):
    path = tmp_path / "vocabulary.json"
    Vocabulary.from_texts(["a cat", "a dog"]).save(path)
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize("changes, match", [
    ({"format_version": 99}, r"vocabulary.json'.*Received: format_version=99"),
    ({"extra": 1, "more": 2}, r"vocabulary.json'.*Received: unexpected keys \['extra', 'more'\]"),
])
def test_vocabulary_load_refuses_unknown_versions_and_keys(tmp_path, changes, match):
    path = _saved_vocabulary(tmp_path, **changes)
    with pytest.raises(ValueError, match=match):
        Vocabulary.load(path)
    assert Vocabulary.load(_saved_vocabulary(tmp_path)).decode([4, 5])  # an untouched file still loads


def test_vocabulary_refuses_float_ids_and_non_utf8_bytes():
    vocabulary = Vocabulary.from_texts(["a cat", "a dog"])
    with pytest.raises(ValueError, match="must be integers. Received: dtype=float64"):
        vocabulary.decode([4.0, 5.0])
    with pytest.raises(ValueError, match=r"`texts\[1\]` is not UTF-8 text. Received: byte b'\\xff'"):
        vocabulary.encode(["a cat", b"\xffa dog"])
    assert vocabulary.decode([]) == "" and vocabulary.encode([b"a dog"]).tolist() == [[4, 6]]
