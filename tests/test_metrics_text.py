"""BLEU/chrF wrappers, transliteration metrics and attention agreement."""

import math

import numpy as np
import pytest

from course_lib.metrics.alignment import attention_agreement, chance_agreement
from course_lib.metrics.bleu import corpus_bleu, corpus_chrf, pick_tokenizer
from course_lib.metrics.transliteration import (
    character_error_rate,
    edit_distance,
    top_k_accuracy,
    word_accuracy,
)


def test_bleu_identical_is_100_and_brevity_penalty_by_hand():
    assert corpus_bleu(["i am going home"], [["i am going home"]]) == pytest.approx(100.0)
    # BLEU-1 of a 3-word prefix of a 6-word reference: precision 1, BP = exp(1 - 6/3).
    score = corpus_bleu(["the cat sat"], [["the cat sat on the mat"]], max_order=1)
    assert score == pytest.approx(100 * math.exp(1 - 2), rel=1e-6)


def test_bleu_orders_and_multi_reference():
    hypothesis = ["the dog sat on a mat"]
    one = corpus_bleu(hypothesis, [["the cat sat on the mat"]], max_order=2)
    two = corpus_bleu(hypothesis, [["the cat sat on the mat", "the dog sat on a rug"]], max_order=2)
    assert two > one  # a second reference can only add matches
    scores = [corpus_bleu(hypothesis, [["the cat sat on the mat"]], max_order=n) for n in (1, 2, 3, 4)]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    # Variable numbers of references per hypothesis.
    mixed = corpus_bleu(["a b c d", "e f g h"], [["a b c d"], ["x y", "e f g h"]])
    assert mixed == pytest.approx(100.0)


def test_bleu_hindi_tokenisation_splits_danda_and_penalises_agreement_errors():
    assert pick_tokenizer(["x"], [["मैं घर जा रहा हूँ।"]]) == "intl"
    assert pick_tokenizer(["a b"], [["a b"]]) == "13a"
    perfect = corpus_bleu(["मैं घर जा रहा हूँ।"], [["मैं घर जा रहा हूँ।"]])
    wrong_gender = corpus_bleu(["मैं घर जा रही हूँ।"], [["मैं घर जा रहा हूँ।"]])
    assert perfect == pytest.approx(100.0)
    assert 0 < wrong_gender < 60


def test_bleu_tokeniser_is_decided_by_the_references_alone():
    # One non-ASCII character in one output used to switch the whole corpus to "intl".
    references = [["He paid $3.50, didn't he?"], ["It's 5-4 (really)."]]
    ascii_system = ["He paid $3.50, didn't he?", "It's 5-4 really."]
    accented_system = ["He paid $3.50, didn't hé?", "It's 5-4 really."]
    assert pick_tokenizer(accented_system, references) == pick_tokenizer(ascii_system, references) == "13a"
    assert pick_tokenizer(["a b"], [["a b"], ["मैं"]]) == "intl"  # any non-ASCII reference decides
    for system in (ascii_system, accented_system):
        score, signature = corpus_bleu(system, references, return_signature=True)
        assert score == corpus_bleu(system, references, tokenize="13a") == corpus_bleu(system, references)
        assert "|tok:13a|smooth:exp|" in signature
    # The two tokenisers do differ on this corpus, so the test would see a switch.
    assert corpus_bleu(accented_system, references, tokenize="intl") != corpus_bleu(accented_system, references)
    _, signature = corpus_bleu(["मैं घर"], [["मैं घर"]], smooth_method="none", return_signature=True)
    assert "|tok:intl|smooth:none|" in signature
    with pytest.raises(ValueError, match="Received: return_signature='yes'"):
        corpus_bleu(["a"], [["a"]], return_signature="yes")


def test_bleu_smoothing_of_orders_without_a_match_as_documented():
    # No 3-gram or 4-gram match: Papineni ("none") gives 0; the others the documented values.
    hypothesis, references = ["the cat sat on a mat"], [["the cat is on the mat"]]
    scores = {m: corpus_bleu(hypothesis, references, smooth_method=m) for m in ("none", "exp", "floor", "add-k")}
    assert scores["none"] == 0.0
    # "exp": precisions 4/6, 1/5, then 1/(2*4) and 1/(4*3) for the unmatched orders.
    assert scores["exp"] == pytest.approx(100 * (4 / 6 * 1 / 5 * 1 / 8 * 1 / 12) ** 0.25)
    assert round(scores["exp"], 2) == 19.30 and round(scores["floor"], 2) == 10.27
    assert round(scores["add-k"], 2) == 32.47
    assert corpus_bleu(hypothesis, references) == scores["exp"]  # the default
    # The module docstring explains the methods with these very figures.
    import course_lib.metrics.bleu as bleu_module

    documented = " ".join(bleu_module.__doc__.split())
    assert f'gives {scores["exp"]:.2f} with "exp" and 0.0 with "none"' in documented
    assert f'({scores["floor"]:.2f} on that example)' in documented and f'({scores["add-k"]:.2f} on that' in documented
    assert "Papineni" in documented and "Papineni" in corpus_bleu.__doc__


