"""Caption text: word tokens, the caption vocabulary and padded id arrays.

The vocabulary is the course's `text.Vocabulary` (special ids `<pad>`=0,
`<GO>`=1, `<stop>`=2, `<unk>`=3), built over captions cleaned the caption
way: lower-cased, punctuation dropped.
"""

import re
import unicodedata

import numpy as np

from course_lib.text.normalize import as_string_list
from course_lib.text.vocabulary import GO, STOP, Vocabulary

# A word: letters and digits of any script ("café", "naïve"), with an apostrophe inside ("dog's").
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def tokenize_caption(text):
    """Lower-cases a caption and returns its words (punctuation dropped; accented letters kept).

    >>> tokenize_caption("A dog runs, in the park .")
    ['a', 'dog', 'runs', 'in', 'the', 'park']
    >>> tokenize_caption("A naïve café-goer")
    ['a', 'naïve', 'café', 'goer']
    """
    if not isinstance(text, str):
        raise ValueError(f"A caption must be a string. Received: {type(text).__name__} {text!r}")
    return _WORD.findall(unicodedata.normalize("NFC", text.lower()))  # NFC: an accent joins its letter


def caption_vocabulary(captions, min_count=1, max_size=None):
    """The word vocabulary of `captions` (strings), as a `text.Vocabulary`.

    Captions are cleaned by `tokenize_caption` first, so the vocabulary holds
    lower-case words without punctuation; ids and saving are those of every
    other vocabulary in the course (`<pad>`=0 ... `<unk>`=3, then words by
    decreasing frequency, ties alphabetical).

    Args:
        captions: the training captions (strings).
        min_count: words seen fewer times become `<unk>`.
        max_size: keep at most this many ids in all (specials included).

    Returns:
        A `text.Vocabulary` at word level.
    """
    # A bare string would be read as a list of one-letter captions.
    cleaned = [" ".join(tokenize_caption(caption)) for caption in as_string_list(captions, "captions")]
    return Vocabulary.from_texts(
        cleaned, level="word", max_size=max_size, min_count=min_count, lowercase=False, split_punctuation=False
    )


def caption_arrays(vocabulary, captions, max_length=None):
    """Teacher-forcing arrays for a list of caption strings.

    Returns:
        `(target_in, target_out)`, int32 `(n, length)`: `<GO> w_1 .. w_T` and
        `w_1 .. w_T <stop>`, padded with 0. A caption of more than
        `max_length - 1` words is cut to its first `max_length` words, with
        no `<stop>`: `<GO> w_1 .. w_{L-1}` and `w_1 .. w_L`, so that the model
        is never taught to stop in the middle of a sentence (the real
        Flickr8k subset has 75 such captions of 4,075 at the course's 21).
    """
    encoded = [vocabulary.lookup(tokenize_caption(c)) for c in as_string_list(captions, "captions")]
    if not encoded:
        raise ValueError("Need at least one caption. Received: 0 captions")
    longest = max(len(e) for e in encoded) + 1
    length = longest if max_length is None else min(int(max_length), longest)
    if length < 1:
        raise ValueError(f"`max_length` must be at least 1. Received: max_length={max_length}")
    target_in = np.zeros((len(encoded), length), "int32")
    target_out = np.zeros((len(encoded), length), "int32")
    for row, ids in enumerate(encoded):
        target_in[row, 0] = GO
        if len(ids) >= length:  # cut: the words go on, so no <stop> here
            target_in[row, 1:] = ids[: length - 1]
            target_out[row] = ids[:length]
            continue
        target_in[row, 1 : len(ids) + 1] = ids
        target_out[row, : len(ids)] = ids
        target_out[row, len(ids)] = STOP
    return target_in, target_out
