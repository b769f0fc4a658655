"""Generated Roman -> Devanagari word pairs: the offline transliteration set.

Words are built from syllable tables written for this course (no third-party
word list) and transliterated by explicit spelling rules, so every roman word
has exactly one Devanagari spelling and the set is reproducible from a seed.

People typing Hindi on a Latin keyboard often leave out the vowel length:
they type `kamal` for both कमल and कामल. With `drop_vowel_length=p`, each long
vowel (`aa`, `ee`, `oo`) of a generated word is typed short (`a`, `i`, `u`)
with probability p, and the pair is (typed word, Devanagari word). Then one
typed word can stand for several Devanagari words and nothing in it says
which, as in real transliteration data: top-1 accuracy has a ceiling below 1,
and the k best candidates of a beam matter.

The rules are the ones a learner (and a model) has to pick up from examples:

- a consonant followed by `a` keeps its inherent vowel: `kamal` -> कमल;
  followed by another vowel it takes that vowel's sign (matra): `dil` -> दिल;
- a vowel at the start of a word, or after another vowel, is written as an
  independent letter: `ajay` -> अजय, `naee` -> नई;
- two consonants in a row form a conjunct with a virama: `prem` -> प्रेम;
  but `n` (and `m` before p/b/m) closing a syllable becomes the anusvara:
  `hindi` -> हिंदी, `champa` -> चंपा;
- at the end of a word, `a` is written long (`kavita` -> कविता) and `i` is
  written long (`hindi` -> हिंदी): the output for a letter depends on what
  follows it, which a model can only know by looking ahead in the source.

The rules make Hindi-like spellings, not a dictionary's: they have no vowel
sign ृ (कृपा is spelled क्रिपा from `kripa`), and they write every final `a`
long, where Hindi often leaves it silent (चंद्र, not चंद्रा).
"""

import numpy as np

from course_lib.data.transliteration_pairs import TransliterationPair

# Roman spelling -> Devanagari consonant. Longest match first when parsing.
CONSONANTS = {
    "chh": "छ", "kh": "ख", "gh": "घ", "ch": "च", "jh": "झ", "th": "थ", "dh": "ध",
    "ph": "फ", "bh": "भ", "sh": "श", "k": "क", "g": "ग", "j": "ज", "t": "त",
    "d": "द", "n": "न", "p": "प", "b": "ब", "m": "म", "y": "य", "r": "र",
    "l": "ल", "v": "व", "s": "स", "h": "ह",
}
# Roman spelling -> (independent vowel, vowel sign after a consonant).
VOWELS = {
    "aa": ("आ", "ा"), "ai": ("ऐ", "ै"), "au": ("औ", "ौ"), "ee": ("ई", "ी"),
    "oo": ("ऊ", "ू"), "a": ("अ", ""), "i": ("इ", "ि"), "u": ("उ", "ु"),
    "e": ("ए", "े"), "o": ("ओ", "ो"),
}
VIRAMA = "्"
ANUSVARA = "ं"
# Second members of conjuncts (the cluster "kr", "pr", "sv", "sth" ...).
CLUSTER_SECONDS = ("r", "y", "v")
CLUSTER_FIRSTS = ("k", "g", "p", "b", "d", "t", "s", "sh", "dh", "bh", "j", "m")
FINAL_CONSONANTS = ("r", "l", "n", "m", "t", "k", "s", "j", "v", "sh")
SYLLABLE_VOWELS = ("a",) * 5 + ("aa",) * 2 + ("i",) * 2 + ("ee", "u", "oo", "e", "o", "ai", "au")
ONSETS = tuple(c for c in CONSONANTS if c not in ("chh",)) + ("chh",)


_BY_LENGTH = tuple(
    (spelling, kind)
    for table, kind in ((CONSONANTS, "C"), (VOWELS, "V"))
    for spelling in table
)
_BY_LENGTH = tuple(sorted(_BY_LENGTH, key=lambda item: -len(item[0])))


def _parse(roman):
    """Splits a roman word into ("C", spelling) and ("V", spelling) units."""
    units, position = [], 0
    while position < len(roman):
        for spelling, kind in _BY_LENGTH:
            if roman.startswith(spelling, position):
                units.append((kind, spelling))
                position += len(spelling)
                break
        else:
            raise ValueError(
                f"Cannot spell {roman[position]!r} in {roman!r}: only the letters of the syllable "
                f"tables are known. Received: roman={roman!r}"
            )
    return units


