"""Length-bucketed batches: pad each batch to its own longest sequence.

Padding a whole corpus to its longest word makes every step of the encoder
and decoder loops run to that length, although most words are much shorter.
Grouping examples of similar length into the same batch (bucketing) and
padding each batch only to its own maximum removes most of that waste: the
recurrent loops run `max length in the batch` steps instead of `max length in
the corpus`.

The batches here are made by "pooled sorting": shuffle, cut into pools of
`pool_batches * batch_size` examples, sort each pool by length, cut it into
batches, shuffle the batch order. Batches differ from epoch to epoch but
each holds words of nearly equal length.
"""

import itertools
import math

import numpy as np

from course_lib.counts import check_count
from course_lib.data.tf_data import without_autotune
from course_lib.text.vocabulary import GO, PAD, STOP


def sequence_lengths(ids, pad_id=PAD):
    """Number of tokens before the padding of each row of a padded array."""
    ids = np.asarray(ids)
    if ids.ndim != 2:
        raise ValueError(f"Need padded ids (batch, length). Received: shape={ids.shape}")
    not_pad = ids != pad_id
    # Position after the last non-padding token.
    return np.where(not_pad.any(axis=1), ids.shape[1] - np.argmax(not_pad[:, ::-1], axis=1), 0)


def bucketed_order(lengths, batch_size, rng=None, pool_batches=50):
    """Index batches with similar lengths; shuffled when `rng` is given.

    Args:
        lengths: per-example length (source length, or a combined key).
        batch_size: examples per batch (the last batch of a pool may be smaller).
        rng: `np.random.Generator`; None gives a deterministic sorted order
            (for decoding a test set).
        pool_batches: pool size in batches (only with `rng`).

    Returns:
        A list of index arrays, one per batch.
    """
    lengths = np.asarray(lengths)
    batch_size = check_count(batch_size, "batch_size")
    count = len(lengths)
    if rng is None:
        order = np.argsort(lengths, kind="stable")
        return [order[start:start + batch_size] for start in range(0, count, batch_size)]
    order = rng.permutation(count)
    pool = max(1, int(pool_batches)) * batch_size
    batches = []
    for start in range(0, count, pool):
        members = order[start:start + pool]
        members = members[np.argsort(lengths[members], kind="stable")]
        batches.extend(members[i:i + batch_size] for i in range(0, len(members), batch_size))
    return [batches[i] for i in rng.permutation(len(batches))]


def trim_to_longest(ids, rows):
    """The given rows of padded `ids`, cut to the longest of them."""
    batch = ids[rows]
    width = max(1, int(sequence_lengths(batch).max()))
    return batch[:, :width]


def teacher_forcing_pair(target):
    """`target` = tokens + `<stop>` (padded) -> (`target_in`, `target_out`).

    `target_in` is `<GO>` followed by the tokens (the `<stop>` is not fed);
    `target_out` is the tokens followed by `<stop>`.
    """
    target = np.asarray(target)
    target_in = np.concatenate([np.full((len(target), 1), GO, target.dtype), target[:, :-1]], axis=1)
    target_in = np.where(target_in == STOP, PAD, target_in)
    return target_in.astype("int32"), target.astype("int32")


def check_batch_arrays(source, target, batch_size):
    """Checks what `make_batches` and `as_dataset` batch; returns `(source, target, batch_size)`.

    Raises `ValueError` unless `batch_size` is a whole number >= 1, `source` and
    `target` are padded id arrays `(N, S)` and `(N, T)` with `N >= 1`, and every
    target row ends with `<stop>` (its last non-padding id). A target without
    `<stop>` (`Vocabulary.encode` called without `add_stop=True`) would train a
    model that never learns to stop: its `target_out` would hold no `<stop>`.

    Args:
        source: padded source ids `(N, S)`.
        target: padded target ids followed by `<stop>`, `(N, T)`.
        batch_size: examples per batch.
    """
    batch_size = check_count(batch_size, "batch_size")
    source, target = np.asarray(source), np.asarray(target)
    if source.ndim != 2 or target.ndim != 2 or len(source) != len(target) or len(source) == 0:
        raise ValueError(
            "Need as many (and at least one) padded sources (N, S) as targets (N, T). "
            f"Received: source.shape={source.shape}, target.shape={target.shape}"
        )
    lengths = sequence_lengths(target)
    last = np.where(lengths > 0, target[np.arange(len(target)), np.maximum(lengths - 1, 0)], PAD)
    bad = np.flatnonzero(last != STOP)
    if len(bad):
        row = int(bad[0])
        ends = "is all padding" if lengths[row] == 0 else f"ends with id {int(last[row])}"
        raise ValueError(
            f"Every target row must end with <stop> (id {STOP}); encode targets with "
            f"`Vocabulary.encode(..., add_stop=True)`. Received: target row {row} {ends} "
            f"({len(bad)} of {len(target)} rows without <stop>): {target[row].tolist()[:20]}"
        )
    return source, target, batch_size


