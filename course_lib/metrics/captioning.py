"""Captioning metrics: BLEU-1..4 over all references, exact match, attention on objects."""

import numbers

import numpy as np

from course_lib.metrics.bleu import corpus_bleu
from course_lib.metrics.ties import tied_argmax_credit


def caption_bleu(hypotheses, references, max_order=4):
    """BLEU-1 .. BLEU-`max_order` (0-100) against all reference captions of each image.

    Args:
        hypotheses: list of N generated captions (strings).
        references: list of N lists of reference captions (e.g. Flickr8k's five).
        max_order: the longest n-gram scored.

    Returns:
        `{"bleu1": ..., "bleu2": ..., ...}` (corpus BLEU with n-grams up to n,
        computed by `course_lib.metrics.bleu.corpus_bleu`).
    """
    if isinstance(max_order, bool) or not isinstance(max_order, numbers.Integral) or not 1 <= max_order <= 4:
        raise ValueError(f"`max_order` must be an integer in 1..4. Received: max_order={max_order!r}")
    return {f"bleu{n}": corpus_bleu(hypotheses, references, max_order=n) for n in range(1, max_order + 1)}


def caption_list(captions, name):
    """`captions` as a checked list of strings; a single string (a list of characters) is refused."""
    if isinstance(captions, str):
        raise ValueError(f"`{name}` must be a list of captions, not a str. Received: {name}={captions[:40]!r}")
    captions = list(captions)
    for index, caption in enumerate(captions):
        if not isinstance(caption, str):
            raise ValueError(
                f"`{name}` must hold caption strings. Received: {name}[{index}] of type {type(caption).__name__}"
            )
    return captions


def caption_words(caption):
    """The words that caption comparisons read: lower-cased, split on any whitespace."""
    return caption.lower().split()


def exact_caption_match(hypotheses, references):
    """Share of generated captions equal (word for word, case-blind) to their gold caption."""
    hypotheses, references = caption_list(hypotheses, "hypotheses"), caption_list(references, "references")
    if len(hypotheses) != len(references) or not hypotheses:
        raise ValueError(
            "Need as many gold captions as generated ones, at least one. "
            f"Received: {len(hypotheses)} and {len(references)}"
        )
    same = [caption_words(h) == caption_words(r) for h, r in zip(hypotheses, references)]
    return float(np.mean(same))


def distinct_caption_rate(captions):
    """Distinct captions divided by captions: 1/N when the model says the same thing for every image."""
    captions = [" ".join(caption_words(c)) for c in caption_list(captions, "captions")]
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


ERROR_KINDS = ("recognition", "order", "relation", "count", "malformed")


def parse_object_caption(words, colour_names, shape_names):
    """Splits a caption of the grammar `a C S ((above | left of) a C S)*` into its parts.

    Returns:
        `(objects, relations)`: `[(colour, shape), ...]` in caption order and
        the words linking them (`"above"` or `"left of"`), or None when the
        words do not follow the grammar.
    """
    objects, relations, position = [], [], 0
    while True:
        if position + 3 > len(words) or words[position] != "a":  # every object phrase is "a C S"
            return None
        colour, shape = words[position + 1], words[position + 2]
        if colour not in colour_names or shape not in shape_names:
            return None
        objects.append((colour, shape))
        position += 3
        if position == len(words):
            return objects, relations
        if words[position] == "above":
            relations.append("above")
            position += 1
        elif words[position:position + 2] == ["left", "of"]:
            relations.append("left of")
            position += 2
        else:
            return None


def caption_error_kind(hypothesis, reference, colour_names, shape_names):
    """What the first mistake of a caption on the shapes data is about.

    The two captions are read object by object: first which object comes
    next, then the word that links it to the one before. At the first
    difference the mistake is

    * `"recognition"`: the caption names an object (colour and shape) that the
      reference does not name at all: *what* is there was misread;
    * `"order"`: it names an object the reference names elsewhere: the
      objects are right but not in reading order;
    * `"relation"`: the objects so far agree, the next one too, but the word
      linking them does not ("above" for "left of" or back);
    * `"count"`: every object named agrees but one caption names more;
    * `"malformed"`: the caption does not follow the data's grammar.

    Returns:
        One of `ERROR_KINDS`, or None when the captions are equal word for
        word, case-blind (as `exact_caption_match` compares them).

    Raises:
        ValueError: when the reference itself does not follow the grammar.
    """
    got_words, expected_words = caption_words(hypothesis), caption_words(reference)
    if got_words == expected_words:
        return None
    expected = parse_object_caption(expected_words, colour_names, shape_names)
    if expected is None:
        raise ValueError(f"The reference does not follow the shapes grammar. Received: {reference!r}")
    got = parse_object_caption(got_words, colour_names, shape_names)
    if got is None:
        return "malformed"
    (got_objects, got_links), (objects, links) = got, expected
    for index in range(min(len(got_objects), len(objects))):
        if got_objects[index] != objects[index]:  # went on to another object: its link word may fit that one
            return "order" if got_objects[index] in objects else "recognition"
        if index > 0 and got_links[index - 1] != links[index - 1]:
            return "relation"
    return "count"


