"""A character-level corpus the course writes itself, for the language model.

Sentences come from a small English-like grammar (determiner, adjectives,
noun, verb, object, optional place), e.g. "the small dog sees a red ball in
the park." The grammar gives the text real structure (word spellings,
agreement of "a"/"an", word order), so a recurrent language model can do far
better than a model that only knows how often each character occurs.

Vocabulary: `<pad>`=0, `<GO>`=1, `<stop>`=2, `<unk>`=3, then the characters.
Every sentence becomes `inputs = <GO> c_1 ... c_T` and
`targets = c_1 ... c_T <stop>` (teacher forcing: the true previous character
is the input at every step), right-padded with 0.
"""

import itertools
import math

import numpy as np

from course_lib.counts import check_count

PAD, GO, STOP, UNK = 0, 1, 2, 3
SPECIAL_TOKENS = ["<pad>", "<GO>", "<stop>", "<unk>"]

# The grammar's word lists; every sentence is
#   DET [ADJ] [ADJ] NOUN VERB DET [ADJ] NOUN [PREPOSITION DET PLACE] "."
SUBJECTS = ["cat", "dog", "bird", "child", "farmer", "teacher", "robot", "horse"]
OBJECTS = ["ball", "apple", "book", "kite", "river", "house", "egg", "song"]
ADJECTIVES = ["small", "old", "red", "happy", "quiet", "green", "big", "orange"]
VERBS = ["sees", "likes", "finds", "carries", "paints", "wants", "follows"]
PLACES = ["park", "garden", "kitchen", "market", "forest", "school"]
PREPOSITIONS = ["in", "near", "behind"]

ALPHABET = sorted(set("".join(SUBJECTS + OBJECTS + ADJECTIVES + VERBS + PLACES + PREPOSITIONS + ["the", "an"])) | {" ", "."})
VOCAB = SPECIAL_TOKENS + ALPHABET
VOCAB_SIZE = len(VOCAB)
CHAR_TO_ID = {char: index for index, char in enumerate(VOCAB)}


def _noun_phrase(rng, nouns):
    adjectives = [str(a) for a in rng.choice(ADJECTIVES, size=int(rng.integers(0, 3)), replace=False)]
    noun = str(rng.choice(nouns))
    first = (adjectives + [noun])[0]
    if rng.random() < 0.5:
        determiner = "the"
    else:
        determiner = "an" if first[0] in "aeiou" else "a"
    return " ".join([determiner, *adjectives, noun])


def make_sentence(rng):
    """One sentence of the grammar, drawn with the NumPy generator `rng`."""
    words = [_noun_phrase(rng, SUBJECTS), str(rng.choice(VERBS)), _noun_phrase(rng, OBJECTS)]
    if rng.random() < 0.5:
        words += [str(rng.choice(PREPOSITIONS)), "the", str(rng.choice(PLACES))]
    return " ".join(words) + "."


def _noun_phrases(nouns):
    """Every noun phrase `_noun_phrase` can draw from `nouns`, as `(text, probability)` pairs."""
    for count in range(3):  # 0, 1 or 2 adjectives, each count with probability 1/3
        orders = list(itertools.permutations(ADJECTIVES, count))
        for adjectives, noun in itertools.product(orders, nouns):
            first = (list(adjectives) + [noun])[0]
            for determiner in ("the", "an" if first[0] in "aeiou" else "a"):
                yield " ".join([determiner, *adjectives, noun]), 1 / 3 / len(orders) / len(nouns) / 2


def _entropy_and_mean_length(outcomes):
    """`(H, E[len])` in nats and characters of a distribution given as `(text, probability)` pairs."""
    outcomes = list(outcomes)
    return (-sum(p * math.log(p) for _, p in outcomes), sum(p * len(text) for text, p in outcomes))


