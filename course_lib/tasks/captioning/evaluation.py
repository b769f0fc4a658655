"""BLEU-1..4 of generated captions against cleaned references; distinct captions; exact match, attention on object;
the next-word accuracy of an image-blind baseline."""

from course_lib.data.captions import caption_arrays, tokenize_caption
from course_lib.tasks.captioning.data import references_of
from course_lib.tasks.captioning.model import generate_captions
from course_lib.text.coverage import unknown_share
from course_lib.text.vocabulary import SPECIAL_TOKENS, UNK


# What a generated `<unk>` becomes before BLEU. sacrebleu's 13a tokeniser would split
# "<unk>" into the three tokens "< unk >": a longer hypothesis, and an "unk" that
# could even match a reference word. Dropping it would hide the miss and shorten
# the caption. One upper-case word is one token that never matches a reference,
# whose words are lower-cased by `tokenize_caption`: `<unk>` counts as one wrong word.
UNK_FOR_BLEU = "UNK"


def bleu_hypothesis(caption):
    """A generated caption as BLEU sees it: its words, each `<unk>` as the single word `UNK_FOR_BLEU`."""
    return " ".join(UNK_FOR_BLEU if word == SPECIAL_TOKENS[UNK] else word for word in caption.split())


def bleu_reference(caption):
    """A reference caption cleaned the way training captions are (`tokenize_caption`): lower-case, no punctuation.

    >>> bleu_reference("A dog runs, in the park .")
    'a dog runs in the park'
    """
    return " ".join(tokenize_caption(caption))


def score_captions(captions, references, max_order=4):
    """Corpus BLEU-1..`max_order` (0-100) of generated captions against all references of each image.

    The model writes lower-case words without punctuation, so the references
    (e.g. Flickr8k's "A dog runs .") are cleaned the same way first
    (`bleu_reference`); sacrebleu is case-sensitive and would otherwise never
    match "a" with "A". A generated `<unk>` counts as one wrong word
    (`bleu_hypothesis`). The score itself is `metrics.captioning.caption_bleu`.
    """
    from course_lib.metrics.captioning import caption_bleu, caption_list

    hypotheses = [bleu_hypothesis(c) for c in caption_list(captions, "captions")]
    cleaned = [[bleu_reference(r) for r in caption_list(refs, "references")] for refs in references]
    return caption_bleu(hypotheses, cleaned, max_order=max_order)


def unknown_reference_share(vocabulary, references):
    """The share of the reference captions' words (cleaned as for BLEU) that `vocabulary` does not hold.

    A model scored on captions unlike its training captions gets figures that
    measure the mismatch, not the model: the shapes vocabulary misses 82 % of the
    Flickr8k subset's reference words and the subset's own vocabulary 27 % of the
    shapes captions, while a Flickr8k run misses 6-8 % of its own test part's
    words (`min_count` 2-3; a fast-profile run on 120 images, 17-20 %).
    `evaluate captioning` warns above `text.coverage.UNLIKE_DATA_SHARE` on data other than the
    run's own.

    Args:
        vocabulary: the run's caption vocabulary.
        references: for each image, its list of reference captions (`references_of(part)`).

    Returns:
        A float in [0, 1]; 0.0 when the references hold no word.
    """
    return unknown_share(vocabulary, [word for group in references for caption in group
                                      for word in tokenize_caption(caption)])


def image_blind_caption(train_captions, valid_references, candidates=50):
    """The one caption that, written for every image, scores the best BLEU-4: a captioner that never looks.

    BLEU rewards what captions share ("a ... above a ..."), so one fixed caption scores well above zero,
    and a captioner's BLEU means something only above this line. The most frequent training captions
    (`candidates` of them) are tried on the validation references, so the choice never sees the test part.

    Args:
        train_captions: the training captions (strings).
        valid_references: for each validation image, its list of reference captions.
        candidates: how many of the most frequent training captions to try.

    Returns:
        `(caption, bleu4)`: the chosen caption and its BLEU-4 (0-100) on the validation references.
    """
    from collections import Counter

    if not train_captions or not valid_references:
        raise ValueError(
            "Need training captions to choose from and validation references to score them. "
            f"Received: {len(train_captions)} training captions, {len(valid_references)} validation images"
        )
    tried = [caption for caption, _ in Counter(train_captions).most_common(candidates)]
    scores = {caption: score_captions([caption] * len(valid_references), valid_references)["bleu4"]
              for caption in tried}
    best = max(tried, key=scores.get)  # the more frequent one on a tie
    return best, scores[best]


def evaluate_run(model, vocabulary, part, inputs, dataset, beam_width=1):
    """Metrics of a model on one part.

    Returns:
        `(metrics, captions, alignments)`; metrics hold `bleu1`..`bleu4` (0-100,
        `score_captions`: references cleaned like the training captions),
        `distinct_captions`, `images` (how many were captioned) and, on the
        shapes data, `exact_match` and, for an attentional decoder,
        `attention_on_object` (with its colour/shape split,
        `attention_on_object_chance`, the rate of a look at a random location,
        and `attention_on_object_words`, how many words the rates are over).
    """
    from course_lib.metrics.captioning import attention_on_object, distinct_caption_rate, exact_caption_match

    captions, _, alignments = generate_captions(model, vocabulary, inputs, beam_width)
    metrics = score_captions(captions, references_of(part))
    metrics["distinct_captions"] = distinct_caption_rate(captions)
    metrics["images"] = len(captions)
    if dataset == "shapes":
        from course_lib.data.shapes import COLOUR_NAMES, SHAPES, object_location_masks

        metrics["exact_match"] = exact_caption_match(captions, part.captions)
        if model.decoder.has_attention:  # options 1 and 2 look at no location
            height, width = model.grid
            masks = object_location_masks(part.boxes, part.image_size, height, width)
            on_object = attention_on_object(captions, alignments, part.colours, part.shapes, masks,
                                            COLOUR_NAMES, SHAPES)
            metrics["attention_on_object"] = on_object["rate"]
            metrics["attention_on_object_colour"] = on_object["colour_rate"]
            metrics["attention_on_object_shape"] = on_object["shape_rate"]
            metrics["attention_on_object_chance"] = on_object["chance"]
            # How many words the rates are over: with none (no caption names an object) every rate reads 0.0.
            metrics["attention_on_object_words"] = on_object["words"]
    return metrics, captions, alignments


def image_blind_accuracy(vocabulary, train_captions, eval_captions, max_length=None):
    """Teacher-forced next-word accuracy of a guesser that never sees the image.

    After each word it writes the word that most often came next in
    `train_captions` (`metrics.captioning.bigram_next_word_accuracy`),
    scored on `eval_captions` the way a captioner's `val_token_accuracy` is:
    every real word and the `<stop>`, never the padding. The part of a
    captioner's word accuracy below this line needs no image, only the
    grammar of the captions.

    Args:
        vocabulary: the run's caption `Vocabulary`.
        train_captions: the training captions (strings).
        eval_captions: the captions to score (strings), e.g. validation.
        max_length: the run's caption length (`settings["max_length"]`);
            longer captions are cut as in training.

    Returns:
        The baseline's word accuracy on `eval_captions`, a float in 0..1.
    """
    from course_lib.metrics.captioning import bigram_next_word_accuracy

    train_pairs = caption_arrays(vocabulary, train_captions, max_length=max_length)
    eval_pairs = caption_arrays(vocabulary, eval_captions, max_length=max_length)
    return bigram_next_word_accuracy(train_pairs, eval_pairs, len(vocabulary))