def transliterate(roman):
    """Devanagari spelling of a roman word by the rules in the module docstring."""
    if not isinstance(roman, str) or not roman.strip():
        raise ValueError(f"Need a non-empty roman word. Received: {roman!r}")
    units = _parse(roman.strip().lower())
    output = []
    for index, (kind, spelling) in enumerate(units):
        previous = units[index - 1] if index else None
        following = units[index + 1] if index + 1 < len(units) else None
        last = following is None
        if kind == "V":
            independent, sign = VOWELS[spelling]
            if last and previous is not None and spelling in ("a", "i"):
                independent, sign = VOWELS["aa" if spelling == "a" else "ee"]
            output.append(sign if previous is not None and previous[0] == "C" else independent)
            continue
        nasal_coda = (
            following is not None and following[0] == "C" and previous is not None and previous[0] == "V"
            and (spelling == "n" or (spelling == "m" and following[1] in ("p", "b", "bh", "m")))
        )
        if nasal_coda:
            output.append(ANUSVARA)
        elif following is not None and following[0] == "C":
            output.append(CONSONANTS[spelling] + VIRAMA)
        else:
            output.append(CONSONANTS[spelling])
    return "".join(output)


def _choice(rng, options):
    return options[int(rng.integers(len(options)))]


def random_word(rng, min_syllables=2, max_syllables=4):
    """One roman word made of random syllables (the tables above)."""
    syllables = int(rng.integers(min_syllables, max_syllables + 1))
    parts = []
    for index in range(syllables):
        roll = rng.random()
        if index == 0 and roll < 0.12:
            onset = ""  # a vowel-initial word
        elif index > 0 and roll < 0.12:
            onset = _choice(rng, CLUSTER_FIRSTS) + _choice(rng, CLUSTER_SECONDS)
        else:
            onset = _choice(rng, ONSETS)
        vowel = _choice(rng, SYLLABLE_VOWELS)
        coda = ""
        if index < syllables - 1 and rng.random() < 0.15:
            coda = "n"  # before the next onset: anusvara
        parts.append(onset + vowel + coda)
    word = "".join(parts)
    if rng.random() < 0.3:
        word += _choice(rng, FINAL_CONSONANTS)
    return word


LONG_VOWELS_TYPED_SHORT = {"aa": "a", "ee": "i", "oo": "u"}


def typed_spelling(roman, rng, drop_vowel_length):
    """`roman` as a person might type it: each long vowel (`aa`, `ee`, `oo`) is
    typed short (`a`, `i`, `u`) with probability `drop_vowel_length`.

    The Devanagari word stays `transliterate(roman)`; only the source loses
    the vowel length (`kaamal` -> `kamal`, still कामल).
    """
    typed = []
    for kind, spelling in _parse(roman):
        if kind == "V" and spelling in LONG_VOWELS_TYPED_SHORT and rng.random() < drop_vowel_length:
            spelling = LONG_VOWELS_TYPED_SHORT[spelling]
        typed.append(spelling)
    return "".join(typed)


def generate_pairs(count, seed=0, min_syllables=2, max_syllables=4, drop_vowel_length=0.0):
    """`count` generated pairs with distinct roman sides, as `TransliterationPair`s.

    The Devanagari side is a function of the spelled roman word (`transliterate`), so
    a roman string met twice (e.g. "k" + "ha" and "kh" + "a") is one pair. With
    `drop_vowel_length` > 0 the roman side is the typed word (`typed_spelling`),
    and a typed word met twice is kept once, with the Devanagari word it was
    first typed for.
    """
    if int(count) < 1:
        raise ValueError(f"`count` must be positive. Received: count={count}")
    if not 0.0 <= drop_vowel_length <= 1.0:
        raise ValueError(
            "`drop_vowel_length` (the probability that a long vowel is typed short) must lie in [0, 1]. "
            f"Received: drop_vowel_length={drop_vowel_length}"
        )
    rng = np.random.default_rng(seed)
    seen, pairs = set(), []
    attempts = 0
    while len(pairs) < count:
        attempts += 1
        if attempts > 50 * count + 1000:
            raise ValueError(
                f"Could not generate {count} distinct words with {min_syllables}-{max_syllables} "
                f"syllables. Received: count={count}"
            )
        word = random_word(rng, min_syllables, max_syllables)
        # Drawing no typing noise at 0 keeps the exact sets of earlier versions.
        typed = typed_spelling(word, rng, drop_vowel_length) if drop_vowel_length else word
        if typed in seen:
            continue
        seen.add(typed)
        pairs.append(TransliterationPair(typed, transliterate(word), line_number=len(pairs) + 1))
    return pairs


def splits(train=4000, valid=500, test=500, seed=0, min_syllables=2, max_syllables=4, drop_vowel_length=0.0):
    """Train/valid/test lists of pairs with no roman (typed) word in two parts."""
    pairs = generate_pairs(train + valid + test, seed, min_syllables, max_syllables, drop_vowel_length)
    return pairs[:train], pairs[train:train + valid], pairs[train + valid:]
