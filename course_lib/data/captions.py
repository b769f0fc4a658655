"""Caption text: word tokens, a word vocabulary and padded id arrays.

Special ids follow the project convention: `<pad>`=0, `<GO>`=1, `<stop>`=2,
`<unk>`=3; words follow in order of decreasing frequency (ties broken
alphabetically, so the vocabulary is deterministic).
"""

import json
import re
from collections import Counter

import numpy as np

PAD, GO, STOP, UNK = 0, 1, 2, 3
SPECIAL_TOKENS = ["<pad>", "<GO>", "<stop>", "<unk>"]

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokenize_caption(text):
    """Lower-cases a caption and returns its words (punctuation dropped).

    >>> tokenize_caption("A dog runs, in the park .")
    ['a', 'dog', 'runs', 'in', 'the', 'park']
    """
    if not isinstance(text, str):
        raise ValueError(f"A caption must be a string. Received: {type(text).__name__} {text!r}")
    return _WORD.findall(text.lower())


class CaptionVocabulary:
    """Maps caption words to ids and back.

    Args:
        words: the words after the four special tokens, in id order.
    """

    def __init__(self, words):
        words = list(words)
        duplicates = sorted({w for w in words if words.count(w) > 1}) if len(set(words)) != len(words) else []
        if duplicates or any(w in SPECIAL_TOKENS for w in words):
            raise ValueError(
                f"Vocabulary words must be unique and not special tokens. Received duplicates={duplicates[:5]}"
            )
        self.tokens = SPECIAL_TOKENS + words
        self.index = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def build(cls, captions, min_count=1, max_size=None):
        """Builds the vocabulary of `captions` (strings).

        Args:
            min_count: words seen fewer times become `<unk>`.
            max_size: keep at most this many ids in all (specials included).
        """
        if min_count < 1:
            raise ValueError(f"`min_count` must be at least 1. Received: min_count={min_count}")
        counts = Counter(word for caption in captions for word in tokenize_caption(caption))
        words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        if max_size is not None:
            if max_size <= len(SPECIAL_TOKENS):
                raise ValueError(f"`max_size` must exceed {len(SPECIAL_TOKENS)}. Received: max_size={max_size}")
            words = words[: max_size - len(SPECIAL_TOKENS)]
        return cls(words)

    def __len__(self):
        return len(self.tokens)

    def encode(self, caption):
        """Word ids of one caption (no `<GO>`/`<stop>`)."""
        return [self.index.get(word, UNK) for word in tokenize_caption(caption)]

    def decode(self, ids):
        """Words of a list of ids, cut at the first `<stop>`, specials dropped."""
        words = []
        for token in ids:
            token = int(token)
            if token == STOP:
                break
            if token in (PAD, GO):
                continue
            if not 0 <= token < len(self.tokens):
                raise ValueError(f"Token id out of range [0, {len(self.tokens)}). Received: {token}")
            words.append(self.tokens[token])
        return " ".join(words)

    def to_json(self):
        return json.dumps({"tokens": self.tokens})

    @classmethod
    def from_json(cls, text):
        tokens = json.loads(text)["tokens"]
        if tokens[: len(SPECIAL_TOKENS)] != SPECIAL_TOKENS:
            raise ValueError(f"Not a caption vocabulary: first tokens are {tokens[:4]}")
        return cls(tokens[len(SPECIAL_TOKENS):])


def caption_arrays(vocabulary, captions, max_length=None):
    """Teacher-forcing arrays for a list of caption strings.

    Returns:
        `(target_in, target_out)`, int32 `(n, length)`: `<GO> w_1 .. w_T` and
        `w_1 .. w_T <stop>`, padded with 0. Captions longer than
        `max_length - 1` words are cut (the `<stop>` is always kept).
    """
    encoded = [vocabulary.encode(c) for c in captions]
    if not encoded:
        raise ValueError("Need at least one caption. Received: 0 captions")
    longest = max(len(e) for e in encoded) + 1
    length = longest if max_length is None else min(int(max_length), longest)
    if length < 1:
        raise ValueError(f"`max_length` must be at least 1. Received: max_length={max_length}")
    target_in = np.zeros((len(encoded), length), "int32")
    target_out = np.zeros((len(encoded), length), "int32")
    for row, ids in enumerate(encoded):
        ids = ids[: length - 1]
        target_in[row, 0] = GO
        target_in[row, 1 : len(ids) + 1] = ids
        target_out[row, : len(ids)] = ids
        target_out[row, len(ids)] = STOP
    return target_in, target_out
