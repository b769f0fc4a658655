"""Transliteration metrics: word accuracy (top-1, top-k) and character error rate.

A source word may have several accepted spellings (Aksharantar lists e.g.
both "बिंद्या" and "बिन्द्या" for one roman word), so every function takes a
list of accepted references per word; a prediction is right when it equals
any of them.
"""

import numpy as np


def as_reference_lists(references, count):
    """Each word's accepted spellings as a list (a single string becomes a one-item list)."""
    references = list(references)
    if len(references) != count:
        raise ValueError(
            "Need one entry of references per prediction. "
            f"Received: {count} predictions, {len(references)} references"
        )
    lists = []
    for index, refs in enumerate(references):
        if refs is None or not (isinstance(refs, str) or hasattr(refs, "__iter__")):
            raise ValueError(
                f"Word {index} needs a reference string or a list of them. "
                f"Received: {type(refs).__name__} {refs!r:.40}"
            )
        refs = [refs] if isinstance(refs, str) else list(refs)
        if not refs or not all(isinstance(r, str) for r in refs):
            raise ValueError(
                f"Word {index} needs at least one reference string. Received: {refs!r}"
            )
        lists.append(refs)
    return lists


def _prediction_list(predictions):
    """`predictions` as a non-empty list of strings (one predicted word each)."""
    if isinstance(predictions, str):
        raise ValueError(f"`predictions` must be a list of strings. Received: {predictions[:40]!r}")
    predictions = list(predictions)
    if not predictions:
        raise ValueError("Cannot score an empty list. Received: 0 predictions")
    for index, prediction in enumerate(predictions):
        if not isinstance(prediction, str):
            raise ValueError(
                "`predictions` must hold predicted strings (decode ids first). "
                f"Received: predictions[{index}] of type {type(prediction).__name__}: {prediction!r:.40}"
            )
    return predictions


def word_accuracy(predictions, references):
    """Top-1 word accuracy: share of predictions equal to an accepted reference.

    Args:
        predictions: list of N predicted strings.
        references: list of N references, each a string or a list of strings.
    """
    predictions = _prediction_list(predictions)
    refs = as_reference_lists(references, len(predictions))
    return float(np.mean([p in r for p, r in zip(predictions, refs)]))


def top_k_accuracy(candidates, references, k=None):
    """Share of words with an accepted reference among their first k candidates.

    Args:
        candidates: list of N lists of candidate strings, best first (e.g. the
            hypotheses of a beam search).
        references: list of N references, each a string or a list of strings.
        k: how many candidates count (default: all given).
    """
    if isinstance(candidates, str):
        raise ValueError(f"`candidates` must be a list of candidate lists. Received: {candidates[:40]!r}")
    candidates = list(candidates)
    for index, cands in enumerate(candidates):
        if isinstance(cands, str):
            raise ValueError(
                f"Candidates of word {index} must be a list of strings (best first), not one string. "
                f"Received: {cands[:40]!r}"
            )
    candidates = [list(c) for c in candidates]
    if not candidates:
        raise ValueError("Cannot score an empty list. Received: 0 candidate lists")
    if k is not None and (int(k) != k or int(k) < 1):
        raise ValueError(f"`k` must be an integer of at least 1. Received: k={k}")
    refs = as_reference_lists(references, len(candidates))
    hits = [any(c in r for c in (cands if k is None else cands[: int(k)])) for cands, r in zip(candidates, refs)]
    return float(np.mean(hits))


def edit_distance(a, b):
    """Levenshtein distance between two sequences (insert, delete, substitute = 1)."""
    previous = list(range(len(b) + 1))
    for i, item_a in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, item_b in enumerate(b, start=1):
            current[j] = min(
                previous[j] + 1,  # delete
                current[j - 1] + 1,  # insert
                previous[j - 1] + (item_a != item_b),  # substitute
            )
        previous = current
    return previous[-1]


def character_error_rate(predictions, references):
    """Corpus character error rate: total edits / total reference characters.

    Characters are Unicode code points, so a matra or a virama counts as one
    character, as in the character vocabularies. With several accepted
    references the one with the lowest edit rate (edits / its length; the
    shorter on a tie) is used.
    """
    predictions = _prediction_list(predictions)
    refs = as_reference_lists(references, len(predictions))
    edits = 0
    length = 0
    for prediction, accepted in zip(predictions, refs):
        best = min(accepted, key=lambda r: (edit_distance(prediction, r) / max(len(r), 1), len(r)))
        edits += edit_distance(prediction, best)
        length += len(best)
    if length == 0:
        raise ValueError(
            f"All references are empty strings; the CER is undefined. Received: len(references)={len(refs)}, "
            "with 0 reference characters"
        )
    return edits / length
