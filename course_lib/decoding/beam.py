"""Beam search: keep the k most probable partial outputs at every step.

Greedy decoding commits to the single most probable token at each step; beam
search keeps `k` hypotheses ("beams") per example and, at every step, extends
each by every token and keeps the `k` best of the `k * vocab` candidates.

Scoring. A hypothesis `y_1..y_n` has the log-probability
`log P(y | x) = sum_t log P(y_t | y_<t, x)`, which always prefers short outputs.
We rank by the plain length-normalised score

    score = log P(y | x) / n ** length_penalty

where `n` counts the output tokens including `<stop>` (or `max_length` for an
unfinished hypothesis). `length_penalty=0` ranks by the raw log-probability,
`1` by the mean log-probability per token. (GNMT's `((5 + n) / 6) ** alpha`
is not used: with plain `n` the score is a per-token average at 1.)

Finished hypotheses (those that produced `<stop>`) stay in the beam with their
score frozen and are extended only by padding, so they compete with the
unfinished ones until the end. The loop always runs `max_length` steps, so it
compiles once; everything is vectorised over the batch and the beams
(`batch * k` rows go through `decoder.step` together).

With `beam_width=1` the result equals `greedy_decode` token for token.
"""

import weakref

import keras
import numpy as np
from keras import ops

from course_lib.compiling import compile_once
from course_lib.layers.masking import check_count, check_token_range
from course_lib.layers.precision import decoding_dtype
from course_lib.recurrence import scan

# A finite "minus infinity": keeps arithmetic free of inf - inf = NaN.
_IMPOSSIBLE = -1e9


def _tile(tensor, beam_width):
    """(batch, ...) -> (batch * k, ...), each row repeated k times in a row."""
    return ops.repeat(tensor, beam_width, axis=0)


def _where_rows(condition, when_true, when_false):
    """`where` with a `(rows,)` condition broadcast over the trailing axes."""
    extra = len(when_true.shape) - 1
    condition = ops.reshape(condition, ops.shape(condition) + (1,) * extra) if extra else condition
    return ops.where(condition, when_true, when_false)


def check_greedy_length_penalty(beam_width, length_penalty):
    """For `generate` methods, where `beam_width=1` means greedy decoding: refuses a `length_penalty` other than 1.0.

    The penalty ranks the beam's finished hypotheses; greedy decoding has one
    and returns its plain log-probability, so the value used to be accepted
    and ignored. (`beam_search` itself, at width 1, still divides its score.)
    """
    if beam_width == 1 and length_penalty != 1.0:
        raise ValueError(
            "`length_penalty` ranks the hypotheses of beam search; greedy decoding (beam_width=1) has one and "
            "would ignore it. Use beam_width >= 2, or leave length_penalty at 1.0. "
            f"Received: length_penalty={length_penalty!r}, beam_width={beam_width!r}"
        )


def check_beam_options(beam_width, length_penalty, vocab_size=None, max_length=None):
    """Raises `ValueError` unless `beam_width` is a whole number >= 1 and `length_penalty` a finite number >= 0.

    With `vocab_size`, the beam may hold at most `vocab_size - 2` hypotheses:
    padding and `<GO>` are never written, so a wider beam would be filled with
    impossible hypotheses made of them.

    With `max_length`, that is checked too (`check_count`), and so is the
    largest divisor of the scores, `max_length ** length_penalty`: past the
    float32 range (`length_penalty` above about 22 at `max_length=50`) every
    score would become -0.0 and the beams an arbitrary choice.
    """
    check_count(beam_width, "beam_width")
    if vocab_size is not None and beam_width > vocab_size - 2:
        raise ValueError(
            f"`beam_width` can be at most {vocab_size - 2}: a vocabulary of {vocab_size} has that many tokens "
            f"besides padding and <GO>. Received: beam_width={beam_width}"
        )
    if isinstance(length_penalty, bool) or not isinstance(length_penalty, (int, float, np.integer, np.floating)) \
            or not np.isfinite(length_penalty) or length_penalty < 0:
        raise ValueError(f"`length_penalty` must be a finite number >= 0. Received: length_penalty={length_penalty!r}")
    if max_length is not None:
        check_count(max_length, "max_length")
        with np.errstate(over="ignore"):
            largest = np.float32(max_length) ** np.float32(length_penalty)  # as the scores are computed
        if not np.isfinite(largest):
            raise ValueError(
                "`length_penalty` is too large for `max_length`: scores are divided by n ** length_penalty for "
                f"lengths n up to max_length, and {max_length} ** {length_penalty} overflows float32. "
                f"Received: length_penalty={length_penalty!r}, max_length={max_length!r}"
            )


