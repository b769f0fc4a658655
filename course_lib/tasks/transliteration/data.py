"""Transliteration data: word pairs from files or the generated set, vocabularies, id arrays, noise.

A pair is a roman word and its Devanagari spelling; a model reads one side
and writes the other (`direction`). With no file, the generated word set of
`course_lib.data.transliteration_words` (offline).
"""

import numpy as np

from course_lib.tasks.transliteration.config import check_direction


def load_pairs(path_or_url, errors="warn"):
    """Reads Aksharantar (`.csv`) or Dakshina (`.tsv`) pairs from a file or URL."""
    name = str(path_or_url).split("?")[0].lower()
    if name.endswith(".tsv"):
        from course_lib.data.dakshina import load_dakshina

        return load_dakshina(path_or_url, errors=errors)
    if name.endswith(".csv"):
        from course_lib.data.aksharantar import load_aksharantar

        return load_aksharantar(path_or_url, errors=errors)
    raise ValueError(
        "Transliteration files must be Aksharantar `.csv` (roman,native) or Dakshina `.tsv` "
        f"(native<TAB>roman<TAB>count). Received: {path_or_url!r}"
    )


def generated_splits(config):
    """The offline default: generated (train, valid, test) pairs."""
    from course_lib.data.transliteration_words import splits

    return splits(config.train_words, config.valid_words, config.test_words, seed=config.seed,
                  drop_vowel_length=config.drop_vowel_length)


def sides(pairs, direction="roman-native"):
    """`(source texts, target texts)` of the pairs: roman -> native, or native -> roman
    for the reverse model that scores candidates when reranking."""
    roman, native = [p.roman for p in pairs], [p.native for p in pairs]
    return (roman, native) if check_direction(direction) == "roman-native" else (native, roman)


def build_vocabularies(train_pairs, direction="roman-native"):
    """Character vocabularies `(source, target)`: lower-cased roman letters and Devanagari code points."""
    from course_lib.text.vocabulary import Vocabulary

    roman, native = sides(train_pairs)
    roman_vocab = Vocabulary.from_texts(roman, level="char", lowercase=True)
    native_vocab = Vocabulary.from_texts(native, level="char")
    return (roman_vocab, native_vocab) if check_direction(direction) == "roman-native" else (native_vocab, roman_vocab)


def encode_pairs(pairs, source_vocab, target_vocab, direction="roman-native", right_to_left=False):
    """Padded `(source, target + <stop>)` id arrays; with `right_to_left` each
    target is written from its last letter (the `<stop>` still comes last)."""
    from course_lib.decoding.sequences import reverse_tokens
    from course_lib.text.vocabulary import STOP

    source_texts, target_texts = sides(pairs, direction)
    target = target_vocab.encode(target_texts, add_stop=True)
    return source_vocab.encode(source_texts), reverse_tokens(target, STOP) if right_to_left else target


def test_items(pairs, target_vocab, direction="roman-native"):
    """Distinct source words and, for each, all accepted (normalised) outputs."""
    from course_lib.data.transliteration_pairs import references_by_source

    grouped = references_by_source(pairs, "roman" if check_direction(direction) == "roman-native" else "native")
    words = list(grouped)
    references = target_vocab.normalized_groups([grouped[word] for word in words])
    return words, references


def token_noise(ids, probability, rng, keep_first=False):
    """Replaces real (non-padding) tokens by `<unk>` with the given probability.

    Used on the source letters and on the decoder's teacher-forced inputs
    during training (token dropout): the model must not rely on every single
    letter, which reduces over-fitting on a word list.
    """
    from course_lib.text.vocabulary import PAD, UNK

    if probability <= 0:
        return ids
    hit = (rng.random(ids.shape) < probability) & (ids != PAD)
    if keep_first:
        hit[:, 0] = False  # the <GO> token stays
    return np.where(hit, UNK, ids).astype(ids.dtype)


def noise_transform(config):
    """The batch transform for `course_lib.data.buckets` (None without noise)."""
    if config.source_noise <= 0 and config.target_noise <= 0:
        return None

    def transform(inputs, target_out, rng):
        return {
            "source": token_noise(inputs["source"], config.source_noise, rng),
            "target_in": token_noise(inputs["target_in"], config.target_noise, rng, keep_first=True),
        }, target_out

    return transform
