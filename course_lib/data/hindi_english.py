"""A generated English–Hindi parallel corpus with gold word alignments.

The lecture's running example, "I am going home" ↔ "मैं घर जा रहा हूँ",
grown into a small grammar:

* subjects: pronouns (I, we, you, he, she, they), nouns (the boy, the girls,
  the children ...), names (Ram, Sita ...) and possessives (my brother, my
  sister, my friends);
* motion verbs (go, come, return) to a place, optionally with an adjective
  ("to the big market" → "बड़े बाज़ार", adjective in the oblique case), in the
  present progressive, the simple past and the future;
* transitive verbs (eat, drink, read, write, buy, watch) with an object,
  optionally with an adjective agreeing with the object's gender, in the
  present progressive and the future (the Hindi simple past of a transitive
  verb takes the ergative ने and agrees with the object instead, so it is left
  out to keep the rule "the verb agrees with the subject" exact).

Hindi is subject–object–verb; English subject–verb–object. The verb agrees
with the subject's person, gender and number: जा रहा हूँ (I, male speaker),
जा रही हूँ (female), जा रहे हैं (we/they, masculine), गई (she went),
जाएँगी (they, feminine, will go).

English does not show the gender of "I", "we", "you" or "they", so such an
English sentence has two Hindi translations. The corpus keeps both (like
Tatoeba does), splits by English sentence so that a sentence and all its
translations land in the same part, and evaluation uses all of them as
references.

Every pair records its gold word alignment: a list of `(english_index,
hindi_index)` links over the whitespace-separated words. Articles and "to"
are linked to the noun they go with, "will" to the Hindi future verb, "am/is/
are" to the Hindi auxiliary, and "going" to both "जा" and "रहा".
"""

import dataclasses
import functools
import itertools

import numpy as np

from course_lib.data.splitting import check_no_empty_part

DIRECTIONS = ("en-hi", "hi-en")


@dataclasses.dataclass(frozen=True)
class SentencePair:
    """One English sentence, one Hindi translation and their word alignment."""

    english: str
    hindi: str
    alignment: tuple  # ((english_index, hindi_index), ...)
    tense: str
    kind: str

    def source_target(self, direction):
        check_direction(direction)
        return (self.english, self.hindi) if direction == "en-hi" else (self.hindi, self.english)

    def gold_links(self, direction):
        """For each target word, the set of source word positions linked to it."""
        check_direction(direction)
        _, target = self.source_target(direction)
        links = [set() for _ in target.split()]
        for english_index, hindi_index in self.alignment:
            if direction == "en-hi":
                links[hindi_index].add(english_index)
            else:
                links[english_index].add(hindi_index)
        return links


def check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {DIRECTIONS}. Received: direction={direction!r}")


# -- the lexicon --------------------------------------------------------------------
# Agreement classes: "ms", "fs", "mp", "fp" (gender + number of the verb form).

# (english words, hindi words as chunks, person, agreement, english auxiliary)
# A subject is a list of (english, hindi) chunks that align to each other.
SUBJECTS = [
    ([("I", "मैं")], 1, ("ms", "fs"), "am"),
    ([("We", "हम")], 1, ("mp", "fp"), "are"),
    ([("You", "तुम")], 2, ("mp", "fp"), "are"),
    ([("He", "वह")], 3, ("ms",), "is"),
    ([("She", "वह")], 3, ("fs",), "is"),
    ([("They", "वे")], 3, ("mp", "fp"), "are"),
    ([("The boy", "लड़का")], 3, ("ms",), "is"),
    ([("The girl", "लड़की")], 3, ("fs",), "is"),
    ([("The boys", "लड़के")], 3, ("mp",), "are"),
    ([("The girls", "लड़कियाँ")], 3, ("fp",), "are"),
    ([("The children", "बच्चे")], 3, ("mp",), "are"),
    ([("Ram", "राम")], 3, ("ms",), "is"),
    ([("Sita", "सीता")], 3, ("fs",), "is"),
    ([("Mohan", "मोहन")], 3, ("ms",), "is"),
    ([("Priya", "प्रिया")], 3, ("fs",), "is"),
    ([("My", "मेरा"), ("brother", "भाई")], 3, ("ms",), "is"),
    ([("My", "मेरी"), ("sister", "बहन")], 3, ("fs",), "is"),
    ([("My", "मेरे"), ("friends", "दोस्त")], 3, ("mp",), "are"),
]

# Hindi auxiliary of the present progressive, by (person, plural?).
AUXILIARY = {(1, False): "हूँ", (2, True): "हो", (3, False): "है", (1, True): "हैं", (3, True): "हैं"}
PROGRESSIVE = {"ms": "रहा", "fs": "रही", "mp": "रहे", "fp": "रही"}

