"""What goes wrong: kinds of spelling mistake (vowel length, virama, nasal, word end), where in the word, accuracy by length."""

import difflib
import os
import re

import numpy as np

from course_lib.metrics.transliteration import as_reference_lists


_VOWEL_LENGTH = {frozenset(p) for p in [("ि", "ी"), ("ु", "ू"), ("इ", "ई"), ("उ", "ऊ"), ("अ", "आ"), ("े", "ै"), ("ो", "ौ")]}
_NASAL_SIGNS = frozenset("ंँ")  # anusvara, chandrabindu
_NASAL_HALF = re.compile("[ङञणनम]्")  # a nasal consonant + virama, the anusvara's other spelling
ERROR_KINDS = ("vowel length", "virama / conjunct", "nasal", "word end", "other")


def _is_nasal_swap(removed, added):
    """An anusvara written as a nasal consonant + virama, or back (हिंदी / हिन्दी)."""
    return removed != added and _NASAL_HALF.sub("ं", removed) == _NASAL_HALF.sub("ं", added)


def error_kinds(prediction, reference):
    """Which kinds of mistake turn `reference` into `prediction` (a set; empty if equal).

    - "vowel length": a short vowel sign for a long one or back (ि/ी, ु/ू,
      an extra or missing ा);
    - "virama / conjunct": a virama (्) gained or lost, i.e. a conjunct split or made;
    - "nasal": the anusvara rule: an anusvara (ं) or chandrabindu (ँ) gained,
      lost or replaced, or an anusvara spelt as a nasal consonant + virama
      (ं ↔ न्, म्, ण्...; this swap is not also a "virama / conjunct"). A
      nasal *consonant* replaced by another letter (म for व) is not "nasal";
    - "word end": any change in the last two letters of the reference;
    - "other": anything else (a wrong consonant, a missing letter...).
    """
    kinds = set()
    if prediction == reference:
        return kinds
    matcher = difflib.SequenceMatcher(a=reference, b=prediction, autojunk=False)
    for operation, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if operation == "equal":
            continue
        removed, added = reference[a_start:a_end], prediction[b_start:b_end]
        changed = set(removed) | set(added)
        found = False
        if _is_nasal_swap(removed, added):
            kinds.add("nasal")
            found = True
        else:
            if operation == "replace" and len(removed) == len(added) and all(
                frozenset((x, y)) in _VOWEL_LENGTH for x, y in zip(removed, added)
            ) or (operation != "replace" and changed == {"ा"}):
                kinds.add("vowel length")
                found = True
            if "्" in changed:
                kinds.add("virama / conjunct")
                found = True
            if changed & _NASAL_SIGNS:
                kinds.add("nasal")
                found = True
        if a_end >= len(reference) - 1:
            kinds.add("word end")
            found = True
        if not found:
            kinds.add("other")
    return kinds


def wrong_words(predictions, references):
    """The `(prediction, first accepted spelling)` pairs of the words a model got wrong."""
    accepted_lists = as_reference_lists(references, len(predictions))
    return [(prediction, accepted[0]) for prediction, accepted in zip(predictions, accepted_lists)
            if prediction not in accepted]


def error_positions(predictions, references):
    """Where in the word a model's wrong words first go wrong, and how many come out too short.

    A wrong word "first goes wrong in the second half" when its prediction
    agrees with the reference (its first accepted spelling, as in
    `wrong_words`) on at least the first half of the reference's letters.

    Args:
        predictions: one predicted string per word.
        references: the accepted spellings of each word (a list of strings
            per word, or one string per word).

    Returns:
        `{"wrong": n, "second_half": how many of the n first go wrong in the
        second half, "too_short": how many of the n are shorter than their
        reference}`.
    """
    if isinstance(predictions, (str, bytes)):
        raise ValueError(f"`predictions` must hold one string per word, not be one string. "
                         f"Received: predictions={predictions!r}")
    wrong = wrong_words(predictions, references)
    return {
        "wrong": len(wrong),
        "second_half": sum(len(os.path.commonprefix([p, r])) >= len(r) / 2 for p, r in wrong),
        "too_short": sum(len(p) < len(r) for p, r in wrong),
    }


def error_summary(predictions, references):
    """Counts of each error kind over the wrong words (a word may count in several)."""
    counts = dict.fromkeys(ERROR_KINDS, 0)
    for prediction, accepted in zip(predictions, references):
        if prediction in accepted:
            continue
        closest = min(accepted, key=lambda r: -difflib.SequenceMatcher(a=r, b=prediction).ratio())
        for kind in error_kinds(prediction, closest):
            counts[kind] += 1
    return counts


def accuracy_by_length(words, predictions, references, bins=((1, 6), (7, 9), (10, 12), (13, 99))):
    """Top-1 accuracy per range of roman word length: `{"7-9": (accuracy, count)}`."""
    table = {}
    for low, high in bins:
        hits = [p in r for w, p, r in zip(words, predictions, references) if low <= len(w) <= high]
        if hits:
            label = f"{low}-{high}" if high < 99 else f"{low}+"
            table[label] = (float(np.mean(hits)), len(hits))
    return table
