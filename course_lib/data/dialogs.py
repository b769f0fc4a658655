"""A small generated dialog set: a context of three utterances, then a response.

    U: can you suggest a good thriller ?
    B: yes sure . how about moonharbor ?
    U: who is the lead actor ?
    B (response): tarin velloc of course

The response depends on two utterances: the film named by the bot (second
utterance) and the question asked by the user (third). The first utterance
only varies the wording. Films, people and places are invented for this
project. So the context encoder has to read a sequence of sequences and keep
what matters from more than one of them, the lecture's dialog example.
"""

from dataclasses import dataclass

import numpy as np

GENRES = ["thriller", "comedy", "drama", "western", "cartoon", "musical"]
OPENINGS = [
    "can you suggest a good {genre} ?",
    "i want to watch a {genre} tonight",
    "any {genre} you would recommend ?",
    "please find me a {genre}",
]
OFFERS = ["yes sure . how about {film} ?", "try {film} .", "you might like {film} .", "what about {film} ?"]
# Question kind -> user wordings and the response template.
QUESTIONS = {
    "actor": (["who is the lead actor ?", "who plays the main part ?", "who stars in it ?"], "{actor} of course"),
    "director": (["who directed it ?", "who is the director ?", "who made it ?"], "it was directed by {director}"),
    "year": (["when did it come out ?", "what year is it from ?", "how old is it ?"], "it came out in {year}"),
    "place": (["where was it filmed ?", "where was it shot ?", "which city was it filmed in ?"], "it was filmed in {place}"),
}
# Invented films: (title, lead actor, director, year, place).
FILMS = [
    ("moonharbor", "tarin velloc", "osma quill", "nineteen ninety", "lisbon"),
    ("ashfield", "mira dunhope", "kel varro", "two thousand four", "oslo"),
    ("glasswing", "joss pellan", "ada moreck", "nineteen eighty", "nairobi"),
    ("redwater", "lio castene", "ruth abney", "two thousand ten", "quito"),
    ("silvergate", "nadia orrel", "tomas feyn", "nineteen seventy", "hanoi"),
    ("brightfall", "oren lasky", "ines valdro", "two thousand one", "perth"),
    ("cinderpath", "yara holm", "cass brennic", "nineteen sixty", "cairo"),
    ("duskline", "emil strand", "noor jaffe", "two thousand eight", "lima"),
]


@dataclass
class DialogSet:
    """Dialogs as text.

    Attributes:
        contexts: list of dialogs, each a list of three utterance strings.
        responses: list of response strings.
        films: index into `FILMS` of the film each dialog is about.
        questions: question kind of each dialog ("actor", "director", ...).
    """

    contexts: list
    responses: list
    films: np.ndarray
    questions: list

    def __len__(self):
        return len(self.contexts)


def generate_dialogs(count, seed=0, exclude=()):
    """`count` dialogs, deterministic by `seed`.

    Args:
        count: how many dialogs.
        seed: the random seed.
        exclude: contexts (tuples of three utterances) never to draw, e.g.
            those of the training dialogs when drawing the test set.
    """
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"`count` must be a positive integer. Received: count={count!r}")
    rng = np.random.default_rng(seed)
    kinds = sorted(QUESTIONS)
    exclude = set(exclude)
    contexts, responses, films, questions = [], [], [], []
    for _ in range(100 * int(count)):
        if len(contexts) == count:
            break
        film = int(rng.integers(len(FILMS)))
        title, actor, director, year, place = FILMS[film]
        kind = kinds[rng.integers(len(kinds))]
        wordings, template = QUESTIONS[kind]
        context = [
            OPENINGS[rng.integers(len(OPENINGS))].format(genre=GENRES[rng.integers(len(GENRES))]),
            OFFERS[rng.integers(len(OFFERS))].format(film=title),
            wordings[rng.integers(len(wordings))],
        ]
        if tuple(context) in exclude:
            continue
        contexts.append(context)
        responses.append(template.format(actor=actor, director=director, year=year, place=place))
        films.append(film)
        questions.append(kind)
    if len(contexts) < count:
        raise ValueError(
            f"Could not draw {count} dialogs outside the {len(exclude)} excluded contexts. Received: count={count}"
        )
    return DialogSet(contexts, responses, np.asarray(films, dtype="int32"), questions)


def dialog_splits(train=1500, test=300, seed=0, valid=300):
    """`{"train", "valid", "test"}` `DialogSet`s: no validation or test context is also a training context.

    There are 9,216 distinct contexts (4 openings x 6 genres x 4 offers x 8
    films x 12 questions); drawn independently, 36% of a 500-dialog test set
    also occurred among 4,000 training dialogs. So the test set is drawn
    outside the training contexts: every film and question kind has been seen
    in training, but never in that wording.

    The validation part (for choosing epochs, rates and other settings, which
    the test part must not be used for) is drawn with its own seed outside both
    the training and the test contexts. The test part is drawn first, exactly
    as before the validation part existed (`valid` comes last among the
    arguments for that reason), so a seed gives the same training and test
    dialogs as it always did.
    """
    training = generate_dialogs(train, seed)
    seen = {tuple(context) for context in training.contexts}
    test_set = generate_dialogs(test, seed + 1_000_003, exclude=seen)
    valid_set = generate_dialogs(
        valid, seed + 2_000_003, exclude=seen | {tuple(context) for context in test_set.contexts}
    )
    return {"train": training, "valid": valid_set, "test": test_set}


def encode_dialogs(dialogs, vocabulary, max_words=None):
    """Dialogs to model inputs with a word-level `Vocabulary`.

    An utterance's position carries meaning (the film is named in the second,
    the question asked in the third), so an empty utterance stays in its place
    as a row of padding (which the model masks) instead of letting the later
    ones move up.

    Returns:
        A dict of int32 arrays: `context` `(n, utterances, words)`,
        `target_in` (`<GO>` + response) and `target_out` (response + `<stop>`).
    """
    from course_lib.text.documents import pad_documents

    utterances = [u for context in dialogs.contexts for u in context]
    rows = vocabulary.tokenize(utterances)
    ids, start = [], 0
    for context in dialogs.contexts:
        ids.append([vocabulary.lookup(row) for row in rows[start:start + len(context)]])
        start += len(context)
    context, report = pad_documents(ids, max_words=max_words, keep_empty=True)
    if report.truncated:
        raise ValueError(f"Utterances longer than max_words={max_words}: {report}")
    target_in = vocabulary.encode(dialogs.responses, add_go=True)
    target_out = vocabulary.encode(dialogs.responses, add_stop=True)
    return {"context": context, "target_in": target_in, "target_out": target_out}


__all__ = ["DialogSet", "FILMS", "dialog_splits", "encode_dialogs", "generate_dialogs"]