def caption_error_kinds(hypotheses, references, colour_names, shape_names):
    """`caption_error_kind` over a test set: how many captions are exact and how many miss for each reason.

    Returns:
        A dict `{"exact": n, "recognition": n, "order": n, "relation": n,
        "count": n, "malformed": n}`.
    """
    hypotheses, references = caption_list(hypotheses, "hypotheses"), caption_list(references, "references")
    if len(hypotheses) != len(references):
        raise ValueError(f"Need one reference per caption. "
                         f"Received: {len(hypotheses)} captions, {len(references)} references")
    counts = dict.fromkeys(("exact",) + ERROR_KINDS, 0)
    for hypothesis, reference in zip(hypotheses, references):
        counts[caption_error_kind(hypothesis, reference, colour_names, shape_names) or "exact"] += 1
    return counts


def object_word_hits(words, alignment, object_colours, object_shapes, location_masks,
                     colour_names, shape_names):
    """Where the attention looked for each word of one caption that names an object.

    Args:
        words: the generated words; word `t` was generated at step `t`.
        alignment: `(steps, L)` attention weights of this caption.
        object_colours, object_shapes: `(objects,)` indices (-1: no object).
        location_masks: bool `(objects, L)`: which locations each object covers.
        colour_names, shape_names: the names the indices refer to.

    Returns:
        One dict per colour or shape word that names an object (see
        `object_words`): `position`, `word`, `kind` ("colour" or "shape"),
        `named` (indices of the image's objects the phrase describes; empty
        when no such object is in the image), `attended` (the location with
        the largest weight, or None past the end of `alignment`), `on` (the
        objects covering that location), `hit` (True when one of them is
        named), `credit` (the share of the locations tied for the largest
        weight that lie on a named object: `hit` as 1.0 or 0.0 when one
        location has the largest weight, see `metrics.ties`) and `chance`
        (the share of locations on a named object: the hit rate of a look
        at a random location).
    """
    alignment = np.asarray(alignment)
    location_masks = np.asarray(location_masks, bool)
    object_colours, object_shapes = np.asarray(object_colours), np.asarray(object_shapes)
    if (location_masks.ndim != 2 or object_colours.shape != object_shapes.shape
            or object_colours.shape != location_masks.shape[:1]):
        raise ValueError(  # NumPy would broadcast a mismatch and score the wrong objects
            "Need object_colours and object_shapes (objects,) and location_masks (objects, L) for the same "
            f"objects. Received: object_colours.shape={object_colours.shape}, "
            f"object_shapes.shape={object_shapes.shape}, location_masks.shape={location_masks.shape}"
        )
    if alignment.ndim != 2 or alignment.shape[-1] != location_masks.shape[-1]:
        raise ValueError(
            "Need alignment (steps, L) over the masks' L locations. Received: "
            f"alignment.shape={alignment.shape}, location_masks.shape={location_masks.shape}"
        )
    results = []
    for position, colour, shape in object_words(words, colour_names, shape_names):
        wanted = object_shapes == shape_names.index(shape)
        if colour is not None:
            wanted &= object_colours == colour_names.index(colour)
        attended = int(np.argmax(alignment[position])) if position < alignment.shape[0] else None
        on = [] if attended is None else [int(k) for k in np.flatnonzero(location_masks[:, attended])]
        named = [int(k) for k in np.flatnonzero(wanted)]
        covered = location_masks[named].any(axis=0) if named else np.zeros(location_masks.shape[-1], bool)  # (L,)
        credit = 0.0 if attended is None else float(tied_argmax_credit(alignment[position], covered))
        results.append({
            "position": position,
            "word": words[position],
            "kind": "shape" if words[position] == shape else "colour",
            "named": named,
            "attended": attended,
            "on": on,
            "hit": bool(set(on) & set(named)),
            "credit": credit,
            "chance": float(covered.mean()),
        })
    return results