# Future endings after a stem ending in a vowel (जा → जाऊँगा) or a consonant (लौट → लौटूँगा),
# by (person, plural?, gender).
FUTURE_AFTER_VOWEL = {
    (1, False): ("ऊँगा", "ऊँगी"), (2, True): ("ओगे", "ओगी"),
    (3, False): ("एगा", "एगी"), (1, True): ("एँगे", "एँगी"), (3, True): ("एँगे", "एँगी"),
}
FUTURE_AFTER_CONSONANT = {
    (1, False): ("ूँगा", "ूँगी"), (2, True): ("ोगे", "ोगी"),
    (3, False): ("ेगा", "ेगी"), (1, True): ("ेंगे", "ेंगी"), (3, True): ("ेंगे", "ेंगी"),
}
_DEVANAGARI_VOWEL_SIGNS = set("ािीुूृेैोौ") | set("अआइईउऊएऐओऔ")

# Motion verbs: english (base, -ing, past), hindi stem, past forms by agreement.
MOTION_VERBS = [
    (("go", "going", "went"), "जा", {"ms": "गया", "fs": "गई", "mp": "गए", "fp": "गईं"}),
    (("come", "coming", "came"), "आ", {"ms": "आया", "fs": "आई", "mp": "आए", "fp": "आईं"}),
    (("return", "returning", "returned"), "लौट", {"ms": "लौटा", "fs": "लौटी", "mp": "लौटे", "fp": "लौटीं"}),
]

# Places: english noun, hindi noun, gender. "home" takes neither "to" nor "the".
PLACES = [
    ("market", "बाज़ार", "m"), ("school", "स्कूल", "m"), ("office", "दफ़्तर", "m"),
    ("shop", "दुकान", "f"), ("station", "स्टेशन", "m"), ("village", "गाँव", "m"),
    ("city", "शहर", "m"), ("temple", "मंदिर", "m"), ("hospital", "अस्पताल", "m"),
    ("library", "पुस्तकालय", "m"), ("park", "पार्क", "m"),
]

# Adjectives: english, hindi forms (masc. direct sg, fem., masc. oblique / plural).
ADJECTIVES = {
    "big": ("बड़ा", "बड़ी", "बड़े"), "small": ("छोटा", "छोटी", "छोटे"),
    "new": ("नया", "नई", "नए"), "old": ("पुराना", "पुरानी", "पुराने"),
    "beautiful": ("सुंदर", "सुंदर", "सुंदर"), "red": ("लाल", "लाल", "लाल"),
    "sweet": ("मीठा", "मीठी", "मीठे"), "cold": ("ठंडा", "ठंडी", "ठंडे"),
    "hot": ("गरम", "गरम", "गरम"), "long": ("लंबा", "लंबी", "लंबे"),
    "interesting": ("दिलचस्प", "दिलचस्प", "दिलचस्प"),
}
PLACE_ADJECTIVES = ("big", "small", "new", "old", "beautiful")

# Transitive verbs: english (base, -ing), hindi stem, future stem,
# objects (english, hindi, gender, countable?), adjectives allowed.
TRANSITIVE_VERBS = [
    (("eat", "eating"), "खा", "खा",
     [("apple", "सेब", "m", True), ("mango", "आम", "m", True), ("banana", "केला", "m", True),
      ("orange", "संतरा", "m", True)], ("big", "small", "sweet")),
    (("drink", "drinking"), "पी", "पि",
     [("water", "पानी", "m", False), ("milk", "दूध", "m", False), ("tea", "चाय", "f", False)],
     ("cold", "hot", "sweet")),
    (("read", "reading"), "पढ़", "पढ़",
     [("book", "किताब", "f", True), ("newspaper", "अख़बार", "m", True), ("letter", "चिट्ठी", "f", True),
      ("story", "कहानी", "f", True)], ("new", "old", "long", "interesting")),
    (("write", "writing"), "लिख", "लिख",
     [("letter", "चिट्ठी", "f", True), ("story", "कहानी", "f", True), ("poem", "कविता", "f", True)],
     ("new", "long", "small")),
    (("buy", "buying"), "ख़रीद", "ख़रीद",
     [("book", "किताब", "f", True), ("ball", "गेंद", "f", True), ("shirt", "कमीज़", "f", True),
      ("car", "गाड़ी", "f", True), ("watch", "घड़ी", "f", True), ("umbrella", "छाता", "m", True)],
     ("new", "old", "red", "big", "small", "beautiful")),
    (("watch", "watching"), "देख", "देख",
     [("film", "फ़िल्म", "f", True), ("play", "नाटक", "m", True)], ("new", "old", "long", "interesting")),
]

