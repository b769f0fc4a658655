"""Documents as sequences of sequences: sentences, words and two-level padding.

    raw text -> sentences -> words -> ids (documents, sentences, words)

Sentences are split at line breaks and after `.`, `!` or `?` followed by
white space (so "1.5bn" stays whole). Words come from the course's
`Vocabulary` (Unicode normalisation, lower-casing, punctuation split off);
tokens that are only punctuation are dropped, since they carry no topic.

Two-level padding: every document becomes a `(sentences, words)` block of
ids, 0 being padding. Limits on sentences per document and words per
sentence keep the blocks small; what does not fit is cut from the end, and
the cut is never silent: `encode` returns a `TruncationReport` with counts
and warns when anything was dropped.
"""

import json
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass

import numpy as np

from course_lib.text.vocabulary import PAD, Vocabulary

FORMAT_VERSION = 1
# A sentence ends at . ! ? or the Devanagari danda । (and double danda ॥), closing quotes or brackets after
# it, then white space; or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?\u0964\u0965])[\"'\u2019\u201d)\]]*\s+|\n+")


def split_sentences(text):
    """Splits one raw text into sentence strings (empty pieces dropped), at `. ! ?`, the danda `।` or a line break."""
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a string. Received: type={type(text).__name__}")
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


def is_punctuation(token):
    """True when every character of `token` is Unicode punctuation (category P)."""
    return bool(token) and all(unicodedata.category(ch).startswith("P") for ch in token)


@dataclass
class TruncationReport:
    """What two-level padding cut off.

    Attributes:
        documents: number of documents encoded.
        documents_cut: documents that lost sentences (more than `max_sentences`).
        sentences_dropped: sentences lost that way.
        sentences_cut: kept sentences that lost words (more than `max_words`).
        words_dropped: words lost in total (in dropped sentences and cut ones).
        empty_documents: documents with no word at all (encoded as all padding).
    """

    documents: int = 0
    documents_cut: int = 0
    sentences_dropped: int = 0
    sentences_cut: int = 0
    words_dropped: int = 0
    empty_documents: int = 0

    @property
    def truncated(self):
        return self.documents_cut > 0 or self.sentences_cut > 0

    def __str__(self):
        return (
            f"{self.documents_cut} of {self.documents} documents cut to the sentence limit "
            f"({self.sentences_dropped} sentences dropped), {self.sentences_cut} sentences cut to the "
            f"word limit; {self.words_dropped} words dropped in all; {self.empty_documents} empty documents"
        )


def pad_documents(documents, max_sentences=None, max_words=None, pad_to_limits=False, keep_empty=False):
    """Two-level padding of id lists.

    Args:
        documents: list of documents, each a list of sentences, each a list of ids.
        max_sentences: most sentences kept per document (the first ones).
        max_words: most words kept per sentence (the first ones).
        pad_to_limits: pad to exactly `(max_sentences, max_words)` instead of
            to the longest document and sentence.
        keep_empty: keep an empty sentence as a row of padding in its place
            (for dialogs, where an utterance's position carries meaning);
            by default empty sentences are dropped and the next ones move up.
            A row of padding is masked (`encoders.hierarchical.document_masks`).

    Returns:
        `(ids, report)`: int32 `(n, sentences, words)` and a `TruncationReport`.
        With `keep_empty`, a document whose every sentence is empty still
        counts as an empty document.
    """
    for name, value in (("max_sentences", max_sentences), ("max_words", max_words)):
        if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer))
                                  or value < 1):
            raise ValueError(f"`{name}` must be a positive integer or None. Received: {name}={value!r}")
    if not isinstance(keep_empty, (bool, np.bool_)):
        raise ValueError(f"`keep_empty` must be True or False. Received: keep_empty={keep_empty!r}")
    if pad_to_limits and (max_sentences is None or max_words is None):
        raise ValueError(
            "`pad_to_limits=True` needs both limits. "
            f"Received: max_sentences={max_sentences}, max_words={max_words}"
        )
    report = TruncationReport(documents=len(documents))
    kept = []
    for document in documents:
        sentences = [list(s) for s in document if keep_empty or len(s) > 0]
        if not any(sentences):
            report.empty_documents += 1
        if max_sentences is not None and len(sentences) > max_sentences:
            report.documents_cut += 1
            report.sentences_dropped += len(sentences) - max_sentences
            report.words_dropped += sum(len(s) for s in sentences[max_sentences:])
            sentences = sentences[:max_sentences]
        if max_words is not None:
            for i, sentence in enumerate(sentences):
                if len(sentence) > max_words:
                    report.sentences_cut += 1
                    report.words_dropped += len(sentence) - max_words
                    sentences[i] = sentence[:max_words]
        kept.append(sentences)
    if pad_to_limits:
        num_sentences, num_words = max_sentences, max_words
    else:
        num_sentences = max([len(d) for d in kept] + [1])
        num_words = max([len(s) for d in kept for s in d] + [1])
    ids = np.full((len(kept), num_sentences, num_words), PAD, dtype="int32")
    for i, document in enumerate(kept):
        for j, sentence in enumerate(document):
            ids[i, j, : len(sentence)] = sentence
    return ids, report