def attention_on_object(captions, alignments, object_colours, object_shapes, location_masks,
                        colour_names, shape_names):
    """The attention-on-object rate on the generated shapes data.

    For every generated word that names an object (its colour word and its
    shape word), the location with the largest attention weight at that step
    is a hit when it lies on an object the phrase describes (same colour and
    shape). A word naming an object that is not in the image is a miss. When
    several locations tie for the largest weight (an attention spread evenly,
    as an untrained model's is), the word scores the share of them that lie on
    a named object, so a `hits` count can be fractional.
    `object_word_hits` gives the same judgement word by word for one caption.

    Args:
        captions: N generated captions (strings; word `t` was generated at step `t`).
        alignments: `(N, steps, L)` attention weights, step `t` behind word `t`.
        object_colours, object_shapes: `(N, objects)` indices (-1: no object).
        location_masks: bool `(N, objects, L)`, from
            `course_lib.data.shapes.object_location_masks`.
        colour_names, shape_names: the names the indices refer to.

    Returns:
        A dict: `rate` (hits / words, 0 when no word names an object), `hits`,
        `words`, `colour_rate` / `shape_rate` for the two kinds of word, and
        `chance`: the rate that looking at a random location would get (the
        mean share of locations covered by the named objects).
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
    object_colours, object_shapes = np.asarray(object_colours), np.asarray(object_shapes)
    if location_masks.ndim != 3 or not object_colours.shape == object_shapes.shape == location_masks.shape[:2]:
        raise ValueError(  # NumPy would broadcast a mismatch and score the wrong objects
            "Need object_colours and object_shapes (N, objects) matching location_masks (N, objects, L). "
            f"Received: object_colours.shape={object_colours.shape}, object_shapes.shape={object_shapes.shape}, "
            f"location_masks.shape={location_masks.shape}"
        )
    if not np.isfinite(alignments.astype(float)).all():
        raise ValueError("`alignments` holds NaN or infinite weights. Received: non-finite values")
    tallies = {"colour": [0, 0], "shape": [0, 0]}
    chances = []
    for n, caption in enumerate(captions):
        for word in object_word_hits(caption.split(), alignments[n], object_colours[n], object_shapes[n],
                                     location_masks[n], colour_names, shape_names):
            tallies[word["kind"]][0] += word["credit"]
            tallies[word["kind"]][1] += 1
            chances.append(word["chance"])
    hits = tallies["colour"][0] + tallies["shape"][0]
    words = tallies["colour"][1] + tallies["shape"][1]
    rate = lambda pair: pair[0] / pair[1] if pair[1] else 0.0  # noqa: E731
    return {
        "rate": hits / words if words else 0.0,
        "hits": hits,
        "words": words,
        "colour_rate": rate(tallies["colour"]),
        "shape_rate": rate(tallies["shape"]),
        "chance": float(np.mean(chances)) if chances else 0.0,
    }


def _caption_id_pairs(target_in, target_out, name):
    """`(target_in, target_out)` as integer arrays of one shape (teacher-forcing pairs)."""
    target_in, target_out = np.asarray(target_in), np.asarray(target_out)
    if target_in.shape != target_out.shape or target_in.ndim != 2:
        raise ValueError(
            f"`{name}` needs (captions, steps) input and output ids of one shape. "
            f"Received: shapes {target_in.shape} and {target_out.shape}"
        )
    for ids in (target_in, target_out):
        if ids.size and ids.dtype.kind not in "iu":
            raise ValueError(f"`{name}` must hold integer token ids. Received: dtype={ids.dtype}")
    return target_in.astype("int64"), target_out.astype("int64")


def bigram_next_word_accuracy(train_pairs, eval_pairs, vocab_size, pad_id=0):
    """Next-word accuracy of an image-blind bigram guesser, scored like teacher-forced word accuracy.

    The guesser never sees the image: after each word it writes the word
    that came right after it most often in the training captions (ties go to
    the lowest id; a word never followed by anything in training gets
    `pad_id`, which is never right). Like a captioner's `val_token_accuracy`,
    it is given the true previous word at every step and scored on every real
    target (words and `<stop>`), never on padding. Whatever a captioner scores
    above it, it owes to the image.

    Args:
        train_pairs: `(target_in, target_out)` int arrays `(captions, steps)`
            of the training captions (`course_lib.data.captions.caption_arrays`).
        eval_pairs: the same for the captions to score (e.g. validation).
        vocab_size: number of ids; every id must be below it.
        pad_id: the padding id (targets equal to it are not counted).

    Returns:
        The share of real evaluation targets the guesser gets right, a float in 0..1.
    """
    whole = [isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) for value in (vocab_size, pad_id)]
    if not all(whole) or not 0 <= pad_id < vocab_size:
        raise ValueError(
            f"Need whole numbers 0 <= pad_id < vocab_size. Received: vocab_size={vocab_size!r}, pad_id={pad_id!r}"
        )
    train_in, train_out = _caption_id_pairs(*train_pairs, "train_pairs")
    eval_in, eval_out = _caption_id_pairs(*eval_pairs, "eval_pairs")
    for ids in (train_in, train_out, eval_in, eval_out):
        if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"Token ids must lie in 0..{vocab_size - 1}. Received: min={ids.min()}, max={ids.max()}")
    real = eval_out != pad_id
    if not real.any():
        raise ValueError(f"`eval_pairs` holds no real target (all padding). Received: eval_out.shape={eval_out.shape}")
    seen = train_out != pad_id
    # each (previous, next) pair seen in training, with how often: sparse, so a 20,000-word vocabulary costs
    # memory for the pairs that occur, not for 20,000 x 20,000 counts
    pairs, counts = np.unique(np.stack([train_in[seen], train_out[seen]], axis=1), axis=0, return_counts=True)
    guess = np.full(vocab_size, pad_id, "int64")  # a word never followed by anything gets pad_id, never right
    # per previous word, the most frequent next word; ties go to the lowest id (sorted by word, count down, next up)
    order = np.lexsort((pairs[:, 1], -counts, pairs[:, 0]))
    pairs = pairs[order]
    first = np.ones(len(pairs), bool)
    first[1:] = pairs[1:, 0] != pairs[:-1, 0]
    guess[pairs[first, 0]] = pairs[first, 1]
    return float(np.mean(guess[eval_in[real]] == eval_out[real]))
