"""Captioning BLEU compares like with like: references cleaned as the training captions, `<unk>` one word.

The tests go through `tasks.captioning.evaluate_run` (what the CLI, the notebook
and `benchmarks/captioning.py` call) with a stub model that "generates" fixed
token ids, so no training is needed.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from course_lib.data.captions import caption_vocabulary
from course_lib.tasks import captioning as task
from course_lib.text.vocabulary import STOP, UNK


class StubCaptioner:
    """Returns the given token rows from `generate`, like `ImageCaptioner.generate`."""

    def __init__(self, rows):
        self.rows = rows

    def generate(self, inputs, max_length=None, beam_width=1):
        width = max(len(row) for row in self.rows) + 1
        tokens = np.zeros((len(self.rows), width), "int32")
        for n, row in enumerate(self.rows):
            tokens[n, : len(row)] = row
            tokens[n, len(row)] = STOP
        return {"tokens": tokens, "alignments": np.zeros((len(self.rows), width, 4), "float32")}


def flickr_bleu(vocabulary, generated_words, references):
    """BLEU of `evaluate_run` on a Flickr-style part whose model writes `generated_words` (word lists)."""
    rows = [[UNK if word == "<unk>" else vocabulary.index[word] for word in words] for words in generated_words]
    part = SimpleNamespace(captions=references)
    metrics, captions, _ = task.evaluate_run(StubCaptioner(rows), vocabulary, part, {}, "flickr8k")
    return metrics, captions


def test_hypothesis_equal_to_the_cleaned_reference_scores_100():
    raw = "A dog runs , in the park ."  # Flickr8k style: capital, spaced punctuation
    vocabulary = caption_vocabulary([raw, "Two men sit in a boat ."])
    metrics, captions = flickr_bleu(vocabulary, [["a", "dog", "runs", "in", "the", "park"]],
                                    [[raw, "A brown dog is running on grass ."]])
    assert captions == ["a dog runs in the park"]
    # Before the fix the raw reference was scored: "a" never matched "A", and "," "." were unmatched words.
    assert metrics["bleu1"] == pytest.approx(100.0)
    assert metrics["bleu4"] == pytest.approx(100.0)


def test_unk_costs_exactly_one_token():
    vocabulary = caption_vocabulary(["the cat sat on the mat today", "the dog sat on the rug"])
    references = [["The cat sat on the mat today ."]]
    metrics, captions = flickr_bleu(vocabulary, [["the", "<unk>", "sat", "on", "the", "mat", "today"]], references)
    assert captions == ["the <unk> sat on the mat today"]
    # 7 words, 6 of them right, same length as the reference (no brevity penalty): BLEU-1 = 6/7.
    # sacrebleu's 13a tokeniser would read "<unk>" as "< unk >": 9 tokens, BLEU-1 = 6/9.
    assert metrics["bleu1"] == pytest.approx(100 * 6 / 7)
    wrong_word, _ = flickr_bleu(vocabulary, [["the", "dog", "sat", "on", "the", "mat", "today"]], references)
    assert metrics == pytest.approx({k: v for k, v in wrong_word.items() if k in metrics})


def test_unk_never_matches_a_reference_word():
    # A reference may hold the word "unk"; the generated <unk> is still a wrong word, not a match.
    vocabulary = caption_vocabulary(["a cat on a mat"])
    metrics, _ = flickr_bleu(vocabulary, [["a", "<unk>", "on", "a", "mat"]], [["A unk on a mat ."]])
    assert metrics["bleu1"] == pytest.approx(100 * 4 / 5)


def test_score_captions_helpers():
    assert task.bleu_reference("A dog's ball, in the PARK .") == "a dog's ball in the park"
    assert task.bleu_hypothesis("the <unk> sat") == f"the {task.UNK_FOR_BLEU} sat"
    scores = task.score_captions(["a dog runs"], [["A dog runs .", "A cat sleeps ."]], max_order=2)
    assert scores == pytest.approx({"bleu1": 100.0, "bleu2": 100.0})
    with pytest.raises(ValueError, match="references"):
        task.score_captions(["a dog"], ["A dog ."])  # one string instead of a list of references


def test_the_image_blind_caption_is_the_best_fixed_caption_chosen_on_validation():
    train = ["a red circle"] * 5 + ["a red circle above a blue square"] * 3 + ["a green square left of a red circle"]
    valid = [["a red circle above a green square"], ["a blue circle above a blue square"], ["a red circle"]]
    caption, bleu4 = task.image_blind_caption(train, valid)
    scores = {c: task.score_captions([c] * len(valid), valid)["bleu4"] for c in set(train)}
    assert caption == max(scores, key=scores.get) == "a red circle above a blue square"  # not the most frequent
    assert bleu4 == pytest.approx(scores[caption]) and bleu4 > 0
    assert task.image_blind_caption(train, valid, candidates=1)[0] == "a red circle"  # only the most frequent tried
    with pytest.raises(ValueError, match=r"Received: 0 training captions, 3 validation images"):
        task.image_blind_caption([], valid)
