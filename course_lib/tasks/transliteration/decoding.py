"""Decoding words with a trained model, scoring it on test pairs, and its attention pictures."""

import time
import warnings

import numpy as np

from course_lib.metrics.transliteration import as_reference_lists
from course_lib.tasks.arguments import check_draws_attention
from course_lib.tasks.transliteration.data import test_items
from course_lib.tasks.transliteration.reranking import check_reranker_fits, rerank
from course_lib.text.coverage import UNLIKE_DATA_SHARE, unknown_tokens


def transliterate_words(model, source_vocab, target_vocab, words, beam_width=1, length_penalty=1.0,
                        batch_size=512, max_length=None, right_to_left=False):
    """Transliterates a list of roman words in length-sorted batches.

    `right_to_left`: the model writes words backwards (trained with it); its
    outputs and attention rows are put back in reading order.

    Returns:
        A dict: `predictions` (best strings), `candidates` (per word the
        beam's strings, best first; one with greedy decoding), `alignments`
        (per word `(output steps, source letters)` of the best output, cut to
        its length and `<stop>` included), `scores` (per word the beam's
        scores of `candidates`, or `[log-probability]` of the greedy output),
        `sources` (the roman letters), `attention` (False for a plain encoder-decoder, or an ensemble with
        one: its alignments are zeros, which `heatmap_examples` refuses).
    """
    from course_lib.data.buckets import batched_generate
    from course_lib.decoding.beam import check_beam_options, check_greedy_length_penalty

    check_beam_options(beam_width, length_penalty)
    check_greedy_length_penalty(beam_width, length_penalty)  # an ensemble's greedy decoding would ignore it too
    words = list(words)
    if not words:
        raise ValueError("No words to transliterate. Received: 0 words")
    source = source_vocab.encode(words)
    generate_kwargs = {"max_length": model.max_output_length if max_length is None else max_length}  # 0: refused
    if beam_width > 1:
        generate_kwargs.update(beam_width=beam_width, length_penalty=length_penalty)
    output = batched_generate(model, source, batch_size=batch_size, **generate_kwargs)
    if right_to_left:
        output = _in_reading_order(output, model.stop_id, model.pad_id)
    predictions = [target_vocab.decode(tokens) for tokens in output["tokens"]]
    if beam_width > 1:
        candidates = [[target_vocab.decode(row) for row in beams] for beams in output["beam_tokens"]]
        scores = [np.asarray(row, "float64") for row in output["beam_scores"]]
    else:
        candidates = [[prediction] for prediction in predictions]
        scores = [np.asarray([score], "float64") for score in output["scores"]]
    letters = source_vocab.tokenize(words)
    alignments = []
    for tokens, weights, word_letters in zip(output["tokens"], output["alignments"], letters):
        stops = np.flatnonzero(np.asarray(tokens) == model.stop_id)
        steps = int(stops[0]) + 1 if len(stops) else len(tokens)
        alignments.append(np.asarray(weights)[:steps, : len(word_letters)])
    members = getattr(model, "models", [model])  # an Ensemble's, or the model itself
    return {"predictions": predictions, "candidates": candidates, "scores": scores, "alignments": alignments,
            "sources": letters, "attention": all(bool(member.attention) for member in members)}


def _in_reading_order(output, stop_id, pad_id):
    """`batched_generate` output of a right-to-left model, turned to reading order."""
    from course_lib.decoding.sequences import content_lengths, reverse_tokens

    output = dict(output)
    written = np.stack(output["tokens"])  # (N, max_length), as the model wrote them
    alignments = []
    for weights, end in zip(output["alignments"], content_lengths(written, stop_id, pad_id)):
        weights = np.array(weights, copy=True)
        weights[:end] = weights[:end][::-1]  # rows follow the letters; the <stop> row stays last
        alignments.append(weights)
    tokens = list(reverse_tokens(written, stop_id, pad_id))
    output.update(tokens=tokens, alignments=alignments)
    if "beam_tokens" in output:
        output["beam_tokens"] = [reverse_tokens(np.asarray(beams), stop_id, pad_id) for beams in output["beam_tokens"]]
    return output


