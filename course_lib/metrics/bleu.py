"""Corpus BLEU and chrF, computed with sacrebleu.

Both take detokenised strings, as a user reads them, and let sacrebleu
tokenise, so scores are comparable with published ones. Tokenisation is
decided by the references alone (`pick_tokenizer`), never by the
hypotheses, so that two systems scored against the same references are
always tokenised the same way (one non-ASCII character in one output cannot
switch a whole corpus to another tokeniser):

- `"13a"` (sacrebleu's default, the WMT standard) when every reference is
  ASCII, e.g. English translations and captions;
- `"intl"` otherwise: it splits Unicode punctuation such as the Devanagari
  danda `।` off words, which `"13a"` does not, and leaves combining vowel
  signs (matras) and viramas inside their words.

Pass `tokenize=` to choose explicitly. `corpus_bleu(..., return_signature=True)`
also returns sacrebleu's signature (`nrefs:1|case:mixed|eff:no|tok:13a|
smooth:exp|version:...`), which names the tokeniser and smoothing used; log
it next to the score.

Smoothing (`smooth_method`) matters only when some n-gram order has no match
at all in the whole corpus (short or few sentences), except `"add-k"`:

- `"none"`: Papineni et al. (2002), as nltk's `corpus_bleu` without a
  smoothing function: an order with no match makes BLEU 0.
- `"exp"` (the default, sacrebleu's and mteval-v13a's "NIST" smoothing,
  method 3 of Chen & Cherry 2014): the k-th order with no match counts as
  precision `1 / (2**k * n-grams of that order)`, so BLEU stays above 0
  (while the hypotheses have n-grams of that order: see below).
  E.g. "the cat sat on a mat" against "the cat is on the mat" (no 3-gram or
  4-gram match) gives 19.30 with "exp" and 0.0 with "none".
- `"floor"` (method 1): an order with no match counts as `0.1 / n-grams`
  (10.27 on that example).
- `"add-k"` (method 2): adds 1 to the matches and the n-grams of every order
  above 1, whether it matched or not (32.47 on that example).

When no unigram matches, every method gives 0. So does every method when
the hypotheses hold no n-gram of some order at all (every output shorter than
four words, for BLEU-4): "the cat" scored against itself is 0.0, as in
sacrebleu, whose `effective_order=True` (sentence BLEU's fix) this module
does not use; score short outputs with a lower `max_order`. For the Papineni
value pass `smooth_method="none"`.
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
    """The tokeniser `corpus_bleu` uses by default: decided by the references only.

    `"13a"` when every reference string is ASCII, `"intl"` when any has other
    characters. `hypotheses` takes no part (it stays in the signature so that
    existing calls keep working): systems scored against the same references
    get the same tokeniser, whatever characters they output.

    Args:
        hypotheses: the output strings (ignored).
        references: one list of reference strings per hypothesis.
    """
    del hypotheses  # the references alone decide, see above
    return "13a" if all(r.isascii() for refs in references for r in refs if r is not None) else "intl"


def corpus_bleu(hypotheses, references, max_order=4, tokenize=None, smooth_method="exp", return_signature=False):
    """Corpus-level BLEU (0-100) with multiple references per hypothesis.

    Args:
        hypotheses: list of N output strings.
        references: list of N lists of reference strings (any number >= 1 each).
        max_order: highest n-gram order; 1..4 give BLEU-1 .. BLEU-4.
        tokenize: sacrebleu tokenizer name; default: `pick_tokenizer`, "13a" when
            every reference is ASCII, else "intl" (the hypotheses do not count).
        smooth_method: what an n-gram order without any match counts as (see
            the module docstring): "exp" (default, sacrebleu's), "floor",
            "add-k" or "none" (Papineni et al. 2002: BLEU is then 0).
        return_signature: also return sacrebleu's signature string, which
            names the tokeniser and smoothing used (`...|tok:13a|smooth:exp|...`).

    Returns:
        The BLEU score as a Python float between 0 and 100; with
        `return_signature=True` the pair `(score, signature)`.
    """
    if isinstance(max_order, bool) or not isinstance(max_order, numbers.Integral) or not 1 <= max_order <= 4:
        raise ValueError(f"`max_order` must be an integer in 1..4. Received: max_order={max_order!r}")
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
    if not isinstance(return_signature, bool):
        raise ValueError(f"`return_signature` must be True or False. Received: return_signature={return_signature!r}")
    hypotheses, per_hypothesis, streams = _check(hypotheses, references)
    tokenize = tokenize or pick_tokenizer(hypotheses, per_hypothesis)
    metric = sacrebleu.metrics.BLEU(
        max_ngram_order=int(max_order), tokenize=tokenize, smooth_method=smooth_method
    )
    score = float(metric.corpus_score(hypotheses, streams).score)
    return (score, str(metric.get_signature())) if return_signature else score


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
