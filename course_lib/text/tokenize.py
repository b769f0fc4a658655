"""Splitting normalised text into word or character tokens.

Word level splits on spaces after normalisation (so punctuation, once split,
is a token of its own); character level splits into Unicode code points, the
way Devanagari is usually modelled: a matra, nukta, virama or chandrabindu is
a token of its own, and `क्ष` is `क` + `्` + `ष`.
"""

from course_lib.text.normalize import as_string_list, normalize_tensor, python_steps_on_list, tensorflow_text_available

LEVELS = ("word", "char")


def check_level(level):
    if level not in LEVELS:
        raise ValueError(f"`level` must be one of {LEVELS}. Received: level={level!r}")


def tokenize_tensor(texts, level="word", lowercase=False, split_punctuation=False, form="NFKC"):
    """Normalises and splits a 1-D `tf.string` tensor (usable inside `tf.function`).

    Returns:
        A `tf.RaggedTensor` of strings `(batch, None)`; empty text gives an empty row.
    """
    import tensorflow as tf

    check_level(level)
    normalized = normalize_tensor(texts, lowercase, split_punctuation, form)  # (batch,)
    if level == "word":
        return tf.strings.split(normalized)  # (batch, None) words
    return tf.strings.unicode_split(normalized, "UTF-8")  # (batch, None) code points


def _split(normalized_text, level):
    if level == "char":
        return list(normalized_text)  # code points, as tf.strings.unicode_split
    return normalized_text.split(" ") if normalized_text else []  # one space between words after normalising


def tokenize(texts, level="word", lowercase=False, split_punctuation=False, form="NFKC"):
    """Normalises and splits a list of strings; returns a list of token lists.

    Without TensorFlow, the same steps run in plain Python (see `course_lib.text.normalize`).
    """
    texts = as_string_list(texts)
    check_level(level)
    if not texts:
        return []
    if not tensorflow_text_available():
        return [_split(text, level) for text in python_steps_on_list(texts, lowercase, split_punctuation, form)]
    ragged = tokenize_tensor(texts, level, lowercase, split_punctuation, form)
    return [[token.decode("utf-8") for token in row] for row in ragged.to_list()]
