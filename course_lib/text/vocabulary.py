"""Word- and character-level vocabularies with the course's special tokens.

Ids follow the convention used everywhere in `course_lib`:
`<pad>`=0, `<GO>`=1, `<stop>`=2, `<unk>`=3, then the tokens of the training
texts by decreasing frequency (ties in code-point order). Lookup has the
semantics of Keras `StringLookup(mask_token="<pad>", oov_token="<unk>")`:
padding is id 0 and every unknown token maps to `<unk>`. A vocabulary keeps
its text settings (level, lower-casing, punctuation splitting, Unicode form),
so saving it beside a model is enough to process new text the same way.
"""

import collections
import inspect
import json
import os

import numpy as np

from course_lib.counts import check_count
from course_lib.text.normalize import NORMALIZATION_FORMS, as_string_list
from course_lib.text.tokenize import check_level, tokenize

PAD, GO, STOP, UNK = 0, 1, 2, 3
SPECIAL_TOKENS = ("<pad>", "<GO>", "<stop>", "<unk>")
# Ids that only the code writes. Text that happens to contain "<stop>" or "<pad>" is not cut short or
# padded by it: `lookup` reads these three as unknown words. (A literal "<unk>" stays `<unk>`.)
CONTROL_IDS = (PAD, GO, STOP)
FORMAT_VERSION = 1


