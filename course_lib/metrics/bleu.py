"""Corpus BLEU and chrF, computed with sacrebleu.

Both take detokenised strings, as a user reads them, and let sacrebleu
tokenise, so scores are comparable with published ones. Tokenisation:

- `"13a"` (sacrebleu's default, the WMT standard) when every hypothesis and
  reference is ASCII, e.g. English translations and captions;
- `"intl"` otherwise: it splits Unicode punctuation such as the Devanagari
  danda `।` off words, which `"13a"` does not, and leaves combining vowel
  signs (matras) and viramas inside their words.

Pass `tokenize=` to choose explicitly.
"""

import numbers

import sacrebleu


def _check(hypotheses, references):
    if isinstance(hypotheses, str):
        raise ValueError(
            "`hypotheses` must be a list of strings, not a single string. "
            f"Received: hypotheses={hypotheses[:40]!r}"
        )
    hypotheses = list(hypotheses)
    references = list(references)
    if len(hypotheses) != len(references):
        raise ValueError(
            "Need one list of references per hypothesis. "
            f"Received: len(hypotheses)={len(hypotheses)}, len(references)={len(references)}"
        )
    if not hypotheses:
        raise ValueError("Cannot score an empty corpus. Received: 0 hypotheses")
    per_hypothesis = []
    for index, (hypothesis, refs) in enumerate(zip(hypotheses, references)):
        if not isinstance(hypothesis, str):
            raise ValueError(
                f"Hypothesis {index} is not a string. Received: {type(hypothesis).__name__}"
            )
        if isinstance(refs, str):
            raise ValueError(
                f"References of hypothesis {index} must be a list of strings "
                f"(one list per hypothesis). Received: the string {refs[:40]!r}"
            )
        if refs is None or not hasattr(refs, "__iter__"):
            raise ValueError(
                f"References of hypothesis {index} must be a list of strings. "
                f"Received: {type(refs).__name__} {refs!r:.40}"
            )
        refs = [r for r in refs if r is not None]
        if not refs or not all(isinstance(r, str) for r in refs):
            raise ValueError(
                f"Hypothesis {index} needs at least one reference string. Received: {refs!r}"
            )
        per_hypothesis.append(refs)
    # sacrebleu wants reference "streams": stream i holds the i-th reference
    # of every segment, None where a segment has fewer references.
    streams = max(len(refs) for refs in per_hypothesis)
    reference_streams = [
        [refs[i] if i < len(refs) else None for refs in per_hypothesis] for i in range(streams)
    ]
    return hypotheses, per_hypothesis, reference_streams


def pick_tokenizer(hypotheses, references):
    """`"13a"` for pure-ASCII text, `"intl"` when any string has other characters."""
    texts = list(hypotheses) + [r for refs in references for r in refs]
    return "13a" if all(text.isascii() for text in texts) else "intl"


def corpus_bleu(hypotheses, references, max_order=4, tokenize=None, smooth_method="exp"):
    """Corpus-level BLEU (0-100) with multiple references per hypothesis.

    Args:
        hypotheses: list of N output strings.
        references: list of N lists of reference strings (any number >= 1 each).
        max_order: highest n-gram order; 1..4 give BLEU-1 .. BLEU-4.
        tokenize: sacrebleu tokenizer name; default picks "13a" or "intl" (see module).
        smooth_method: sacrebleu smoothing ("exp", "floor", "add-k" or "none").

    Returns:
        The BLEU score as a Python float between 0 and 100.
    """
    if int(max_order) != max_order or not 1 <= int(max_order) <= 4:
        raise ValueError(f"`max_order` must be an integer in 1..4. Received: max_order={max_order}")
    if smooth_method not in sacrebleu.metrics.BLEU.SMOOTH_DEFAULTS:
        raise ValueError(
            f"`smooth_method` must be one of {sorted(sacrebleu.metrics.BLEU.SMOOTH_DEFAULTS)}. "
            f"Received: smooth_method={smooth_method!r}"
        )
    if tokenize is not None and tokenize not in sacrebleu.metrics.BLEU.TOKENIZERS:
        raise ValueError(
            f"`tokenize` must be None or one of {sorted(sacrebleu.metrics.BLEU.TOKENIZERS)}. "
            f"Received: tokenize={tokenize!r}"
        )
    hypotheses, per_hypothesis, streams = _check(hypotheses, references)
    tokenize = tokenize or pick_tokenizer(hypotheses, per_hypothesis)
    metric = sacrebleu.metrics.BLEU(
        max_ngram_order=int(max_order), tokenize=tokenize, smooth_method=smooth_method
    )
    return float(metric.corpus_score(hypotheses, streams).score)


def corpus_chrf(hypotheses, references, char_order=6, word_order=0, beta=2):
    """Corpus-level chrF (0-100); `word_order=2` gives chrF++.

    Args:
        hypotheses: list of N output strings.
        references: list of N lists of reference strings.
        char_order: character n-gram order, at least 1.
        word_order: word n-gram order, at least 0 (0: plain chrF).
        beta: weight of recall against precision, above 0.
    """
    for name, value, least in (("char_order", char_order, 1), ("word_order", word_order, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
            raise ValueError(f"`{name}` must be an integer of at least {least}. Received: {name}={value!r}")
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not beta > 0:
        raise ValueError(f"`beta` must be a number above 0. Received: beta={beta!r}")
    hypotheses, _, streams = _check(hypotheses, references)
    metric = sacrebleu.metrics.CHRF(char_order=char_order, word_order=word_order, beta=beta)
    return float(metric.corpus_score(hypotheses, streams).score)
