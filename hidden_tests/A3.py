"""Hidden tests of A3: transliteration metrics and beam search pieces (6 points).

The training, evaluation and heat maps of the notebook are not graded here;
the graded parts are the functions a student writes: word accuracy (several
accepted spellings), top-k accuracy, edit distance, one beam-search step and
the length-normalised score.
"""

import numpy as np

from course_lib.grading.checks.a3_transliteration import A3_LIBRARY_ANSWERS
from course_lib.grading.checks.answers import locked_answers_setup, with_locked_answers
from course_lib.grading.spec import Assignment, Question, Test, allclose, exact


def word_accuracy(predictions, references):
    return float(np.mean([p in refs for p, refs in zip(predictions, references)]))


def top_k_accuracy(candidates, references, k):
    return float(np.mean([any(c in refs for c in cands[:k]) for cands, refs in zip(candidates, references)]))


def edit_distance(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def beam_step(log_probs, beam_scores, beam_width):
    vocab = log_probs.shape[1]
    totals = (beam_scores[:, None] + log_probs).ravel()
    best = np.argsort(-totals, kind="stable")[:beam_width]
    return totals[best], best // vocab, best % vocab


def length_normalized_score(log_prob, length, length_penalty):
    return log_prob / length**length_penalty


def _words(rng, count):
    from course_lib.data.transliteration_words import generate_pairs

    return [pair.native for pair in generate_pairs(count, seed=int(rng.integers(1_000_000)))]


def _accuracy_inputs(rng):
    words = _words(rng, 30)
    references = [[words[i]] + ([words[i + 10]] if i % 3 == 0 else []) for i in range(10)]
    predictions = [
        refs[-1] if i % 3 == 0 else (refs[0] if i % 2 == 0 else words[20 + i]) for i, refs in enumerate(references)
    ]
    # A word with its last sign dropped is wrong: a prediction that is only part of an
    # accepted spelling must not count (`p in spelling` would count it).
    predictions[5] = references[5][0][:-1]
    return {"predictions": predictions, "references": references}


def _top_k_inputs(rng):
    # Four beams per word; the right word is at rank 0, 1 or 2, or missing.
    # At k = 2 a rank-2 hit must not count, so cands[:k + 1] fails. Words 0 and 5
    # have a second accepted spelling, and the beams hold that one (checking only
    # the first spelling fails); where no beam is right, the first beam is a
    # right word with its last sign dropped (a substring test would count it).
    words = _words(rng, 60)
    references = [[words[i]] + ([words[50 + i]] if i in (0, 5) else []) for i in range(10)]
    candidates = []
    for i in range(10):
        beams = [words[10 + 4 * i + j] for j in range(4)]
        if i % 4 != 3:
            beams[i % 4] = references[i][-1]
        else:
            beams[0] = words[i][:-1]
        candidates.append(beams)
    return {"candidates": candidates, "references": references}


def _distance_inputs(rng):
    words = _words(rng, 8)
    pairs = [(words[0], words[1]), (words[2], words[2]), ("", words[3]), (words[4], ""), (words[5], words[5][:-1]),
             (words[6], words[6][::-1]), ("kitten", "sitting"), (words[7], words[7] + "ं")]
    return {"pairs": pairs}


def _beam_inputs(beams, vocab, width, dead=0):
    def make(rng):
        logits = rng.normal(size=(beams, vocab)) * 2
        log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        scores = np.sort(rng.normal(size=beams) - 3)[::-1].copy()
        if dead:
            scores[-dead:] = -1e9
        return {"log_probs": log_probs, "scores": scores, "width": width}

    return make


BEAM_CALL = "student.beam_step(inputs['log_probs'], inputs['scores'], inputs['width'])"

ASSIGNMENT = Assignment(
    id="A3",
    notebook="A3_transliteration",
    questions=[
        Question("accuracy", "top-1 word accuracy with several accepted spellings"),
        Question("top_k", "top-k accuracy over the beams"),
        Question("distance", "edit distance between two words"),
        Question("beam", "one step of beam search"),
        Question("length", "length-normalised score"),
    ],
    # The library's own word accuracy, top-k accuracy and edit distance are out of reach while a student's function
    # runs (`answers.call_without_library_answers`, its source sent into the kernel by the set-up): a submission
    # that hands the work to them scores zero on those parts.
    tests=with_locked_answers([
        Test("accuracy: 10 words, some with two spellings", "accuracy", 1.0,
             call="student.word_accuracy(inputs['predictions'], inputs['references'])",
             inputs=_accuracy_inputs, expected=lambda i: word_accuracy(i["predictions"], i["references"])),
        Test("top_k: k = 2", "top_k", 0.5,
             call="student.top_k_accuracy(inputs['candidates'], inputs['references'], 2)",
             inputs=_top_k_inputs, expected=lambda i: top_k_accuracy(i["candidates"], i["references"], 2)),
        Test("top_k: k = 1 equals word accuracy of the first beam", "top_k", 0.5,
             call="student.top_k_accuracy(inputs['candidates'], inputs['references'], 1)",
             inputs=_top_k_inputs, expected=lambda i: top_k_accuracy(i["candidates"], i["references"], 1)),
        Test("distance: Devanagari pairs, empty words, reversals", "distance", 1.0,
             call="[student.edit_distance(a, b) for a, b in inputs['pairs']]",
             inputs=_distance_inputs, expected=lambda i: [edit_distance(a, b) for a, b in i["pairs"]],
             compare=exact()),
        Test("beam: 3 beams, 7 tokens", "beam", 1.0, call=BEAM_CALL, inputs=_beam_inputs(3, 7, 3),
             expected=lambda i: beam_step(i["log_probs"], i["scores"], i["width"]),
             compare=allclose(names=("scores", "parents", "tokens"))),
        Test("beam: first step, one live beam of four", "beam", 1.0, call=BEAM_CALL, inputs=_beam_inputs(4, 9, 4, dead=3),
             expected=lambda i: beam_step(i["log_probs"], i["scores"], i["width"]),
             compare=allclose(names=("scores", "parents", "tokens"))),
        Test("length: penalties 0, 0.6 and 1", "length", 1.0,
             call="[student.length_normalized_score(lp, n, a) for lp, n, a in inputs['cases']]",
             inputs=lambda rng: {"cases": [(-4.2, 5, 0.0), (-7.5, 9, 0.6), (-3.3, 3, 1.0), (-12.0, 14, 1.0)]},
             expected=lambda i: [length_normalized_score(*case) for case in i["cases"]]),
    ]),
    kernel_setup=locked_answers_setup(A3_LIBRARY_ANSWERS),
    cell_timeout=60,  # graded cells take under 4 s in the fast profile; training cells are skipped
    notebook_timeout=600,
    memory_mb=8192,
)
