"""A3: transliteration metrics and beam-search pieces: word and top-k accuracy, edit distance, a beam step."""

import numpy as np

from course_lib.grading.checks.answers import call_without_library_answers
from course_lib.grading.checks.common import CheckFailed, check_close, check_indices, check_shape, _fail, _passed, _rng

# The course library's own versions of three of A3's graded functions: a submission that hands the work to them
# scores zero on those parts (`answers.call_without_library_answers`).
A3_LIBRARY_ANSWERS = tuple(f"course_lib.metrics.transliteration.{name}"
                           for name in ("word_accuracy", "top_k_accuracy", "edit_distance"))


def check_word_accuracy(word_accuracy):
    references = [["इंडिया"], ["हिंदी", "हिन्दी"], ["कमल"], ["सिता"]]
    score = call_without_library_answers(word_accuracy, lambda: word_accuracy(["इंडिया", "हिन्दी", "कमला", "सीता"], references),
                                         A3_LIBRARY_ANSWERS, error=CheckFailed)
    if not isinstance(score, (float, np.floating)) and not (isinstance(score, (int, np.integer)) and not isinstance(score, bool)):
        _fail(f"word_accuracy should return a number. Received: {score!r}")
    if abs(score - 0.5) > 1e-9:
        hint = " A word is right when it equals ANY of its accepted spellings." if abs(score - 0.25) < 1e-9 else ""
        _fail(f"2 of these 4 predictions are right, so the accuracy is 0.5. Received: {score}.{hint}")
    if word_accuracy(["कमल"], [["कमल"]]) != 1.0:
        _fail("a single correct word must give 1.0.")
    if word_accuracy(["कमल"], [["कमला"]]) != 0.0:
        _fail("a prediction must equal an accepted spelling: कमल is wrong when कमला is expected "
              "(part of a word is not a match).")
    _passed("word_accuracy")


def check_top_k_accuracy(top_k_accuracy):
    references = [["कमल"], ["किरन"]]
    candidates = [["कमला", "कमल", "कामल"], ["किरन", "कीरन", "किरण"]]
    first = call_without_library_answers(top_k_accuracy, lambda: top_k_accuracy(candidates, references, 1),
                                         A3_LIBRARY_ANSWERS, error=CheckFailed)
    if abs(first - 0.5) > 1e-9:
        _fail("with k = 1 only the first candidate counts: 1 of 2 words is right.")
    if abs(top_k_accuracy(candidates, references, 2) - 1.0) > 1e-9:
        _fail("with k = 2 a word is right when one of its first two candidates is accepted.")
    if top_k_accuracy([["कम", "हिन्दी"]], [["कमल", "हिंदी", "हिन्दी"]], 1) != 0.0:
        _fail("a candidate must equal an accepted spelling: कम is part of कमल, not a match.")
    if top_k_accuracy([["कम", "हिन्दी"]], [["कमल", "हिंदी", "हिन्दी"]], 2) != 1.0:
        _fail("a word is right when a candidate equals ANY of its accepted spellings (here the third).")
    _passed("top_k_accuracy")


def check_edit_distance(edit_distance):
    cases = [("kitten", "sitting", 3), ("", "abc", 3), ("abc", "", 3), ("कमल", "कमल", 0), ("हिंदी", "हिन्दी", 2)]
    call_without_library_answers(edit_distance, lambda: edit_distance("kitten", "sitting"), A3_LIBRARY_ANSWERS,
                                 error=CheckFailed)
    for a, b, expected in cases:
        got = edit_distance(a, b)
        if got != expected:
            _fail(f"edit_distance({a!r}, {b!r}) should be {expected} (insertions, deletions, substitutions cost 1). "
                  f"Received: {got}")
    if edit_distance("abcd", "xbcy") != edit_distance("xbcy", "abcd"):
        _fail("edit distance is symmetric.")
    _passed("edit_distance")


def check_beam_step(beam_step):
    rng = _rng(6)
    logits = rng.normal(size=(3, 6))
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    beam_scores = np.array([-1.0, -1.5, -4.0])
    result = beam_step(log_probs, beam_scores, 3)
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        _fail("beam_step should return (scores, parents, tokens).")
    scores, parents, tokens = (check_shape(r, (3,), name) for r, name in zip(result, ("scores", "parents", "tokens")))
    parents, tokens = check_indices(parents, "parents"), check_indices(tokens, "tokens")
    if np.any(parents < 0) or np.any(parents >= 3) or np.any(tokens < 0) or np.any(tokens >= 6):
        _fail("parents index the beams (0..beams-1) and tokens the vocabulary (0..vocab-1).")
    totals = beam_scores[:, None] + log_probs  # (beams, vocab)
    best_three = np.sort(totals.ravel())[::-1][:3]
    pointed_at = beam_scores[parents] + log_probs[parents, tokens]
    if np.allclose(np.sort(scores)[::-1], best_three) and not np.allclose(scores, pointed_at):
        _fail("the scores are right, but (parents, tokens) do not point at them: check how a position in the "
              "flattened beams x vocabulary array becomes a beam and a token.")
    check_close(scores, pointed_at, "scores",
                hint="a candidate's score is its parent beam's score plus the token's log-probability.")
    if np.any(np.diff(scores) > 1e-12):
        _fail("return the candidates best first.")
    if np.sort(totals.ravel())[-3] > scores.min() + 1e-9:
        _fail("a better candidate was left out: choose among all beams x tokens at once, not per beam.")
    single = beam_step(log_probs, np.array([0.0, -1e9, -1e9]), 3)
    if not np.all(np.asarray(single[1]).astype(int) == 0):
        _fail("when only the first beam is alive (the first step), every candidate must come from it.")
    _passed("beam_step")


def check_length_normalized_score(length_normalized_score):
    if abs(length_normalized_score(-6.0, 3, 0.0) - (-6.0)) > 1e-9:
        _fail("with length_penalty = 0 the score is the raw log-probability.")
    if abs(length_normalized_score(-6.0, 3, 1.0) - (-2.0)) > 1e-9:
        _fail("with length_penalty = 1 the score is the mean log-probability per token.")
    if abs(length_normalized_score(-7.0, 2, 1.0) - (-3.5)) > 1e-9:
        _fail("with length_penalty = 1, -7.0 over 2 tokens is -3.5: use / (true division), not //.")
    if abs(length_normalized_score(-6.0, 9, 0.5) - (-2.0)) > 1e-9:
        _fail("with length_penalty = 0.5, -6.0 over 9 tokens is -6.0 / 9 ** 0.5 = -2.0: raise the length to the "
              "penalty, do not multiply by it.")
    _passed("length_normalized_score")