def check_source(source, vocab_size):
    """The checks every `generate` makes on its sources before any work; returns them as a NumPy array.

    `source` must be an integer array `(batch, src_len)` with at least one
    position, every id in `[0, vocab_size)` (an id outside would silently read
    another embedding row, `check_token_range`).
    """
    source = np.asarray(source)
    if source.ndim != 2 or not np.issubdtype(source.dtype, np.integer):
        raise ValueError(
            "`source` must be an integer array (batch, src_len). "
            f"Received: source.shape={source.shape}, dtype={source.dtype}"
        )
    check_token_range(source, vocab_size, "source")
    if source.shape[1] == 0:
        raise ValueError(f"`source` needs at least one position. Received: source.shape={source.shape}")
    return source


def beam_search(
    decoder,
    memory,
    start_state,
    start_id,
    stop_id,
    max_length,
    beam_width,
    length_penalty=1.0,
    pad_id=0,
):
    """Decodes a batch with beam search.

    Args:
        decoder: any decoder implementing `step(previous_tokens, state, memory)`
            -> `(logits (rows, vocab), new_state, weights (rows, src_len))`.
            `state` may be a tensor or a nest of tensors (e.g. LSTM `[h, c]`).
        memory: the decoder's `prepare_memory(...)` output, a dict of
            batch-first tensors; it is tiled `beam_width` times here.
        start_state: the decoder's `start_state(...)`, batch-first.
        start_id, stop_id, pad_id: `<GO>`, `<stop>` and `<pad>` ids.
        max_length: the number of decoding steps (`<stop>` included).
        beam_width: k, the number of hypotheses kept per example.
        length_penalty: exponent of the length in the score (see module doc).

    Returns:
        A dict of tensors, beams sorted best first:
        `tokens (batch, k, max_length)` int32 (padding after `<stop>`),
        `scores (batch, k)` length-normalised scores,
        `log_probs (batch, k)` raw log-probabilities,
        `lengths (batch, k)` int32 output lengths (`<stop>` included),
        `alignments (batch, k, max_length, src_len)` attention weights
        (zeros after `<stop>`).
    """
    check_beam_options(beam_width, length_penalty, getattr(decoder, "vocab_size", None), max_length)
    max_length, beam_width = int(max_length), int(beam_width)
    first_leaf = keras.tree.flatten(start_state)[0]
    batch = ops.shape(first_leaf)[0]
    rows = batch * beam_width
    memory = keras.tree.map_structure(lambda t: _tile(t, beam_width), memory)
    state = keras.tree.map_structure(lambda t: _tile(t, beam_width), start_state)
    # Scores and weights in at least float32 (float64 under a float64 policy): float16 would turn
    # _IMPOSSIBLE into -inf and lose precision.
    dtype = decoding_dtype(decoder, start_state)
    first_tokens = ops.full((rows,), start_id, "int32")  # (batch*k,)
    src_len = _source_length(decoder, memory, first_tokens, state)

    # Only beam 0 is alive at the start, so the first step does not pick the
    # same token k times from k identical copies.
    log_probs = ops.concatenate(
        [ops.zeros((batch, 1), dtype), ops.full((batch, beam_width - 1), _IMPOSSIBLE, dtype)], axis=1
    )  # (batch, k)
    carry = {
        "step": ops.convert_to_tensor(0, "int32"),
        "previous": first_tokens,
        "state": state,
        "log_probs": log_probs,  # (batch, k)
        "scores": log_probs,  # (batch, k) normalised; frozen once finished
        "finished": ops.zeros((batch, beam_width), "bool"),
        "lengths": ops.zeros((batch, beam_width), "int32"),
        "tokens": ops.full((batch, beam_width, max_length), pad_id, "int32"),
        "alignments": ops.zeros((batch, beam_width, max_length, src_len), dtype),
    }
    positions = ops.arange(max_length, dtype="int32")  # (max_length,)
    batch_offsets = ops.arange(batch, dtype="int32")[:, None] * beam_width  # (batch, 1)

    def body(carry, _):
        step = carry["step"]
        logits, new_state, weights = decoder.step(carry["previous"], carry["state"], memory)
        vocab = ops.shape(logits)[-1]
        step_log_probs = ops.reshape(
            ops.log_softmax(ops.cast(logits, dtype), axis=-1), (batch, beam_width, vocab)
        )  # (batch, k, vocab)
        finished = carry["finished"]  # (batch, k)
        length_now = ops.cast(step + 1, dtype)
        normaliser = ops.power(length_now, ops.cast(length_penalty, dtype))

        # Unfinished beams: every token but <pad> and <GO> (never written);
        # finished beams: only padding, same score.
        vocab_ids = ops.arange(vocab, dtype="int32")  # (vocab,)
        writable = ops.logical_and(ops.not_equal(vocab_ids, pad_id), ops.not_equal(vocab_ids, start_id))
        extended = ops.where(
            writable[None, None, :],
            carry["log_probs"][:, :, None] + step_log_probs,
            ops.full_like(step_log_probs, _IMPOSSIBLE),
        )  # (batch, k, vocab)
        pad_only = ops.where(
            ops.arange(vocab)[None, None, :] == pad_id,
            carry["log_probs"][:, :, None],
            ops.full_like(extended, _IMPOSSIBLE),
        )  # (batch, k, vocab)
        raw = ops.where(finished[:, :, None], pad_only, extended)
        frozen = ops.where(
            ops.arange(vocab)[None, None, :] == pad_id,
            carry["scores"][:, :, None],
            ops.full_like(extended, _IMPOSSIBLE),
        )
        normalised = ops.where(finished[:, :, None], frozen, extended / normaliser)

        best_scores, best_indices = ops.top_k(
            ops.reshape(normalised, (batch, beam_width * vocab)), beam_width
        )  # (batch, k) each, sorted best first
        best_indices = ops.cast(best_indices, "int32")
        vocab_int = ops.cast(vocab, "int32")
        parents = best_indices // vocab_int  # (batch, k)
        tokens = best_indices % vocab_int  # (batch, k)
        flat_parents = ops.reshape(parents + batch_offsets, (rows,))  # (batch*k,)

        def by_parent(tensor):  # (batch, k, ...) -> same, rows taken from the parents
            flat = ops.reshape(tensor, (rows,) + tuple(ops.shape(tensor)[2:]))
            return ops.reshape(ops.take(flat, flat_parents, axis=0), ops.shape(tensor))

        parent_finished = by_parent(finished)  # (batch, k)
        raw_chosen = ops.take_along_axis(
            ops.reshape(raw, (batch, beam_width * vocab)), best_indices, axis=1
        )  # (batch, k)
        now_finished = ops.logical_or(parent_finished, ops.equal(tokens, stop_id))
        lengths = ops.where(parent_finished, by_parent(carry["lengths"]), step + 1)

        # Decoder state: a finished beam keeps its state (as greedy decoding does).
        flat_finished = ops.reshape(parent_finished, (rows,))
        state = keras.tree.map_structure(
            lambda old, new: _where_rows(
                flat_finished, ops.take(old, flat_parents, axis=0), ops.take(new, flat_parents, axis=0)
            ),
            carry["state"],
            new_state,
        )
        written = positions[None, None, :] == step  # (1, 1, max_length)
        history = ops.where(written, tokens[:, :, None], by_parent(carry["tokens"]))
        new_carry = {
            "step": step + 1,
            "previous": ops.reshape(tokens, (rows,)),
            "state": state,
            "log_probs": raw_chosen,
            "scores": best_scores,
            "finished": now_finished,
            "lengths": lengths,
            "tokens": history,
        }
        step_weights = ops.take(ops.cast(weights, dtype), flat_parents, axis=0)  # (batch*k, src_len)
        step_weights = _where_rows(flat_finished, ops.zeros_like(step_weights), step_weights)
        step_weights = ops.reshape(step_weights, (batch, beam_width, 1, src_len))
        new_carry["alignments"] = ops.where(
            written[..., None], step_weights, by_parent(carry["alignments"])
        )  # (batch, k, max_length, src_len)
        return new_carry, ()

    carry, _ = scan(body, carry, None, length=max_length)
    # Unfinished hypotheses at the end have length max_length already.
    # top_k kept the beams sorted; sort once more so the contract holds even
    # if scores tie differently after the last step.
    order = ops.cast(ops.argsort(-carry["scores"], axis=1), "int32")  # (batch, k)
    return {
        "tokens": ops.take_along_axis(carry["tokens"], order[:, :, None], axis=1),
        "scores": ops.take_along_axis(carry["scores"], order, axis=1),
        "log_probs": ops.take_along_axis(carry["log_probs"], order, axis=1),
        "lengths": ops.take_along_axis(carry["lengths"], order, axis=1),
        "alignments": ops.take_along_axis(carry["alignments"], order[:, :, None, None], axis=1),
    }