def test_bleu_rejects_bad_input():
    with pytest.raises(ValueError, match="one list of references"):
        corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="list of strings"):
        corpus_bleu(["a"], ["a"])
    with pytest.raises(ValueError, match="max_order"):
        corpus_bleu(["a"], [["a"]], max_order=5)
    with pytest.raises(ValueError, match="empty"):
        corpus_bleu([], [])


def test_chrf():
    assert corpus_chrf(["इंडिया"], [["इंडिया"]]) == pytest.approx(100.0)
    close = corpus_chrf(["इंडीया"], [["इंडिया"]])
    far = corpus_chrf(["अमेरिका"], [["इंडिया"]])
    assert 0 <= far < close < 100


def test_word_accuracy_and_top_k_with_several_spellings():
    references = [["बिंद्या", "बिन्द्या"], "घर", "किरण"]
    assert word_accuracy(["बिन्द्या", "घर", "किरन"], references) == pytest.approx(2 / 3)
    candidates = [["बिंदया", "बिन्द्या"], ["घर"], ["किरन", "कीरण", "किरण"]]
    assert top_k_accuracy(candidates, references, k=1) == pytest.approx(1 / 3)
    assert top_k_accuracy(candidates, references, k=2) == pytest.approx(2 / 3)
    assert top_k_accuracy(candidates, references) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="one entry of references"):
        word_accuracy(["a"], ["a", "b"])


def test_character_error_rate_by_hand():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    # "किरन" vs "किरण": 1 substitution over 4 code points; "घ" vs "घर": 1 insertion over 2.
    assert character_error_rate(["किरन", "घ"], ["किरण", "घर"]) == pytest.approx(2 / 6)
    # The closest accepted spelling is used.
    assert character_error_rate(["बिन्द्या"], [["बिंद्या", "बिन्द्या"]]) == 0.0
    with pytest.raises(ValueError, match=r"the CER is undefined. Received: len\(references\)=2, with 0 reference"):
        character_error_rate(["a", "b"], ["", ""])


def test_chance_agreement_is_what_random_positions_reach():
    gold = [[0, 2, {0, 1}, None], [set(), {1, 2, 3}]]  # 3 words of 3 positions, then 1 of 4 (None, set(): not counted)
    expected = np.mean([1 / 3, 1 / 3, 2 / 3, 3 / 4])
    assert chance_agreement(gold, [3, 4]) == pytest.approx(expected)
    rng = np.random.default_rng(0)  # and what random attention reaches, within sampling error
    randomly = [attention_agreement(rng.random((1, 4, 4))[:, :, :3].repeat(1, 0), gold[:1]) for _ in range(2000)]
    assert np.mean(randomly) == pytest.approx(chance_agreement(gold[:1], [3]), abs=0.02)
    with pytest.raises(ValueError, match=r"among its 3 source positions. Received: \[3\]"):
        chance_agreement([[3]], [3])
    with pytest.raises(ValueError, match="one source length per gold alignment"):
        chance_agreement(gold, [3])
    with pytest.raises(ValueError, match=r"undefined. Received: len\(gold_alignments\)=1, with 2 target words read"):
        chance_agreement([[None, set()]], [2])


def test_attention_agreement():
    attention = np.array(
        [
            [[0.9, 0.1, 0.0], [0.2, 0.1, 0.7], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]],  # last = <stop>
        ]
    )
    gold = [[0, 2, {0, 1}]]  # three target words; the third is aligned to two source words
    assert attention_agreement(attention, gold) == pytest.approx(1.0)
    gold_wrong = [[1, 2, None]]  # third word unaligned: not counted
    assert attention_agreement(attention, gold_wrong) == pytest.approx(0.5)
    # Padding columns beyond the source length are ignored.
    padded = np.array([[[0.4, 0.0, 0.6]]])
    assert attention_agreement(padded, [[0]], source_lengths=[2]) == 1.0
    # Each target word's own row: the largest weight over the source positions, not over the steps.
    assert attention_agreement(np.array([[[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]]), [[2, 0]]) == 1.0
    with pytest.raises(ValueError, match="one gold alignment"):
        attention_agreement(attention, [])
    with pytest.raises(ValueError, match=r"undefined. Received: len\(gold_alignments\)=1, with 3 target words read"):
        attention_agreement(attention, [[None, set(), []]])
