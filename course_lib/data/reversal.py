"""The reversal task: read a string of digits, write it backwards.

Vocabulary: `<pad>`=0, `<GO>`=1, `<stop>`=2, `<unk>`=3, digits 0-9 = ids 4..13.
The correct alignment is known exactly: output step t copies input position
L-1-t (the anti-diagonal), which makes the task a clean test of attention.
"""

import itertools

import numpy as np

from course_lib.counts import check_count
from course_lib.data.tf_data import without_autotune

PAD, GO, STOP, UNK = 0, 1, 2, 3
SPECIAL_TOKENS = ["<pad>", "<GO>", "<stop>", "<unk>"]
DIGIT_OFFSET = len(SPECIAL_TOKENS)
VOCAB = SPECIAL_TOKENS + [str(d) for d in range(10)]
VOCAB_SIZE = len(VOCAB)
TEST_SIZE = 500  # strings of each length in the lecture's test sets, all kept out of training by default


def encode_digits(digits):
    """Digit values (0-9) to token ids."""
    digits = np.asarray(digits)
    if digits.size and not np.issubdtype(digits.dtype, np.integer):
        raise ValueError(f"Digits must be integers 0..9. Received: dtype={digits.dtype}, {digits.tolist()}")
    if digits.size and (digits.min() < 0 or digits.max() > 9):
        raise ValueError(f"Digits must lie in 0..9. Received: {digits.tolist()}")
    return digits + DIGIT_OFFSET


def decode_ids(ids):
    """Token ids to digit values, ignoring special tokens."""
    return [int(i) - DIGIT_OFFSET for i in ids if int(i) >= DIGIT_OFFSET]


def make_examples(digits):
    """Digits `(batch, L)` -> (source, target_in, target_out) id arrays."""
    digits = np.asarray(digits)
    if digits.ndim != 2:
        raise ValueError(f"`digits` must have shape (batch, length). Received: shape={digits.shape}")
    source = encode_digits(digits).astype("int32")  # (batch, L)
    reversed_ids = source[:, ::-1]
    batch = len(source)
    target_in = np.concatenate([np.full((batch, 1), GO, "int32"), reversed_ids], axis=1)  # (batch, L+1)
    target_out = np.concatenate([reversed_ids, np.full((batch, 1), STOP, "int32")], axis=1)
    return source, target_in, target_out


def random_digits(rng, batch_size, length):
    return rng.integers(0, 10, size=(batch_size, length))


def check_lengths(min_length, max_length):
    """Raises ValueError unless 1 <= min_length <= max_length (the training lengths)."""
    if min_length < 1 or max_length < min_length:
        raise ValueError(
            "Need 1 <= min_length <= max_length. "
            f"Received: min_length={min_length}, max_length={max_length}"
        )


def training_batches(num_batches, batch_size=64, min_length=5, max_length=10, seed=0, held_out=TEST_SIZE):
    """Yields `({"source", "target_in"}, target_out)` with one length per batch.

    No training string is one of the evaluation strings (`test_set(length,
    held_out)`; the sets of each length are prefixes of one another, so any
    evaluation of up to `held_out` strings is clean): at length 5 there are
    only 10**5 strings, and 2,500 batches draw about 27,000 of them, so 140 of
    the 500 test strings of length 5 were once also training strings. Such a
    string is drawn again.
    """
    check_lengths(min_length, max_length)
    held_out = check_count(held_out, "held_out")
    rng = np.random.default_rng(seed)
    kept_out = {}  # length -> the test strings of that length, each read as one decimal number
    for _ in range(num_batches):
        length = int(rng.integers(min_length, max_length + 1))
        if length not in kept_out:
            kept_out[length] = np.unique(_as_numbers(test_set(length, held_out)[0] - DIGIT_OFFSET))  # sorted
            if len(kept_out[length]) == 10**length:
                raise ValueError(
                    f"Holding out {held_out} test strings leaves no string of length {length} to train on "
                    f"(there are {10**length}). Received: held_out={held_out}, min_length={min_length}"
                )
        digits = random_digits(rng, batch_size, length)
        clashes = _among(_as_numbers(digits), kept_out[length])
        while clashes.any():  # rare: redraw only those rows
            digits[clashes] = random_digits(rng, int(clashes.sum()), length)
            clashes = _among(_as_numbers(digits), kept_out[length])
        source, target_in, target_out = make_examples(digits)
        yield {"source": source, "target_in": target_in}, target_out


def _as_numbers(digits):
    """Each row of digits `(batch, L)` read as one decimal number (exact up to L = 18)."""
    return np.asarray(digits, dtype="int64") @ (10 ** np.arange(digits.shape[1] - 1, -1, -1, dtype="int64"))


def _among(numbers, sorted_numbers):
    """Which of `numbers` occur in the sorted array `sorted_numbers` (a binary search; `np.isin` sorts anew)."""
    places = np.minimum(np.searchsorted(sorted_numbers, numbers), len(sorted_numbers) - 1)
    return sorted_numbers[places] == numbers


def test_set(length, count=TEST_SIZE, seed=1234):
    """A fixed set of `count` strings of one length, (source, target_out)."""
    rng = np.random.default_rng(seed + length)
    source, _, target_out = make_examples(random_digits(rng, count, length))
    return source, target_out


def as_dataset(num_batches, batch_size=64, min_length=5, max_length=10, seed=0, held_out=TEST_SIZE):
    """The training batches as a `tf.data.Dataset` with variable length.

    The dataset knows its `num_batches`, so `fit(dataset, epochs=...)` shows the
    epoch's length and does not warn that the input ran out of data. Each pass
    over it (each epoch) draws new strings: the first pass is
    `training_batches(..., seed)`, pass k > 0 uses the seed `(seed, k)`, so a
    run is reproducible and a second epoch does not repeat the first.
    """
    import tensorflow as tf

    spec = (
        {
            "source": tf.TensorSpec((None, None), tf.int32),
            "target_in": tf.TensorSpec((None, None), tf.int32),
        },
        tf.TensorSpec((None, None), tf.int32),
    )
    check_lengths(min_length, max_length)
    check_count(held_out, "held_out")
    passes = itertools.count()

    def one_pass():
        index = next(passes)
        pass_seed = seed if index == 0 else (seed, index)
        return training_batches(num_batches, batch_size, min_length, max_length, pass_seed, held_out)

    return without_autotune(tf.data.Dataset.from_generator(
        one_pass,
        output_signature=spec,
    ).apply(tf.data.experimental.assert_cardinality(num_batches)).prefetch(4))