def _source_length(decoder, memory, first_tokens, state):
    """The width of the attention weights, from the memory or one probe step."""
    for name in ("mask", "values", "no_weights"):
        if name in memory and len(memory[name].shape) >= 2:
            return ops.shape(memory[name])[1]
    _, _, weights = decoder.step(first_tokens, state, memory)
    return ops.shape(weights)[1]


_COMPILED = weakref.WeakKeyDictionary()


def _model_beam(model, source, max_length, beam_width, length_penalty):
    encoder_outputs, initial_state, source_mask = model.encode(source, training=False)
    decoder = model.decoder
    memory = decoder.prepare_memory(encoder_outputs, initial_state, source_mask)
    return beam_search(
        decoder, memory, decoder.start_state(initial_state),
        model.start_id, model.stop_id, max_length, beam_width, length_penalty, pad_id=model.pad_id,
    )


def beam_function(model, max_length, beam_width, length_penalty=1.0):
    """A compiled beam search for `model` (one trace for every batch shape on TF).

    The options are checked (`check_beam_options`) before they become the
    cache key, so that 4.7 steps or a beam of 2.9 are refused, not cut to 4 and 2.
    """
    check_beam_options(beam_width, length_penalty, model.target_vocab_size, max_length)
    key = (int(max_length), int(beam_width), float(length_penalty))
    functions = _COMPILED.setdefault(model, {})
    if key not in functions:
        # A weak reference: the cache must not keep the model (its key) alive.
        model_ref = weakref.ref(model)
        functions[key] = compile_once(
            lambda source: _model_beam(model_ref(), source, *key), [((None, None), "int32")]
        )
    return functions[key]