def make_batches(source, target, batch_size, bucketed=True, seed=None, transform=None):
    """A list of `({"source", "target_in"}, target_out)` NumPy batches for one epoch.

    Args:
        source: padded source ids `(N, S)`.
        target: padded target ids followed by `<stop>`, `(N, T)`; a row whose
            last non-padding id is not `<stop>` raises `ValueError`.
        batch_size: examples per batch (a whole number >= 1).
        bucketed: group by length and pad per batch; False pads every batch
            to the longest sequence of the whole set (the slow baseline).
        seed: shuffling seed (None: sorted, unshuffled).
        transform: optional `f(inputs, target_out, rng) -> (inputs, target_out)`
            applied to each batch, e.g. token noise for regularisation.
    """
    source, target, batch_size = check_batch_arrays(source, target, batch_size)
    return _batches(source, target, batch_size, bucketed, seed, transform)


def _batches(source, target, batch_size, bucketed, seed, transform):
    """`make_batches` on arrays `check_batch_arrays` has passed (`as_dataset` checks once, not every pass)."""
    rng = None if seed is None else np.random.default_rng(seed)
    if bucketed:
        key = sequence_lengths(source) * (target.shape[1] + 1) + sequence_lengths(target)
        batches = bucketed_order(key, batch_size, rng)
    else:
        order = np.arange(len(source)) if rng is None else rng.permutation(len(source))
        batches = [order[start:start + batch_size] for start in range(0, len(source), batch_size)]
    out = []
    for rows in batches:
        if bucketed:
            batch_source, batch_target = trim_to_longest(source, rows), trim_to_longest(target, rows)
        else:
            batch_source, batch_target = source[rows], target[rows]
        target_in, target_out = teacher_forcing_pair(batch_target)
        inputs = {"source": batch_source.astype("int32"), "target_in": target_in}
        if transform is not None:
            inputs, target_out = transform(inputs, target_out, rng or np.random.default_rng(0))
        out.append((inputs, target_out))
    return out


def as_dataset(source, target, batch_size, bucketed=True, seed=0, repeat=False, transform=None):
    """A `tf.data.Dataset` of batches with variable `(None, None)` shapes.

    Each pass (epoch) reshuffles with a new seed derived from `seed`: pass k
    (counted from 0) is `make_batches(..., seed=seed + k)`, its batch order and
    the `rng` its `transform` draws from. With `repeat=False`, Keras starts the
    dataset again for every epoch of `fit`; the dataset counts these passes, so
    the k-th pass over it (over this dataset object, from its creation) is pass
    k: every epoch differs, and the same seed gives the same epochs again. With
    `repeat=True` one iterator gives passes 0, 1, 2, ... without end (the
    stream for `fit_steps`); an iterator started again gives the same stream
    from its first batch, which is how `fit_steps` continues it (`skip`).
    With `seed=None` every pass is the same, sorted by length (for evaluation).

    The dataset knows its length (`dataset.cardinality()`): `ceil(N / batch_size)`
    batches, or infinite with `repeat=True`. A generator alone has an unknown
    length, and Keras then finds the end of a validation pass by running out
    of data, which it reports as "Your input ran out of data; interrupting
    training" (with `steps_per_execution > 1`, every epoch).
    """
    import tensorflow as tf

    source, target, batch_size = check_batch_arrays(source, target, batch_size)
    passes = itertools.count()  # passes started over this dataset, for `repeat=False`

    def generate():
        # Created once with the dataset: Keras calls `generate` again for every epoch, and a counter
        # local to it would start each epoch at pass 0 (the same batch order and noise every epoch).
        epochs = itertools.count() if repeat else (next(passes),)
        for epoch in epochs:
            epoch_seed = None if seed is None else seed + epoch
            yield from _batches(source, target, batch_size, bucketed, epoch_seed, transform)

    spec = (
        {"source": tf.TensorSpec((None, None), tf.int32), "target_in": tf.TensorSpec((None, None), tf.int32)},
        tf.TensorSpec((None, None), tf.int32),
    )
    dataset = tf.data.Dataset.from_generator(generate, output_signature=spec)
    # `make_batches` cuts every pool (a whole number of batches) and the last,
    # shorter one into batches of `batch_size`: ceil(N / batch_size) batches a pass.
    batches = tf.data.INFINITE_CARDINALITY if repeat else math.ceil(len(source) / int(batch_size))
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(batches))
    return without_autotune(dataset.prefetch(2))


