"""A second model that re-scores the beam's candidates: a channel (native -> roman) or right-to-left one."""

import dataclasses
import numbers

import numpy as np

from course_lib.tasks.transliteration.runs import kind_name, load_alike, saved_kind, tokens_lacking


RERANKER_KINDS = ("channel", "right-to-left")
# The largest rerank weight. The reranker's term is `weight` times a mean log-probability per letter
# (about -0.01 to -100): at 1e6 it outweighs any beam score already, and far larger weights overflowed
# to -inf (1e308 made every score -inf, the order arbitrary).
RERANK_WEIGHT_LIMIT = 1e6


@dataclasses.dataclass
class Reranker:
    """A second opinion that scores the beam's candidates (`course_lib.decoding.rerank`).

    `kind` is `"channel"` for a native -> roman model (scores `log P(x | y)`,
    trained with `--direction native-roman`) or `"right-to-left"` for a
    roman -> native model that writes words backwards (scores `log P(y | x)`,
    trained with `--right-to-left`). `model` is one trained model, or a list
    of models of that kind trained alike (e.g. from different seeds): their
    log-probabilities are averaged. `load_reranker(DIR or [DIR, ...])` reads
    one from training folders.
    """

    kind: str
    model: object
    source_vocab: object
    target_vocab: object

    def __post_init__(self):
        if self.kind not in RERANKER_KINDS:
            raise ValueError(f"`kind` must be one of {RERANKER_KINDS}. Received: kind={self.kind!r}")
        if not self.models:
            raise ValueError("A reranker needs at least one model. Received: model=[]")
        # The roman side is the lower-cased vocabulary: it must be the target of a
        # channel model and the source of a right-to-left one.
        roman_side = self.target_vocab if self.kind == "channel" else self.source_vocab
        native_side = self.source_vocab if self.kind == "channel" else self.target_vocab
        if not roman_side.lowercase or native_side.lowercase:
            wanted = "read Devanagari and write roman letters" if self.kind == "channel" else \
                "read roman letters and write Devanagari"
            raise ValueError(
                f"A {self.kind} reranker must {wanted}. Received: a model whose source vocabulary is "
                f"{self.source_vocab!r} and target vocabulary is {self.target_vocab!r}"
            )

    @property
    def models(self):
        """The reranking models, as a tuple (one or more)."""
        return tuple(self.model) if isinstance(self.model, (list, tuple)) else (self.model,)


def load_reranker(model_dirs, flag="--rerank-with"):
    """The `Reranker` in one training folder, or in several of the same kind (averaged).

    Its kind comes from the saved config.
    """
    runs = load_alike(model_dirs, flag)
    models = [run[0] for run in runs]
    _, source_vocab, target_vocab, state = runs[0]
    model = models[0] if len(models) == 1 else models
    kind = saved_kind(state)
    if kind == ("native-roman", False):
        return Reranker("channel", model, source_vocab, target_vocab)
    if kind == ("roman-native", True):
        return Reranker("right-to-left", model, source_vocab, target_vocab)
    raise ValueError(
        "A reranker is a native-roman model (`train transliteration --direction native-roman`) or a "
        f"right-to-left one (`--right-to-left`). Received: {kind_name(*kind)} model in {model_dirs!r}"
    )


def check_reranker_fits(reranker, source_vocab, target_vocab, direction="roman-native",
                        model_name="the model", reranker_name="the reranker"):
    """Refuses a `Reranker` that cannot score the candidates of a model with these vocabularies.

    The reranker re-scores a roman-native model's candidates: it re-encodes
    each input word and candidate with its own vocabularies, so it must know
    every roman and Devanagari letter the model does. A letter it lacks is
    `<unk>` to it, and its scores say nothing about the candidates; letters
    only it knows, or the same letters under other ids, do no harm.
    `model_name` and `reranker_name` say where each came from, for the
    message (e.g. `"--model 'runs/a'"`).
    """
    if direction != "roman-native":
        raise ValueError(
            f"A reranker re-scores the candidates of a roman-native model. Received: {model_name}, a "
            f"{direction} model"
        )
    roman, native = ((reranker.target_vocab, reranker.source_vocab) if reranker.kind == "channel"
                     else (reranker.source_vocab, reranker.target_vocab))
    missing = []
    for side, ours, theirs in (("roman", source_vocab, roman), ("Devanagari", target_vocab, native)):
        count, shown = tokens_lacking(ours.tokens, theirs.tokens)
        if count:
            missing.append(f"{count} {side} letters of {model_name} ({shown!r})")
    if missing:
        raise ValueError(
            "A reranker must know the letters of the model whose candidates it scores (train both on the same "
            "file): those it lacks would be <unk> to it, and its scores say nothing about the candidates. "
            f"Received: {reranker_name} lacks " + " and ".join(missing)
        )