def entropy_per_character():
    """The grammar's own uncertainty: the lowest average loss any model can reach, in nats per character.

    `make_sentence` makes independent choices (how many adjectives, which ones, which noun,
    "the" or "a"/"an", the verb, whether a place follows, and which), and different choices
    never spell the same sentence. So the entropy of a sentence `H(S)` is the sum of the
    choices' entropies, and a model that knew the grammar exactly would pay `H(S)` nats for a
    sentence on average. Spread over its tokens (the characters and `<stop>`, the tokens the
    language model's loss averages over), that is `H(S) / E[len(S) + 1]` nats per character,
    computed exactly here by enumerating every choice. `exp` of it is the lowest perplexity.
    No model can beat it on average: what is left is which word the grammar picks next.
    """
    verb = _entropy_and_mean_length((word, 1 / len(VERBS)) for word in VERBS)
    places = [f" {preposition} the {place}" for preposition in PREPOSITIONS for place in PLACES]
    # half of the sentences end with a place clause (with its leading space), half with none
    clause = _entropy_and_mean_length([("", 0.5)] + [(text, 0.5 / len(places)) for text in places])
    parts = [_entropy_and_mean_length(_noun_phrases(SUBJECTS)), verb, _entropy_and_mean_length(_noun_phrases(OBJECTS)),
             clause]
    entropy = sum(part_entropy for part_entropy, _ in parts)
    tokens = sum(length for _, length in parts) + 2 + 1 + 1  # two spaces between the parts, the full stop, <stop>
    return entropy / tokens


def make_sentences(count, seed=0):
    """`count` sentences, the same ones for the same seed."""
    if count < 1:
        raise ValueError(f"`count` must be positive. Received: count={count}")
    rng = np.random.default_rng(seed)
    return [make_sentence(rng) for _ in range(count)]


def encode(text):
    """Characters to ids (unknown characters become `<unk>`)."""
    return [CHAR_TO_ID.get(char, UNK) for char in text]


def decode(ids):
    """Ids to text; stops at `<stop>` and skips `<pad>` and `<GO>`."""
    characters = []
    for index in ids:
        index = int(index)
        if index == STOP:
            break
        if index in (PAD, GO):
            continue
        characters.append(VOCAB[index] if 0 <= index < VOCAB_SIZE else SPECIAL_TOKENS[UNK])
    return "".join(characters)


def to_arrays(sentences, max_length=None):
    """Sentences -> `(inputs, targets)` int32 arrays `(count, max_length + 1)`.

    `inputs` start with `<GO>`; `targets` end with `<stop>`; both padded with 0.
    `max_length=None` pads to the longest sentence; a number must be a whole
    number >= 1 (0 is not "no limit"), and a longer sentence raises `ValueError`.
    """
    sentences = list(sentences)
    if not sentences:
        raise ValueError("Need at least one sentence. Received: 0 sentences")
    if max_length is not None:
        max_length = check_count(max_length, "max_length")
    encoded = [encode(sentence) for sentence in sentences]
    longest = max(len(ids) for ids in encoded)
    max_length = longest if max_length is None else max_length
    if longest > max_length:
        raise ValueError(
            f"A sentence is longer than max_length. Received: longest={longest}, max_length={max_length}"
        )
    inputs = np.zeros((len(encoded), max_length + 1), "int32")
    targets = np.zeros((len(encoded), max_length + 1), "int32")
    for row, ids in enumerate(encoded):
        inputs[row, : len(ids) + 1] = [GO, *ids]
        targets[row, : len(ids) + 1] = [*ids, STOP]
    return inputs, targets


def train_valid_split(num_train=2000, num_valid=300, seed=0):
    """Deterministic corpus split: two dicts of `sentences`, `inputs`, `targets`.

    Validation sentences are drawn from a separate seed stream, so they are
    new draws from the same grammar (a few short ones can coincide with
    training sentences, as in any real corpus).
    """
    train = make_sentences(num_train, seed=seed)
    valid = make_sentences(num_valid, seed=seed + 100_003)
    max_length = max(len(s) for s in train + valid)
    splits = []
    for sentences in (train, valid):
        inputs, targets = to_arrays(sentences, max_length)
        splits.append({"sentences": sentences, "inputs": inputs, "targets": targets})
    return splits[0], splits[1]