def evaluate(model, source_vocab, target_vocab, pairs, beam_width=1, length_penalty=1.0, batch_size=512,
             direction="roman-native", right_to_left=False, reranker=None, rerank_weight=1.0):
    """Top-1 and top-k word accuracy and CER on test pairs.

    `direction` and `right_to_left` are the model's (`"native-roman"` scores
    a reverse model). With a `reranker` (see `rerank`) the beam's candidates
    are reranked before scoring. When more than `text.coverage.UNLIKE_DATA_SHARE` of the
    test words' letters are not in `source_vocab` (the model reads them as
    `<unk>`), a warning says so: the figures then measure the mismatch.

    Returns:
        A dict: `word_accuracy`, `top_k_accuracy` (k = `beam_width`), `cer`,
        `words` (distinct roman words scored), `beam_width`, with beam search
        the `length_penalty` it ranked by, `seconds`, and the per-word
        `predictions`, `candidates`, `references`, `test_words`.
    """
    from course_lib.metrics.transliteration import character_error_rate, top_k_accuracy, word_accuracy

    if reranker is not None:
        check_reranker_fits(reranker, source_vocab, target_vocab, direction)
    words, references = test_items(pairs, target_vocab, direction)
    letters = [letter for word in source_vocab.tokenize(words) for letter in word]
    unknown = unknown_tokens(source_vocab, letters)
    share = len(unknown) / len(letters) if letters else 0.0
    if share > UNLIKE_DATA_SHARE:
        shown = "".join(sorted(set(unknown)))
        warnings.warn(f"{share:.1%} of the test words' letters are not in the model's alphabet "
                      f"({len(unknown)} of {len(letters)}, e.g. {shown[:20]!r}; it reads them as <unk>): the figures "
                      "measure words unlike its training words, not the model.")
    started = time.perf_counter()
    decoded = transliterate_words(model, source_vocab, target_vocab, words, beam_width, length_penalty, batch_size,
                                  right_to_left=right_to_left)
    if reranker is not None:
        decoded = rerank(decoded, words, reranker, rerank_weight, batch_size)
    seconds = time.perf_counter() - started
    return {
        "word_accuracy": word_accuracy(decoded["predictions"], references),
        "top_k_accuracy": top_k_accuracy(decoded["candidates"], references, k=beam_width),
        "cer": character_error_rate(decoded["predictions"], references),
        "words": len(words),
        "beam_width": int(beam_width),
        **({"length_penalty": float(length_penalty)} if beam_width > 1 else {}),
        "seconds": seconds,
        "predictions": decoded["predictions"],
        "candidates": decoded["candidates"],
        "references": references,
        "test_words": words,
    }


def heatmap_examples(words, decoded, target_vocab, count=9, references=None):
    """Examples for `course_lib.plots.grid.attention_grid` from `transliterate_words` output.

    Each title reads `word → output`; with `references` (per word a string or
    a list of accepted spellings, e.g. `evaluate(...)["references"]`) it also
    says whether the output is right: `✓`, or `✗` and the expected spelling
    on a second line.

    `decoded` from a plain encoder-decoder (`decoded["attention"]` False) is
    refused: its alignments are all zeros.
    """
    check_draws_attention(decoded.get("attention", True),
                          "These words were decoded by a plain encoder-decoder (attention=False)",
                          "draw the heat maps of a model trained with attention",
                          f"decoded['attention']={decoded.get('attention')!r}")
    count = min(count, len(words))
    if references is not None:
        references = list(references)
        if len(references) < count:
            raise ValueError(
                f"Need references for the first {count} words. Received: {len(references)} references"
            )
        references = as_reference_lists(references[:count], count)
    examples = []
    for index in range(count):
        weights = decoded["alignments"][index]
        prediction = decoded["predictions"][index]
        output_letters = list(prediction) + ["<stop>"]
        steps = min(len(output_letters), len(weights))
        title = f"{words[index]} → {prediction}"
        if references is not None:
            accepted = references[index]
            title += " ✓" if prediction in accepted else f" ✗\nreference {accepted[0]}"
        examples.append({
            "weights": weights[:steps],
            "input_labels": decoded["sources"][index],
            "output_labels": output_letters[:steps],
            "title": title,
        })
    return examples