def equal_votes_weight(model, reranker):
    """The rerank weight at which every model counts alike: R reranking models / M decoding ones.

    The beam's score averages the M decoding models (one `Seq2Seq`, or an
    `Ensemble` of M), so weight `R / M` on the rerankers' mean gives each of
    the M + R models one vote. `evaluate --rerank-with` uses it by default.
    """
    from course_lib.decoding.ensemble import Ensemble

    decoding_models = len(model.models) if isinstance(model, Ensemble) else 1
    return len(reranker.models) / decoding_models


def reranker_log_probs(decoded, words, reranker, batch_size=512):
    """The reranker's log-probability of every beam candidate `y` of every word `x`.

    Args:
        decoded: `transliterate_words` output from beam search (k > 1).
        words: the roman words that were transliterated, in the same order.
        reranker: a `Reranker`.
        batch_size: most candidates scored in one batch.

    Returns:
        `(log_probs, lengths)`, both `(N, k)`: `log P(x | y)` (channel) or the
        right-to-left `log P(y | x)` (the mean over the reranker's models when
        it has several), and the number of tokens each scores (`|x| + 1` or
        `|y| + 1`, the `<stop>` included).
    """
    from course_lib.data.buckets import batched_log_probs
    from course_lib.decoding.sequences import reverse_tokens
    from course_lib.text.vocabulary import STOP

    counts = {len(row) for row in decoded["candidates"]}
    if len(words) != len(decoded["candidates"]) or counts != {max(counts)} or max(counts) < 2:
        raise ValueError(
            "Reranking needs the same number (at least 2) of beam candidates for every word. "
            f"Received: {len(words)} words, candidate counts {sorted(counts)}"
        )
    k = max(counts)
    flat_candidates = [candidate for row in decoded["candidates"] for candidate in row]
    repeated_words = [word for word in words for _ in range(k)]
    # An empty candidate (a beam that stopped at once) explains nothing: -inf.
    log_probs = np.full(len(flat_candidates), -np.inf)
    lengths = np.ones(len(flat_candidates))
    chosen = [i for i, candidate in enumerate(flat_candidates) if candidate]
    if chosen:
        candidates = [flat_candidates[i] for i in chosen]
        roman = [repeated_words[i] for i in chosen]
        if reranker.kind == "channel":
            source = reranker.source_vocab.encode(candidates)
            target = reranker.target_vocab.encode(roman, add_stop=True)
        else:
            source = reranker.source_vocab.encode(roman)
            target = reverse_tokens(reranker.target_vocab.encode(candidates, add_stop=True), STOP)
        log_probs[chosen] = np.mean(
            [batched_log_probs(model, source, target, batch_size=batch_size) for model in reranker.models], axis=0
        )
        lengths[chosen] = np.count_nonzero(target != reranker.models[0].pad_id, axis=1)
    return log_probs.reshape(len(words), k), lengths.reshape(len(words), k)


def rerank(decoded, words, reranker, weight=1.0, batch_size=512, scored=None):
    """Re-sorts each word's beam candidates by
    `log P(y|x)/m**length_penalty + weight * log Q/n` (`course_lib.decoding.rerank`:
    the beam's own score, `m` = the output's tokens and `<stop>`, or
    `max_length` for a beam cut off before `<stop>`).

    Args:
        decoded, words, reranker: as for `reranker_log_probs`.
        weight: the reranker's weight (0 keeps the beam order), at most `RERANK_WEIGHT_LIMIT`.
        batch_size: as for `reranker_log_probs`.
        scored: `reranker_log_probs(decoded, words, reranker)` when already
            computed (to try several weights without running the model again).

    Returns:
        A copy of `decoded` whose `candidates` and `predictions` follow the
        new order and whose `scores` are the combined scores
        (`decoding.rerank.rerank_scores`), sorted best first (`alignments` are
        dropped: they belong to the old best candidates), with the reranker's
        `reranker_log_probs` per candidate.
    """
    from course_lib.decoding.rerank import rerank_scores

    if isinstance(weight, numbers.Real) and weight > RERANK_WEIGHT_LIMIT:
        raise ValueError(f"`weight` must be at most {RERANK_WEIGHT_LIMIT:,.0f} (beyond it the reranker decides alone "
                         f"already, and the scores overflow). Received: weight={weight}")
    log_probs, lengths = scored if scored is not None else reranker_log_probs(decoded, words, reranker, batch_size)
    combined = rerank_scores(np.stack(decoded["scores"]), log_probs, lengths, weight)  # -inf stays -inf
    order = np.argsort(-combined, axis=1, kind="stable")  # (N, k)
    candidates = [[row[j] for j in ranks] for row, ranks in zip(decoded["candidates"], order)]
    reranked = {key: value for key, value in decoded.items() if key != "alignments"}
    reranked.update(
        candidates=candidates,
        predictions=[row[0] for row in candidates],
        scores=[row[ranks] for row, ranks in zip(combined, order)],
        reranker_log_probs=[row[ranks] for row, ranks in zip(log_probs, order)],
    )
    return reranked