TENSES = ("progressive", "past", "future")


def _future(stem, person, plural, gender):
    table = FUTURE_AFTER_VOWEL if stem[-1] in _DEVANAGARI_VOWEL_SIGNS else FUTURE_AFTER_CONSONANT
    return stem + table[(person, plural)][0 if gender == "m" else 1]


def _article(word):
    return "an" if word[0] in "aeiou" else "a"


class _Builder:
    """Collects aligned chunks `(english words, hindi words)` of one sentence pair."""

    def __init__(self):
        self.chunks = []

    def add(self, english, hindi):
        self.chunks.append((english.split(), hindi.split()))
        return len(self.chunks) - 1

    def whole(self, chunks):
        """English pieces `(chunk, words)` for chunks used in one piece."""
        return [(chunk, self.chunks[chunk][0]) for chunk in chunks]

    def layout(self, english_pieces, hindi_order, tense, kind):
        """Lays the chunks out in both orders and links words of the same chunk.

        `english_pieces` lists `(chunk, words)`, so that an English chunk may be
        split around another one ("to the | big | market").
        """
        english_words, english_owner = [], []
        for chunk, words in english_pieces:
            english_words += words
            english_owner += [chunk] * len(words)
        hindi_words, hindi_owner = [], []
        for chunk in hindi_order:
            hindi_words += self.chunks[chunk][1]
            hindi_owner += [chunk] * len(self.chunks[chunk][1])
        alignment = tuple(
            (i, j) for i, a in enumerate(english_owner) for j, b in enumerate(hindi_owner) if a == b
        )
        english = " ".join(english_words)
        return SentencePair(english[0].upper() + english[1:], " ".join(hindi_words), alignment, tense, kind)

    def noun_phrase(self, english_before, english_noun, hindi_noun, adjective=None, hindi_adjective=None):
        """A noun with optional adjective; returns (english pieces, hindi chunk order).

        The words before the noun ("to the", "a") are linked to the Hindi noun.
        """
        head = self.add(f"{english_before} {english_noun}".strip(), hindi_noun)
        before_count = len(english_before.split())
        words = self.chunks[head][0]
        if adjective is None:
            return [(head, words)], [head]
        modifier = self.add(adjective, hindi_adjective)
        pieces = [(head, words[:before_count]), (modifier, [adjective]), (head, words[before_count:])]
        return pieces, [modifier, head]


def _verb_phrase(builder, tense, english_forms, stem, past, future_stem, person, agreement, english_aux):
    """Adds the verb chunks; returns (english order, hindi order) of its chunks."""
    plural = agreement[1] == "p" or person == 2
    gender = agreement[0]
    if tense == "progressive":
        auxiliary = builder.add(english_aux, AUXILIARY[(person, plural)])
        verb = builder.add(english_forms[1], f"{stem} {PROGRESSIVE[agreement]}")
        return [auxiliary, verb], [verb, auxiliary]
    if tense == "past":
        verb = builder.add(english_forms[2], past[agreement])
        return [verb], [verb]
    verb = builder.add(f"will {english_forms[0]}", _future(future_stem, person, plural, gender))
    return [verb], [verb]


def _destinations():
    """(english before, english noun, hindi noun, adjective, hindi adjective)."""
    yield ("", "home", "घर", None, None)
    for english_place, hindi_place, gender in PLACES:
        yield ("to the", english_place, hindi_place, None, None)
        for adjective in PLACE_ADJECTIVES:
            forms = ADJECTIVES[adjective]
            # After a motion verb the place is in the oblique case: बड़े बाज़ार, बड़ी दुकान.
            yield ("to the", english_place, hindi_place, adjective, forms[2] if gender == "m" else forms[1])


def _objects(objects, adjectives):
    """(english before, english noun, hindi noun, adjective, hindi adjective)."""
    for (english_object, hindi_object, gender, countable), adjective in itertools.product(
        objects, (None,) + tuple(adjectives)
    ):
        article = _article(adjective or english_object) if countable else ""
        hindi_adjective = None
        if adjective is not None:
            hindi_adjective = ADJECTIVES[adjective][0 if gender == "m" else 1]  # direct case
        yield (article, english_object, hindi_object, adjective, hindi_adjective)


def generate_pairs():
    """Every sentence pair of the grammar, in a fixed order (18,194 pairs).

    Returns:
        A new list each call (the pairs themselves are frozen); the grammar is walked once per process.
    """
    return list(_every_pair())


