"""Unicode normalisation of raw text, with tensorflow-text.

One pipeline serves Python code (training, evaluation) and exported serving
graphs, so the text a model sees at training time and in production is
normalised by exactly the same TensorFlow ops:

1. Four invisible format characters are deleted: the soft hyphen (U+00AD),
   zero width space (U+200B), word joiner (U+2060) and zero width no-break
   space or byte-order mark (U+FEFF). Kept, they would glue themselves to a
   word, which then becomes `<unk>`, or stand as tokens of their own. The
   zero width joiner and non-joiner (U+200D, U+200C) stay: in Devanagari they
   choose how a conjunct is drawn (`क्` + ZWJ + `ष` shows the half form of
   क). Then `tensorflow_text.normalize_utf8` (NFKC by default). Devanagari has no
   compatibility mappings, so NFKC equals NFC on Hindi: the nukta (क़, ज़),
   chandrabindu (ँ), anusvara (ं), visarga (ः) and virama conjuncts (क्ष,
   द्य, श्र) survive unchanged. The precomposed nukta letters U+0958-U+095F
   (क़ ख़ ग़ ज़ ड़ ढ़ फ़ य़) are excluded from composition, so they are written
   as their canonical pairs (U+0958 becomes `क` + `़`); but three letters
   with a nukta compose: `र` + `़` becomes ऱ (U+0931), `न` + `़` ऩ (U+0929)
   and `ळ` + `़` ऴ (U+0934).
2. Control characters (NUL included) become spaces; runs of any Unicode
   white space become one space. This comes before lower-casing, which would
   otherwise cut the text at a NUL.
3. Optional Unicode lower-casing (English).
4. Optional punctuation splitting: every punctuation character (Unicode
   category P, so also the Devanagari danda `।`) becomes a token of its own.
5. Leading and trailing space is removed.

Where TensorFlow or tensorflow-text is not installed (Keras on JAX or PyTorch,
such as a GPU machine without TensorFlow), `normalize` and `tokenize` run the
same five steps in plain Python (`unicodedata`, `str.lower`). On every code
point both give the same text, except where their Unicode versions differ:
code points Python 3.11's tables (Unicode 14) leave unassigned, which
tensorflow-text's newer tables decompose, and 40 capital letters new in
Unicode 14, which TensorFlow's older case tables leave as they are
(`tests/test_text_pipeline.py` compares the two on all 1,112,064). Serving
graphs (`normalize_tensor`, `tokenize_tensor`) always need TensorFlow.
"""

import functools
import importlib.util
import re
import unicodedata

import numpy as np

NORMALIZATION_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
_PUNCTUATION = r"(\pP)"
_SPACES = r"[\s\p{Z}\p{Cc}]+"
# Invisible format characters deleted before normalising (module docstring, step 1); not ZWJ or ZWNJ.
DELETED_CHARACTERS = "\u00ad\u200b\u2060\ufeff"
_DELETED = "[" + DELETED_CHARACTERS + "]"  # the Python string holds the characters themselves, as RE2 reads them
_DELETE_TABLE = dict.fromkeys(map(ord, DELETED_CHARACTERS))
# The same class for the plain-Python steps, by category: RE2's \s, [\t\n\f\r ], is in Cc and Zs already.
_SPACE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc"})
_RUNS_OF_SPACES = re.compile(" {2,}")


@functools.cache
def tensorflow_text_available():
    """Whether TensorFlow and tensorflow-text are installed (the text pipeline's usual engine)."""
    return all(importlib.util.find_spec(name) is not None for name in ("tensorflow", "tensorflow_text"))


def _check_form(form):
    if form not in NORMALIZATION_FORMS:
        raise ValueError(f"`form` must be one of {NORMALIZATION_FORMS}. Received: form={form!r}")


def normalize_tensor(texts, lowercase=False, split_punctuation=False, form="NFKC"):
    """Normalises a `tf.string` tensor of any shape (usable inside `tf.function`).

    Args:
        texts: a string tensor (or anything `tf.convert_to_tensor` accepts).
        lowercase: apply Unicode lower-casing.
        split_punctuation: surround every punctuation mark with spaces.
        form: the Unicode normalisation form.

    Returns:
        A string tensor of the same shape.
    """
    import tensorflow as tf
    import tensorflow_text as tf_text

    _check_form(form)
    texts = tf.convert_to_tensor(texts, dtype=tf.string)
    texts = tf.strings.regex_replace(texts, _DELETED, "")
    texts = tf_text.normalize_utf8(texts, form)
    # Control characters go before lower-casing: `tf.strings.lower(encoding="utf-8")`
    # stops at a NUL and would drop the rest of the text.
    texts = tf.strings.regex_replace(texts, _SPACES, " ")
    if lowercase:
        texts = tf.strings.lower(texts, encoding="utf-8")
    if split_punctuation:
        texts = tf.strings.regex_replace(texts, _PUNCTUATION, r" \1 ")
        texts = tf.strings.regex_replace(texts, _SPACES, " ")
    return tf.strings.strip(texts)


def as_string_list(texts, name="texts"):
    if isinstance(texts, (str, bytes)):
        raise ValueError(
            f"`{name}` must be a list of strings, not a single string. Received: {name}={texts!r:.80}"
        )
    texts = list(np.asarray(texts, dtype=object).reshape(-1)) if isinstance(texts, np.ndarray) else list(texts)
    for index, text in enumerate(texts):
        if isinstance(text, bytes):
            try:
                texts[index] = text.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"`{name}[{index}]` is not UTF-8 text. Received: byte "
                    f"{text[error.start:error.start + 1]!r} at offset {error.start} of {text!r:.60}"
                ) from None
        elif not isinstance(text, str):
            raise ValueError(
                f"`{name}` must hold strings. Received: {name}[{index}] of type {type(text).__name__}"
            )
    return texts


def _one_space_for_each_run(text):
    text = "".join(
        " " if unicodedata.category(char) in _SPACE_CATEGORIES else char for char in text
    )
    return _RUNS_OF_SPACES.sub(" ", text)


def normalize_python(text, lowercase=False, split_punctuation=False, form="NFKC"):
    """The module docstring's five steps on one Python string, without TensorFlow."""
    _check_form(form)
    return _python_steps(text, lowercase, split_punctuation, form)


def python_steps_on_list(texts, lowercase, split_punctuation, form):
    """`normalize_python` over a list of strings already checked by `as_string_list` (the form checked once)."""
    _check_form(form)
    return [_python_steps(text, lowercase, split_punctuation, form) for text in texts]


def _python_steps(text, lowercase, split_punctuation, form):
    text = _one_space_for_each_run(unicodedata.normalize(form, text.translate(_DELETE_TABLE)))
    if lowercase:
        text = text.lower()  # full case mapping, final sigma included, as ICU's toLower in TensorFlow
    if split_punctuation:
        text = "".join(f" {char} " if unicodedata.category(char).startswith("P") else char for char in text)
        text = _one_space_for_each_run(text)
    return text.strip(" ")


def normalize(texts, lowercase=False, split_punctuation=False, form="NFKC"):
    """Normalises a list of Python strings; returns a list of strings.

    See the module docstring for the steps (TensorFlow's ops, or the same
    steps in plain Python where TensorFlow is not installed). Empty input
    gives an empty list.
    """
    texts = as_string_list(texts)
    _check_form(form)
    if not texts:
        return []
    if not tensorflow_text_available():
        return python_steps_on_list(texts, lowercase, split_punctuation, form)
    normalized = normalize_tensor(texts, lowercase, split_punctuation, form)
    return [value.decode("utf-8") for value in normalized.numpy().tolist()]