def beam_search_model(model, source, max_length, beam_width, length_penalty=1.0):
    """Beam search for a `Seq2Seq`-like model on an integer array of sources.

    Called by `Seq2Seq.generate(source, beam_width=k)`.

    Args:
        model: has `encode(source)`, `decoder` (the decoder protocol),
            `source_vocab_size`, `target_vocab_size` and `start_id`,
            `stop_id`, `pad_id`.
        source: integer array `(batch, src_len)`, padding = `pad_id`.
        max_length, beam_width, length_penalty: see `beam_search`.

    Returns:
        A dict of NumPy arrays: the best hypothesis as `tokens (batch,
        max_length)`, `alignments (batch, max_length, src_len)`, `scores
        (batch,)` (length-normalised) and `log_probs (batch,)`; and all k
        beams, best first, as `beam_tokens (batch, k, max_length)`,
        `beam_scores (batch, k)`, `beam_log_probs (batch, k)`,
        `beam_lengths (batch, k)` (`<stop>` included) and
        `beam_alignments (batch, k, max_length, src_len)`.
    """
    source = check_source(source, model.source_vocab_size)
    if source.shape[0] == 0:
        raise ValueError(f"`source` holds no examples. Received: source.shape={source.shape}")
    result = beam_function(model, max_length, beam_width, length_penalty)(source.astype("int32"))
    result = {name: np.asarray(value) for name, value in result.items()}
    return {
        "tokens": result["tokens"][:, 0],
        "alignments": result["alignments"][:, 0],
        "scores": result["scores"][:, 0],
        "log_probs": result["log_probs"][:, 0],
        "beam_tokens": result["tokens"],
        "beam_scores": result["scores"],
        "beam_log_probs": result["log_probs"],
        "beam_lengths": result["lengths"],
        "beam_alignments": result["alignments"],
    }
