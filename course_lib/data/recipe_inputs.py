"""Small generated inputs for the encoder-decoder recipe cards.

Every application of the lecture's table gets a batch of the right *kind*
(images, videos, token sequences, pairs of inputs) with a simple rule linking
input and output, so that a training step has something to learn. Nothing is
downloaded; everything is drawn from a seed.

Token ids follow the course convention: `<pad>`=0, `<GO>`=1, `<stop>`=2,
`<unk>`=3, ordinary tokens from 4 up.
"""

import numpy as np

from course_lib.data import shapes

PAD, GO, STOP, UNK = 0, 1, 2, 3
FIRST_TOKEN = 4
COLOURS = np.array(list(shapes.COLOURS.values()), "float32")  # the captioning data's colours, one per class


def _check_batch(batch):
    if int(batch) < 1:
        raise ValueError(f"`batch` must be positive. Received: batch={batch}")


def images(batch, size=16, seed=0):
    """Noisy images with one coloured square each.

    Returns `(images (batch, size, size, 3) float32 in [0, 255], colour ids (batch,))`.
    """
    _check_batch(batch)
    rng = np.random.default_rng(seed)
    pictures = rng.uniform(0, 40, size=(batch, size, size, 3)).astype("float32")
    colours = rng.integers(0, len(COLOURS), size=batch)
    half = max(1, size // 6)
    for index, colour in enumerate(colours):
        row, col = rng.integers(half, size - half, size=2)
        pictures[index, row - half : row + half + 1, col - half : col + half + 1] = COLOURS[colour]
    return pictures, colours


def videos(batch, frames=4, size=16, seed=0):
    """Clips of a square moving right (class 0) or left (class 1).

    Returns `(videos (batch, frames, size, size, 3) float32, direction ids (batch,))`.
    """
    _check_batch(batch)
    rng = np.random.default_rng(seed)
    clips = rng.uniform(0, 40, size=(batch, frames, size, size, 3)).astype("float32")
    directions = rng.integers(0, 2, size=batch)
    half = max(1, size // 8)
    travel = np.linspace(half, size - half - 1, frames).astype(int)
    for index, direction in enumerate(directions):
        row = int(rng.integers(half, size - half))
        columns = travel if direction == 0 else travel[::-1]
        for frame, col in enumerate(columns):
            clips[index, frame, row - half : row + half + 1, col - half : col + half + 1] = 230.0
    return clips, directions


def caption_tokens(class_ids, vocab_size, length):
    """A caption per class: `length` tokens fixed by the class id, then `<stop>`.

    Returns `(target_in, target_out)`, both `(batch, length + 1)`.
    """
    class_ids = np.asarray(class_ids)
    words = FIRST_TOKEN + (class_ids[:, None] * 3 + np.arange(length)[None, :]) % (vocab_size - FIRST_TOKEN)
    return _teacher_forcing(words.astype("int32"))


def _teacher_forcing(words):
    batch = len(words)
    target_in = np.concatenate([np.full((batch, 1), GO, "int32"), words], axis=1)
    target_out = np.concatenate([words, np.full((batch, 1), STOP, "int32")], axis=1)
    return target_in, target_out


def random_tokens(rng, batch, length, vocab_size):
    return rng.integers(FIRST_TOKEN, vocab_size, size=(batch, length)).astype("int32")


def sequence_pairs(kind, batch, source_vocab, target_vocab, source_length, target_length=None, seed=0):
    """Source and target token sequences linked by a rule per application.

    kind:
        "entailment": the hypothesis repeats the premise's last words.
        "translation": each source token maps to a target token, order reversed.
        "transliteration": character by character, same order.
        "summarization": the summary is the first `target_length` tokens of
            the (longer) document.
        "dialog": the response depends on the first token of the utterance.

    Returns:
        `(source, target_in, target_out)` int32 arrays.
    """
    _check_batch(batch)
    rng = np.random.default_rng(seed)
    source = random_tokens(rng, batch, source_length, source_vocab)
    span = target_vocab - FIRST_TOKEN
    target_length = target_length or source_length
    mapped = FIRST_TOKEN + (source - FIRST_TOKEN) % span
    if kind == "entailment":
        words = mapped[:, -target_length:]
    elif kind == "translation":
        words = mapped[:, ::-1][:, :target_length]
    elif kind == "transliteration":
        words = mapped[:, :target_length]
    elif kind == "summarization":
        if target_length >= source_length:
            raise ValueError(
                "A summary must be shorter than its document. "
                f"Received: source_length={source_length}, target_length={target_length}"
            )
        words = mapped[:, :target_length]
    elif kind == "dialog":
        starts = (source[:, :1] - FIRST_TOKEN) * 2 + np.arange(target_length)[None, :]
        words = FIRST_TOKEN + starts % span
    else:
        raise ValueError(
            "`kind` must be entailment, translation, transliteration, summarization or dialog. "
            f"Received: kind={kind!r}"
        )
    target_in, target_out = _teacher_forcing(words.astype("int32"))
    return source, target_in, target_out


def questions(answers, vocab_size, length=5, seed=0):
    """Questions of random words; answers stay the image's colour (the image decides).

    Returns int32 `(batch, length)`; the question is random filler here,
    so a model must read the image to answer.
    """
    rng = np.random.default_rng(seed)
    return random_tokens(rng, len(answers), length, vocab_size)