def batched_generate(model, source, batch_size=512, **generate_kwargs):
    """Decodes a whole test set in length-sorted batches; results in input order.

    Args:
        model: has `generate(source_batch, **generate_kwargs)` returning a dict
            of NumPy arrays with the batch first (e.g. `Seq2Seq`).
        source: padded source ids `(N, S)`.
        batch_size: most examples per batch (each batch holds examples of
            similar length, cut to its longest).
        **generate_kwargs: passed to `model.generate`.

    Returns:
        A dict of lists (one entry per example, in the original order); arrays
        with a source axis are cut to the example's batch width.
    """
    source = np.asarray(source)
    if source.ndim != 2 or len(source) == 0:
        raise ValueError(f"Need padded source ids (N, S) with N >= 1. Received: shape={source.shape}")
    results = [None] * len(source)
    for rows in bucketed_order(sequence_lengths(source), batch_size):
        output = model.generate(trim_to_longest(source, rows), **generate_kwargs)
        for position, row in enumerate(rows):
            results[row] = {name: value[position] for name, value in output.items()}
    return {name: [result[name] for result in results] for name in results[0]}


def batched_log_probs(model, source, target, batch_size=512):
    """`log P(target | source)` of every row, teacher forced, in length-sorted batches.

    Args:
        model: a `Seq2Seq` (anything with `forward(source, target_in)` returning
            `(logits, alignments)`).
        source: padded source ids `(N, S)`.
        target: padded target ids followed by `<stop>`, `(N, T)` (as
            `Vocabulary.encode(..., add_stop=True)` writes them).
        batch_size: rows per forward pass (rows are grouped by length).

    Returns:
        A float64 array `(N,)`: the sum over the real target tokens (the
        `<stop>` included, padding excluded) of their log-probabilities.
    """
    from keras import ops

    from course_lib.layers.masking import check_token_range

    source, target = np.asarray(source), np.asarray(target)
    if source.ndim != 2 or target.ndim != 2 or len(source) != len(target) or len(source) == 0:
        raise ValueError(
            "Need as many (and at least one) padded sources (N, S) as targets (N, T). "
            f"Received: source.shape={source.shape}, target.shape={target.shape}"
        )
    for name, ids in (("source", source), ("target", target)):
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"`{name}` must hold integer token ids. Received: {name}.dtype={ids.dtype}")
        vocab_size = getattr(model, f"{name}_vocab_size", None)  # e.g. `Seq2Seq.target_vocab_size`
        if vocab_size is not None:  # a negative id would read the last row, one past the end fail in the model
            check_token_range(ids, vocab_size, name)
    totals = np.zeros(len(source), "float64")
    key = sequence_lengths(source) * (target.shape[1] + 1) + sequence_lengths(target)
    for rows in bucketed_order(key, batch_size):
        target_in, target_out = teacher_forcing_pair(trim_to_longest(target, rows))
        logits, _ = model.forward(ops.convert_to_tensor(trim_to_longest(source, rows).astype("int32")),
                                  ops.convert_to_tensor(target_in), training=False)
        log_probs = ops.convert_to_numpy(ops.log_softmax(logits, axis=-1)).astype("float64")  # (batch, T, vocab)
        picked = np.take_along_axis(log_probs, target_out[:, :, None], axis=-1)[:, :, 0]  # (batch, T)
        totals[rows] = np.sum(np.where(target_out != model.pad_id, picked, 0.0), axis=1)
    return totals