@functools.cache
def _every_pair():
    pairs = []
    for subject_chunks, person, agreements, english_aux in SUBJECTS:
        for agreement in agreements:
            clauses = [
                ("motion", tense, english_forms, stem, past, stem, destination)
                for (english_forms, stem, past), tense in itertools.product(MOTION_VERBS, TENSES)
                for destination in _destinations()
            ] + [
                ("object", tense, english_forms + (None,), stem, None, future_stem, obj)
                for english_forms, stem, future_stem, objects, adjectives in TRANSITIVE_VERBS
                for tense in ("progressive", "future")
                for obj in _objects(objects, adjectives)
            ]
            for kind, tense, english_forms, stem, past, future_stem, phrase in clauses:
                builder = _Builder()
                subject = [builder.add(english, hindi) for english, hindi in subject_chunks]
                english_verb, hindi_verb = _verb_phrase(
                    builder, tense, english_forms, stem, past, future_stem, person, agreement, english_aux
                )
                # English S V X (subject-verb-object), Hindi S X V (subject-object-verb).
                english_pieces, hindi_phrase = builder.noun_phrase(*phrase)
                pairs.append(builder.layout(
                    builder.whole(subject + english_verb) + english_pieces,
                    subject + hindi_phrase + hindi_verb, tense, kind,
                ))
    return tuple(pairs)


def split_corpus(pairs=None, seed=0, valid_fraction=0.1, test_fraction=0.1):
    """Shuffles by English sentence and splits into train/valid/test.

    All translations of one English sentence land in the same part, and so do
    all English sentences with one Hindi translation (real data such as
    Tatoeba has them: "Hello!" and "Hi!" -> the same Hindi), so no sentence
    (English or Hindi) is shared between parts.

    Raises `ValueError` when there are no pairs, or when a part with a
    non-zero fraction (training always) would be empty: too few groups of
    English sentences for the fractions asked (a fraction of 0 asks for an
    empty part).

    Returns:
        `{"train": [...], "valid": [...], "test": [...]}` lists of `SentencePair`.
    """
    if not (0 <= valid_fraction < 1 and 0 <= test_fraction < 1 and valid_fraction + test_fraction < 1):
        raise ValueError(
            "Need 0 <= valid_fraction, test_fraction and valid_fraction + test_fraction < 1. "
            f"Received: valid_fraction={valid_fraction}, test_fraction={test_fraction}"
        )
    pairs = generate_pairs() if pairs is None else list(pairs)
    if not pairs:
        raise ValueError("Need sentence pairs to split. Received: 0 pairs")
    # Union-find over English sentences: two English sentences with a common
    # Hindi translation form one group, named by its alphabetically first sentence.
    parent = {}

    def root(english):
        while parent[english] != english:
            parent[english] = parent[parent[english]]
            english = parent[english]
        return english

    english_of_hindi = {}
    for pair in pairs:
        parent.setdefault(pair.english, pair.english)
        other = english_of_hindi.setdefault(pair.hindi, pair.english)
        a, b = root(pair.english), root(other)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups = {}
    for pair in pairs:
        groups.setdefault(root(pair.english), []).append(pair)
    english_sentences = sorted(groups)
    order = np.random.default_rng(seed).permutation(len(english_sentences))
    test_count = int(round(test_fraction * len(order)))
    valid_count = int(round(valid_fraction * len(order)))
    parts = {
        "test": order[:test_count],
        "valid": order[test_count: test_count + valid_count],
        "train": order[test_count + valid_count:],
    }
    check_no_empty_part(
        {name: len(part) for name, part in parts.items()},
        {"train": 1 - valid_fraction - test_fraction, "valid": valid_fraction, "test": test_fraction}, "pairs",
        f"{len(pairs)} pairs in {len(order)} groups of English sentences (sentences sharing a translation stay "
        f"together), valid_fraction={valid_fraction}, test_fraction={test_fraction}",
    )
    return {
        name: [pair for index in indices for pair in groups[english_sentences[index]]]
        for name, indices in (("train", parts["train"]), ("valid", parts["valid"]), ("test", parts["test"]))
    }


def load_corpus(seed=0, valid_fraction=0.1, test_fraction=0.1, max_train=None):
    """The generated corpus split by `split_corpus`; `max_train` caps the training part."""
    parts = split_corpus(seed=seed, valid_fraction=valid_fraction, test_fraction=test_fraction)
    if max_train is not None:
        if max_train < 1:
            raise ValueError(f"`max_train` must be positive. Received: max_train={max_train}")
        parts["train"] = parts["train"][:max_train]
    return parts


def find_pair(pairs, english, hindi=None):
    """The first pair with this English (and Hindi) sentence, or None."""
    for pair in pairs:
        if pair.english == english and (hindi is None or pair.hindi == hindi):
            return pair
    return None