class DocumentPipeline:
    """Raw texts to `(documents, sentences, words)` ids, and back to words.

    Args:
        vocabulary: a word-level `course_lib.text.vocabulary.Vocabulary`.
        max_sentences: most sentences per document (None: no limit).
        max_words: most words per sentence (None: no limit).
    """

    def __init__(self, vocabulary, max_sentences=None, max_words=None):
        if not isinstance(vocabulary, Vocabulary) or vocabulary.level != "word":
            raise ValueError(f"`vocabulary` must be a word-level Vocabulary. Received: {vocabulary!r}")
        self.vocabulary = vocabulary
        self.max_sentences = max_sentences
        self.max_words = max_words

    @classmethod
    def from_texts(cls, texts, max_sentences=None, max_words=None, max_size=None, min_count=1):
        """Builds the vocabulary from training documents (lower-cased words)."""
        texts = _check_texts(texts)
        sentences = [sentence for text in texts for sentence in split_sentences(text)]
        if not sentences:
            raise ValueError(f"The {len(texts)} training texts contain no sentence.")
        vocabulary = Vocabulary.from_texts(
            sentences, level="word", max_size=max_size, min_count=min_count,
            lowercase=True, split_punctuation=True,
        )
        return cls(vocabulary, max_sentences, max_words)

    def split(self, texts):
        """Documents -> sentences -> words (strings), without any limit applied."""
        texts = _check_texts(texts)
        sentence_lists = [split_sentences(text) for text in texts]
        flat = [sentence for sentences in sentence_lists for sentence in sentences]
        flat_words = [[w for w in words if not is_punctuation(w)] for words in self.vocabulary.tokenize(flat)]
        documents, start = [], 0
        for sentences in sentence_lists:
            document = [words for words in flat_words[start:start + len(sentences)] if words]
            documents.append(document)
            start += len(sentences)
        return documents

    def encode(self, texts, pad_to_limits=False, warn=True):
        """Encodes raw texts.

        Returns:
            `(ids, report)`: int32 `(n, sentences, words)` and a
            `TruncationReport`; a warning says what was cut, if anything.
        """
        words = self.split(texts)
        id_lists = [[self.vocabulary.lookup(sentence) for sentence in document] for document in words]
        ids, report = pad_documents(id_lists, self.max_sentences, self.max_words, pad_to_limits)
        if warn and (report.truncated or report.empty_documents):
            warnings.warn(f"Document limits (max_sentences={self.max_sentences}, "
                          f"max_words={self.max_words}): {report}", stacklevel=2)
        return ids, report

    def words(self, ids):
        """Ids of one document `(sentences, words)` -> list of sentences of words (padding dropped)."""
        from course_lib.layers.masking import check_token_range  # Keras loads only when needed

        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"`words` takes one document (sentences, words). Received: shape={ids.shape}")
        tokens = self.vocabulary.tokens
        check_token_range(ids, len(tokens), "ids")  # -1 would read the last word, not fail
        return [[tokens[i] for i in row if i != PAD] for row in ids if np.any(row != PAD)]

    # -- saving -----------------------------------------------------------------

    def save(self, directory):
        """Writes `vocabulary.json` and `document_pipeline.json` into `directory`."""
        os.makedirs(directory, exist_ok=True)
        self.vocabulary.save(os.path.join(directory, "vocabulary.json"))
        with open(os.path.join(directory, "document_pipeline.json"), "w", encoding="utf-8") as handle:
            json.dump({"format_version": FORMAT_VERSION, "max_sentences": self.max_sentences,
                       "max_words": self.max_words}, handle, indent=1)

    @classmethod
    def load(cls, directory):
        settings_path = os.path.join(directory, "document_pipeline.json")
        if not os.path.exists(settings_path):
            raise FileNotFoundError(f"No document pipeline in {os.fspath(directory)!r} (document_pipeline.json missing)")
        with open(settings_path, encoding="utf-8") as handle:
            settings = json.load(handle)
        vocabulary = Vocabulary.load(os.path.join(directory, "vocabulary.json"))
        return cls(vocabulary, settings.get("max_sentences"), settings.get("max_words"))


def _check_texts(texts):
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
        raise ValueError(
            "`texts` must be a list of strings (one per document). "
            f"Received: {type(texts).__name__}"
        )
    return list(texts)


__all__ = ["DocumentPipeline", "TruncationReport", "pad_documents", "split_sentences"]