class Vocabulary:
    """Maps text to padded id arrays and ids back to text.

    Args:
        tokens: all tokens in id order; must start with the four special tokens.
        level: "word" or "char".
        lowercase: lower-case text before splitting (English, Roman script).
        split_punctuation: make punctuation marks separate word tokens.
        form: Unicode normalisation form ("NFKC" keeps Devanagari intact).
    """

    def __init__(self, tokens, level="word", lowercase=False, split_punctuation=None, form="NFKC"):
        check_level(level)
        if form not in NORMALIZATION_FORMS:
            raise ValueError(f"`form` must be one of {NORMALIZATION_FORMS}. Received: form={form!r}")
        tokens = list(tokens)
        if tuple(tokens[: len(SPECIAL_TOKENS)]) != SPECIAL_TOKENS:
            raise ValueError(
                f"A vocabulary must start with {SPECIAL_TOKENS}. Received: first tokens={tokens[:4]}"
            )
        if len(set(tokens)) != len(tokens):
            duplicates = sorted(t for t, c in collections.Counter(tokens).items() if c > 1)
            raise ValueError(f"Vocabulary tokens must be unique. Received duplicates: {duplicates[:10]}")
        self.tokens = tokens
        self.level = level
        self.lowercase = bool(lowercase)
        self.split_punctuation = (level == "word") if split_punctuation is None else bool(split_punctuation)
        self.form = form
        self.index = {token: i for i, token in enumerate(tokens)}

    # -- building ---------------------------------------------------------------

    @classmethod
    def from_texts(cls, texts, level="word", max_size=None, min_count=1, lowercase=False,
                   split_punctuation=None, form="NFKC"):
        """Builds a vocabulary from training texts.

        Args:
            texts: list of strings.
            level, lowercase, split_punctuation, form: as for `Vocabulary`.
            max_size: most tokens, the four special tokens included.
            min_count: drop tokens seen fewer times (they become `<unk>`).

        Returns:
            A `Vocabulary`: the special tokens, then tokens by decreasing
            count (ties alphabetical).
        """
        if max_size is not None:
            max_size = check_count(max_size, "max_size")
            if max_size <= len(SPECIAL_TOKENS):
                raise ValueError(
                    f"`max_size` must exceed the {len(SPECIAL_TOKENS)} special tokens. Received: max_size={max_size}"
                )
        min_count = check_count(min_count, "min_count")
        probe = cls(SPECIAL_TOKENS, level, lowercase, split_punctuation, form)
        counts = collections.Counter(token for row in probe.tokenize(texts) for token in row)
        for special in SPECIAL_TOKENS:
            counts.pop(special, None)
        ranked = sorted((t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t))
        if max_size is not None:
            ranked = ranked[: max_size - len(SPECIAL_TOKENS)]
        if not ranked:
            raise ValueError(
                f"No token occurs at least min_count={min_count} times in the {len(texts)} texts given."
            )
        return cls(list(SPECIAL_TOKENS) + ranked, level, lowercase, probe.split_punctuation, form)

    # -- text <-> ids -----------------------------------------------------------

    def __len__(self):
        return len(self.tokens)

    @property
    def separator(self):
        return " " if self.level == "word" else ""

    def tokenize(self, texts):
        """Normalises and splits texts the way this vocabulary expects."""
        return tokenize(texts, self.level, self.lowercase, self.split_punctuation, self.form)

    def normalized(self, texts):
        """Texts in this vocabulary's form (normalised, tokens joined by `separator`), to compare with
        decoded output."""
        return [self.separator.join(tokens) for tokens in self.tokenize(texts)]

    def normalized_groups(self, groups):
        """`normalized` of each group of texts (such as all references of one source), in one call for
        every group: one call per group took 5 s for 1,500 test sentences."""
        flat = iter(self.normalized([text for group in groups for text in group]))
        return [[next(flat) for _ in group] for group in groups]

    def lookup(self, tokens):
        """Token strings to ids; unknown tokens, and the control tokens `<pad>`, `<GO>` and `<stop>`
        written as text, give `<unk>` (3)."""
        ids = [self.index.get(token, UNK) for token in tokens]
        return [UNK if i in CONTROL_IDS else i for i in ids]

    def encode(self, texts, add_go=False, add_stop=False, allow_empty=False, length=None):
        """Encodes texts to a padded `(batch, max_len)` int32 array.

        Args:
            texts: list of strings.
            add_go, add_stop: put `<GO>` before / `<stop>` after each sequence.
            allow_empty: encode empty (or white-space only) texts as all padding
                instead of raising `ValueError`.
            length: pad (never cut) to this many columns (a whole number >= 1;
                None: to the longest row).
        """
        if length is not None:
            length = check_count(length, "length")
        texts = as_string_list(texts)
        rows = self.tokenize(texts)
        if not allow_empty:
            empty = [i for i, row in enumerate(rows) if not row]
            if empty:
                raise ValueError(
                    f"Text is empty after normalisation at index {empty[:10]}: nothing to encode. "
                    f"Received: {texts[empty[0]]!r}"
                )
        ids = [([GO] if add_go else []) + self.lookup(row) + ([STOP] if add_stop else []) for row in rows]
        width = max([len(row) for row in ids] + [1])
        if length is not None:
            if length < width:
                raise ValueError(f"`length` is shorter than the longest text. Received: length={length}, need {width}")
            width = length
        array = np.full((len(ids), width), PAD, dtype="int32")
        for i, row in enumerate(ids):
            array[i, : len(row)] = row
        return array

    def decode_tokens(self, ids):
        """Ids of one sequence to tokens: cut at `<stop>`, drop `<pad>` and `<GO>`."""
        ids = np.asarray(ids)
        if ids.size and ids.dtype.kind not in "iu":
            raise ValueError(
                f"Token ids must be integers. Received: dtype={ids.dtype}, first values {ids.reshape(-1)[:5].tolist()}"
            )
        tokens = []
        for token_id in ids.reshape(-1).tolist():
            if token_id == STOP:
                break
            if token_id in (PAD, GO):
                continue
            if not 0 <= token_id < len(self.tokens):
                raise ValueError(f"Token id out of range [0, {len(self.tokens)}). Received: {token_id}")
            tokens.append(self.tokens[token_id])
        return tokens

    def decode(self, ids):
        """Ids of one sequence `(len,)` to a string: tokens joined by `separator` (a space, or nothing for characters)."""
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise ValueError(f"`decode` takes one sequence (len,); use `decode_batch`. Received: shape={ids.shape}")
        return self.separator.join(self.decode_tokens(ids))

    def decode_batch(self, ids):
        """Ids `(batch, len)` to a list of strings."""
        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"`decode_batch` takes (batch, len) ids. Received: shape={ids.shape}")
        return [self.decode(row) for row in ids]

    # -- saving -----------------------------------------------------------------

    def get_config(self):
        return {
            "format_version": FORMAT_VERSION,
            "level": self.level,
            "lowercase": self.lowercase,
            "split_punctuation": self.split_punctuation,
            "form": self.form,
            "tokens": self.tokens,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("format_version", None)
        return cls(**config)

    def save(self, path):
        """Writes the vocabulary as UTF-8 JSON."""
        directory = os.path.dirname(os.fspath(path))
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.get_config(), handle, ensure_ascii=False, indent=1)

    @classmethod
    def load(cls, path):
        if not os.path.exists(path):
            raise FileNotFoundError(f"No vocabulary file at {os.fspath(path)!r}")
        with open(path, encoding="utf-8") as handle:
            try:
                config = json.load(handle)
            except json.JSONDecodeError as error:
                raise ValueError(f"{os.fspath(path)!r} is not a vocabulary JSON file: {error}") from None
        if not isinstance(config, dict) or "tokens" not in config:
            raise ValueError(f"{os.fspath(path)!r} is not a vocabulary file (no 'tokens').")
        version = config.get("format_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise ValueError(
                f"{os.fspath(path)!r} has a vocabulary format this version of course_lib does not know "
                f"(it reads format_version {FORMAT_VERSION}). Received: format_version={version!r}"
            )
        known = {"format_version"} | set(inspect.signature(cls).parameters)  # what get_config writes
        unexpected = sorted(set(config) - known)
        if unexpected:
            raise ValueError(
                f"{os.fspath(path)!r} holds keys a vocabulary file does not have. "
                f"Received: unexpected keys {unexpected}"
            )
        return cls.from_config(config)

    def __eq__(self, other):
        return isinstance(other, Vocabulary) and self.get_config() == other.get_config()

    def __repr__(self):
        return f"Vocabulary(size={len(self)}, level={self.level!r}, lowercase={self.lowercase})"
