"""Generated documents whose class is decided by one planted sentence.

Each document has a few sentences. All but one are distractors built from
neutral words (a distractor may mention one topic word of a random class, a
decoy). One sentence, the planted sentence, carries three topic words of the
document's class and decides it. Its index is recorded, so we can check
whether the sentence-level attention finds it (`planted_sentence_top1`).

Everything is deterministic by seed; `document_splits` gives train, valid
and test parts drawn with different seeds. The texts are raw strings
(sentences end with a full stop) so that the document pipeline of
`course_lib.text.documents` is exercised exactly as on real data.
"""

from dataclasses import dataclass, field

import numpy as np

CLASS_NAMES = ("sport", "politics", "technology", "business")

# Topic words per class (written for this project).
TOPIC_WORDS = {
    "sport": ["goal", "match", "striker", "league", "coach", "tournament", "referee", "champions",
              "stadium", "penalty", "athlete", "medal"],
    "politics": ["election", "minister", "parliament", "vote", "campaign", "senator", "policy",
                 "coalition", "ballot", "mayor", "referendum", "cabinet"],
    "technology": ["software", "processor", "broadband", "robot", "laptop", "internet", "chip",
                   "smartphone", "algorithm", "server", "browser", "gadget"],
    "business": ["shares", "profit", "investors", "merger", "revenue", "bank", "inflation",
                 "retailer", "dividend", "exports", "market", "takeover"],
}

# Neutral words for the distractor sentences.
SUBJECTS = ["the family", "a neighbour", "the old man", "our teacher", "the children", "a visitor",
            "my cousin", "the group", "her friend", "the driver", "a student", "the farmer"]
VERBS = ["walked to", "looked at", "talked about", "waited near", "painted", "cleaned", "visited",
         "remembered", "described", "passed", "photographed", "forgot"]
OBJECTS = ["the river", "a small garden", "the blue door", "an empty street", "the morning train",
           "a quiet cafe", "the long bridge", "an old map", "the kitchen table", "a red umbrella",
           "the winter coat", "a wooden chair"]
ENDINGS = ["on sunday", "before lunch", "in the rain", "after work", "with a smile", "for an hour",
           "at dawn", "without a word", "last week", "near the park", "in silence", "once again"]

# Frames of a planted sentence; {a}, {b}, {c} are three topic words of the class.
PLANTED_FRAMES = [
    "news about the {a} and the {b} came with the {c}",
    "everyone was talking about the {a} the {b} and the {c}",
    "the {a} said the {b} would change the {c}",
    "reports on the {a} mentioned the {b} and a new {c}",
    "a story about the {a} linked the {b} to the {c}",
]


@dataclass
class DocumentSet:
    """Raw documents with labels.

    Attributes:
        texts: list of raw document strings.
        labels: int array `(n,)` of class indices.
        class_names: tuple of class names (index = label).
        planted_index: int array `(n,)`, index of the deciding sentence, or
            `None` for real data.
        paths: source file of each document (real data), else `None`.
        titles: title of each document (BBC), else `None`.
        fallback_files: files that were not valid UTF-8 and were decoded with
            the fallback encoding (real data).
    """

    texts: list
    labels: np.ndarray
    class_names: tuple
    planted_index: np.ndarray = None
    paths: list = None
    titles: list = None
    fallback_files: list = field(default_factory=list)

    def __len__(self):
        return len(self.texts)

    def subset(self, indices):
        """The documents at `indices`, as a new `DocumentSet`."""
        indices = np.asarray(indices, dtype=int)
        pick = lambda values: None if values is None else [values[i] for i in indices]  # noqa: E731
        return DocumentSet(
            texts=pick(self.texts),
            labels=np.asarray(self.labels)[indices],
            class_names=self.class_names,
            planted_index=None if self.planted_index is None else np.asarray(self.planted_index)[indices],
            paths=pick(self.paths),
            titles=pick(self.titles),
            fallback_files=list(self.fallback_files),
        )


def _sentence(words):
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _distractor(rng, decoy_rate):
    parts = [SUBJECTS[rng.integers(len(SUBJECTS))], VERBS[rng.integers(len(VERBS))],
             OBJECTS[rng.integers(len(OBJECTS))], ENDINGS[rng.integers(len(ENDINGS))]]
    if rng.random() < decoy_rate:
        topic = TOPIC_WORDS[CLASS_NAMES[rng.integers(len(CLASS_NAMES))]]
        parts.insert(3, f"and mentioned the {topic[rng.integers(len(topic))]}")
    return _sentence(" ".join(parts).split())


def _planted(rng, class_name):
    a, b, c = rng.choice(TOPIC_WORDS[class_name], size=3, replace=False)
    frame = PLANTED_FRAMES[rng.integers(len(PLANTED_FRAMES))]
    return _sentence(frame.format(a=a, b=b, c=c).split())


def generate_documents(count, seed=0, min_sentences=4, max_sentences=8, decoy_rate=0.3):
    """Generates `count` documents.

    Args:
        count: number of documents.
        seed: random seed; the same seed gives the same documents.
        min_sentences, max_sentences: range of sentences per document.
        decoy_rate: probability that a distractor mentions one topic word of
            a random class.

    Returns:
        A `DocumentSet` with `planted_index` filled in.
    """
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"`count` must be a positive integer. Received: count={count!r}")
    if not 1 <= min_sentences <= max_sentences:
        raise ValueError(
            "Need 1 <= min_sentences <= max_sentences. "
            f"Received: min_sentences={min_sentences}, max_sentences={max_sentences}"
        )
    if not 0.0 <= decoy_rate <= 1.0:
        raise ValueError(f"`decoy_rate` must lie in [0, 1]. Received: decoy_rate={decoy_rate}")
    rng = np.random.default_rng(seed)
    texts, labels, planted = [], [], []
    for _ in range(int(count)):
        label = int(rng.integers(len(CLASS_NAMES)))
        length = int(rng.integers(min_sentences, max_sentences + 1))
        where = int(rng.integers(length))
        sentences = [
            _planted(rng, CLASS_NAMES[label]) if i == where else _distractor(rng, decoy_rate)
            for i in range(length)
        ]
        texts.append(" ".join(sentences))
        labels.append(label)
        planted.append(where)
    return DocumentSet(
        texts=texts,
        labels=np.asarray(labels, dtype="int32"),
        class_names=CLASS_NAMES,
        planted_index=np.asarray(planted, dtype="int32"),
    )


def document_splits(train=2000, valid=300, test=500, seed=0, **kwargs):
    """Train, valid and test parts, each drawn with its own seed.

    Returns:
        A dict `{"train": DocumentSet, "valid": ..., "test": ...}`.
    """
    return {
        "train": generate_documents(train, seed=seed, **kwargs),
        "valid": generate_documents(valid, seed=seed + 1_000_003, **kwargs),
        "test": generate_documents(test, seed=seed + 2_000_003, **kwargs),
    }


__all__ = ["CLASS_NAMES", "DocumentSet", "document_splits", "generate_documents"]
