"""Pairs as texts, vocabularies and id arrays; the gold alignment as oracle weights; references per source."""

from collections import defaultdict

from course_lib.tasks.translation.config import LANGUAGE_SETTINGS, languages
from course_lib.text.vocabulary import STOP, Vocabulary


def source_target_texts(pairs, direction):
    """(sources, targets) string lists from pairs with `.english` and `.hindi`."""
    source_language, _ = languages(direction)
    if source_language == "en":
        return [p.english for p in pairs], [p.hindi for p in pairs]
    return [p.hindi for p in pairs], [p.english for p in pairs]


def build_vocabularies(pairs, direction, max_size=None):
    sources, targets = source_target_texts(pairs, direction)
    source_language, target_language = languages(direction)
    return (
        Vocabulary.from_texts(sources, max_size=max_size, **LANGUAGE_SETTINGS[source_language]),
        Vocabulary.from_texts(targets, max_size=max_size, **LANGUAGE_SETTINGS[target_language]),
    )


def encode_pairs(pairs, direction, source_vocab, target_vocab):
    """`({"source", "target_in"}, target_out)` int32 arrays."""
    sources, targets = source_target_texts(pairs, direction)
    source = source_vocab.encode(sources)
    target = target_vocab.encode(targets, add_go=True, add_stop=True)
    target_in, target_out = target[:, :-1].copy(), target[:, 1:].copy()
    target_in[target_in == STOP] = 0  # <stop> is never an input
    return {"source": source, "target_in": target_in}, target_out


def check_gold_alignments(pairs):
    """Refuses pairs without a gold word alignment, which supervised attention needs for every pair."""
    missing = [index for index, pair in enumerate(pairs) if not hasattr(pair, "gold_links")]
    if missing:
        raise ValueError(
            "Supervised attention needs a gold word alignment for every pair (the generated corpus has "
            f"one; Tatoeba does not). Received: {len(missing)} of {len(pairs)} pairs without one, "
            f"first at index {missing[0]}"
        )


def oracle_alignments(pairs, direction, inputs):
    """The oracle attention weights of encoded pairs, `(batch, tgt_len, src_len)`,
    for supervised attention; only pairs with a gold alignment qualify."""
    from course_lib.losses import oracle_weights

    check_gold_alignments(pairs)
    links = [pair.gold_links(direction) for pair in pairs]
    return oracle_weights(links, inputs["target_in"].shape[1], inputs["source"].shape[1])


def references_by_source(pairs, direction):
    """Unique sources (first-seen order) and, for each, all its reference targets."""
    sources, targets = source_target_texts(pairs, direction)
    grouped = defaultdict(list)
    for source, target in zip(sources, targets):
        if target not in grouped[source]:
            grouped[source].append(target)
    return list(grouped), [grouped[s] for s in grouped]
