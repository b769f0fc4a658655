"""Captioning metrics: BLEU-1..4 over all references, exact match, attention on objects."""

import numpy as np

from course_lib.metrics.bleu import corpus_bleu


def caption_bleu(hypotheses, references, max_order=4):
    """BLEU-1 .. BLEU-`max_order` (0-100) against all reference captions of each image.

    Args:
        hypotheses: list of N generated captions (strings).
        references: list of N lists of reference captions (e.g. Flickr8k's five).

    Returns:
        `{"bleu1": ..., "bleu2": ..., ...}` (corpus BLEU with n-grams up to n,
        computed by `course_lib.metrics.bleu.corpus_bleu`).
    """
    return {f"bleu{n}": corpus_bleu(hypotheses, references, max_order=n) for n in range(1, max_order + 1)}


def exact_caption_match(hypotheses, references):
    """Share of generated captions equal (word for word, case-blind) to their gold caption."""
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(
            "Need as many gold captions as generated ones, at least one. "
            f"Received: {len(hypotheses)} and {len(references)}"
        )
    same = [h.lower().split() == r.lower().split() for h, r in zip(hypotheses, references)]
    return float(np.mean(same))


def distinct_caption_rate(captions):
    """Distinct captions divided by captions: 1/N when the model says the same thing for every image."""
    captions = [" ".join(c.lower().split()) for c in captions]
    if not captions:
        raise ValueError("Need at least one caption. Received: 0")
    return len(set(captions)) / len(captions)


def object_words(words, colour_names, shape_names):
    """The words of a caption that name an object, with the object they describe.

    A colour word followed by a shape word is one object phrase ("red circle"):
    both words name the object with that colour and shape. A shape word with no
    colour before it names any object of that shape.

    Returns:
        A list of `(position, colour or None, shape)` tuples.
    """
    named = []
    for position, word in enumerate(words):
        if word in shape_names:
            before = words[position - 1] if position > 0 else None
            colour = before if before in colour_names else None
            if colour is not None:
                named.append((position - 1, colour, word))
            named.append((position, colour, word))
    return named


def attention_on_object(captions, alignments, object_colours, object_shapes, location_masks,
                        colour_names, shape_names):
    """The attention-on-object rate on the generated shapes data.

    For every generated word that names an object (its colour word and its
    shape word), the location with the largest attention weight at that step
    is a hit when it lies on an object the phrase describes (same colour and
    shape). A word naming an object that is not in the image is a miss.

    Args:
        captions: N generated captions (strings; word `t` was generated at step `t`).
        alignments: `(N, steps, L)` attention weights, step `t` behind word `t`.
        object_colours, object_shapes: `(N, objects)` indices (-1: no object).
        location_masks: bool `(N, objects, L)`, from
            `course_lib.data.shapes.object_location_masks`.
        colour_names, shape_names: the names the indices refer to.

    Returns:
        A dict: `rate` (hits / words, 0 when no word names an object), `hits`,
        `words`, and `colour_rate` / `shape_rate` for the two kinds of word.
    """
    alignments = np.asarray(alignments)
    location_masks = np.asarray(location_masks, bool)
    count = len(captions)
    if alignments.ndim != 3 or len(alignments) != count or location_masks.shape[0] != count:
        raise ValueError(
            "Need alignments (N, steps, L) and masks (N, objects, L) for N captions. Received: "
            f"{count} captions, alignments.shape={alignments.shape}, location_masks.shape={location_masks.shape}"
        )
    if location_masks.shape[-1] != alignments.shape[-1]:
        raise ValueError(
            "Masks and alignments must cover the same locations. Received: "
            f"location_masks.shape={location_masks.shape}, alignments.shape={alignments.shape}"
        )
    tallies = {"colour": [0, 0], "shape": [0, 0]}
    for n, caption in enumerate(captions):
        words = caption.split()
        for position, colour, shape in object_words(words, colour_names, shape_names):
            kind = "shape" if words[position] == shape else "colour"
            tallies[kind][1] += 1
            if position >= alignments.shape[1]:
                continue
            wanted = (np.asarray(object_shapes[n]) == shape_names.index(shape))
            if colour is not None:
                wanted &= np.asarray(object_colours[n]) == colour_names.index(colour)
            if not wanted.any():
                continue
            on_objects = location_masks[n][wanted].any(axis=0)  # (L,)
            tallies[kind][0] += int(on_objects[int(np.argmax(alignments[n, position]))])
    hits = tallies["colour"][0] + tallies["shape"][0]
    words = tallies["colour"][1] + tallies["shape"][1]
    rate = lambda pair: pair[0] / pair[1] if pair[1] else 0.0  # noqa: E731
    return {
        "rate": hits / words if words else 0.0,
        "hits": hits,
        "words": words,
        "colour_rate": rate(tallies["colour"]),
        "shape_rate": rate(tallies["shape"]),
    }
