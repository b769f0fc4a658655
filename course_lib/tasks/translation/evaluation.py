"""BLEU, chrF and exact match of a translator; attention against the gold alignment; BLEU by length; heat maps."""

import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from course_lib.tasks.arguments import check_draws_attention
from course_lib.tasks.translation.data import references_by_source, source_target_texts
from course_lib.text.coverage import is_word, unknown_share


def evaluate(translator, pairs, beam_width=1, with_alignment=None):
    """Corpus BLEU and chrF (all translations of a source are references).

    Hypotheses and references are compared after the target vocabulary's own
    normalisation (English lower-cased, punctuation split), so the score
    measures words, not casing. `alignment_agreement` is added for pairs that
    carry a gold alignment (the generated corpus).
    """
    from course_lib.metrics.bleu import corpus_bleu, corpus_chrf

    sources, references = references_by_source(pairs, translator.direction)
    start = time.perf_counter()
    hypotheses = translator.translate(sources, beam_width=beam_width)
    seconds = time.perf_counter() - start
    references = translator.target_vocab.normalized_groups(references)
    metrics = {
        "bleu": corpus_bleu(hypotheses, references),
        "chrf": corpus_chrf(hypotheses, references),
        "exact_match": float(np.mean([h in refs for h, refs in zip(hypotheses, references)])),
        "sentences": len(sources),
        "beam_width": beam_width,
        "decode_seconds": seconds,
        "direction": translator.direction,
    }
    if with_alignment is None:
        with_alignment = all(hasattr(p, "gold_links") for p in pairs)
    if with_alignment and translator.model.attention:
        metrics["alignment_agreement"] = alignment_agreement(translator, pairs)
    return metrics


def unknown_source_share(translator, pairs):
    """The share of the test sources' words (tokens with a letter or digit) not in the model's source vocabulary.

    Measured (seed 0): a model trained on the Tatoeba split misses 7-11 % of its own validation and test
    sources' words; the generated corpus's vocabulary misses 69 % (en-hi) and 80 % (hi-en) of the Tatoeba
    test sources'. Each unknown word reaches the model as `<unk>`, so a high share means figures about data
    unlike the model's training data. 0.0 when the sources hold no word.
    """
    vocab = translator.source_vocab
    sources, _ = source_target_texts(pairs, translator.direction)
    return unknown_share(vocab, [token for tokens in vocab.tokenize(sources) for token in tokens if is_word(token)])


def alignment_agreement(translator, pairs):
    """Share of target words whose teacher-forced attention arg-max is a gold-aligned source word."""
    from course_lib.metrics.alignment import attention_agreement

    weights = translator.teacher_forced_alignments(pairs)  # (batch, tgt_len, src_len)
    gold = [pair.gold_links(translator.direction) for pair in pairs]
    return attention_agreement(weights, gold)


def agreement_by_word(translator, pairs):
    """Where attention agrees with the gold alignment, word by word.

    Returns:
        `{target word: {"agree": hits, "count": n, "attended_instead": Counter}}`,
        the counter naming the source words the arg-max fell on when it missed.
    """

    weights = translator.teacher_forced_alignments(pairs)  # (batch, tgt_len, src_len)
    report = defaultdict(lambda: {"agree": 0, "count": 0, "attended_instead": Counter()})
    for example, pair in enumerate(pairs):
        source, target = (text.split() for text in pair.source_target(translator.direction))
        for step, links in enumerate(pair.gold_links(translator.direction)):
            position = int(weights[example, step, : len(source)].argmax())
            entry = report[target[step]]
            entry["count"] += 1
            if position in links:
                entry["agree"] += 1
            else:
                entry["attended_instead"][source[position]] += 1
    return dict(report)


def agreement_share(report, words):
    """Share of the occurrences of `words` whose attention arg-max agreed with the gold alignment.

    Args:
        report: an `agreement_by_word` report, `{target word: {"agree": hits, "count": n, ...}}`.
        words: a collection of target words (a set, list...); words that are not
            in the report are skipped.

    Returns:
        The summed hits over the summed counts of those words, a float in
        [0, 1]. When none of the words occurs in the report there is nothing
        to score, and a ValueError says so (a 0.0 would pass for a measured
        share, and a comparison of two shares would then test nothing).
    """
    if not isinstance(report, dict):
        raise ValueError(f"`report` must be a dict from `agreement_by_word`. Received: report={report!r}")
    if isinstance(words, (str, bytes)):
        raise ValueError(f"`words` must be a collection of words, not one string. Received: words={words!r}")
    present = [word for word in set(words) if word in report]
    count = sum(report[word]["count"] for word in present)
    if not count:
        raise ValueError(
            "None of `words` occurs in the report, so there is no agreement to measure. "
            f"Received: words={sorted(words)!r:.200}, {len(report)} words in the report"
        )
    return sum(report[word]["agree"] for word in present) / count


def _sources_with_lengths(translator, pairs):
    """The distinct sources of `pairs`, their references, and each source's length in tokens."""
    sources, references = references_by_source(pairs, translator.direction)
    lengths = [len(tokens) for tokens in translator.source_vocab.tokenize(sources)]
    return sources, references, lengths


def sources_by_length(translator, pairs):
    """`{source length in words: number of distinct sources}`: how many sentences each point of `bleu_by_length` stands for."""
    _, _, lengths = _sources_with_lengths(translator, pairs)
    return dict(sorted(Counter(lengths).items()))


def bleu_by_length(translator, pairs, beam_width=1):
    """`{source length in words: BLEU}` over the test pairs (group sizes: `sources_by_length`).

    A group whose shortest reference has fewer than 4 words is scored with
    BLEU-n for n = that length (BLEU-4 of 3-word sentences is undefined: they
    hold no 4-grams).
    """
    from course_lib.metrics.bleu import corpus_bleu

    sources, references, lengths = _sources_with_lengths(translator, pairs)
    hypotheses = translator.translate(sources, beam_width=beam_width)
    by_length = defaultdict(lambda: ([], []))
    for hypothesis, refs, length in zip(hypotheses, translator.target_vocab.normalized_groups(references), lengths):
        by_length[length][0].append(hypothesis)
        by_length[length][1].append(refs)
    scores = {}
    for length in sorted(by_length):
        hypotheses, references = by_length[length]
        shortest = min(len(reference.split()) for refs in references for reference in refs)
        scores[length] = corpus_bleu(hypotheses, references, max_order=max(1, min(4, shortest)))
    return scores


def heatmap(translator, text, path=None, beam_width=1, ax=None):
    """Attention heat map of one translation (Devanagari labels shaped).

    A plain encoder-decoder (`attention=False`) is refused: it has no
    attention, and its map was all zeros.
    """
    from course_lib.plots.attention import attention_heatmap
    from course_lib.plots.fonts import devanagari_font

    check_draws_attention(translator.model.attention, "This translator is a plain encoder-decoder (attention=False)",
                          "draw the heat map of a model trained with attention",
                          f"a translator with attention={translator.model.attention!r}")
    (output,), (detail,) = translator.translate([text], beam_width=beam_width, return_details=True)
    font = devanagari_font()
    ax = attention_heatmap(
        detail["attention"], detail["source_tokens"], detail["output_tokens"], ax=ax, fontproperties=font,
    )
    ax.set_title(f"{translator.direction}: {output}", pad=28, fontproperties=font)  # Hindi in the title too
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(path, bbox_inches="tight", dpi=120)
    return ax
