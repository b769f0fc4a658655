"""Greedy decoding: feed back the most probable token until `<stop>`."""

from keras import ops

from course_lib.layers.masking import check_count
from course_lib.layers.precision import decoding_dtype
from course_lib.recurrence import scan


def greedy_decode(decoder, memory, start_state, start_id, stop_id, max_length, pad_id=0):
    """Decodes a whole batch greedily for exactly `max_length` steps.

    The loop has a fixed length so that it compiles once; a sequence that has
    produced `<stop>` keeps emitting `pad_id` (and zero attention) afterwards.

    Args:
        decoder: a decoder with `step(previous_tokens, state, memory)`.
        memory: the decoder's `prepare_memory(...)` output.
        start_state: `s_0`, `(batch, units)`.
        start_id, stop_id, pad_id: the `<GO>`, `<stop>` and `<pad>` ids.
        max_length: the most output tokens (the `<stop>` included); a Python
            int, or on TensorFlow a scalar tensor.

    Returns:
        `(tokens, alignments, log_probs)`: `(batch, max_length)` int32 tokens,
        `(batch, max_length, src_len)` attention weights and the summed
        log-probability of each sequence `(batch,)`, both in float32 under a
        float32 or mixed policy (as beam search gives them; a float16 or
        bfloat16 array is no NumPy floating type) and float64 under float64.
    """
    if not ops.is_tensor(max_length):  # a tensor is checked by its caller
        check_count(max_length, "max_length")
    batch = ops.shape(start_state)[0]
    first_tokens = ops.full((batch,), start_id, dtype="int32")
    finished = ops.zeros((batch,), dtype="bool")
    # Scores in float32 under a float32 or mixed policy (float16 would lose precision), float64 under float64.
    dtype = decoding_dtype(decoder, start_state)
    total = ops.zeros((batch,), dtype=dtype)

    def body(carry, _):
        previous, state, finished, total = carry
        logits, new_state, weights = decoder.step(previous, state, memory)  # logits: (batch, vocab)
        log_probs = ops.log_softmax(ops.cast(logits, dtype), axis=-1)  # (batch, vocab)
        # <pad> and <GO> are never written: they are not words of the output.
        vocab_ids = ops.arange(ops.shape(logits)[-1], dtype="int32")  # (vocab,)
        allowed = ops.logical_and(ops.not_equal(vocab_ids, pad_id), ops.not_equal(vocab_ids, start_id))
        tokens = ops.cast(ops.argmax(ops.where(allowed[None, :], log_probs, -1e9), axis=-1), "int32")  # (batch,)
        best = ops.take_along_axis(log_probs, tokens[:, None], axis=1)[:, 0]  # (batch,)
        tokens = ops.where(finished, pad_id, tokens)
        total = total + ops.where(finished, ops.zeros_like(best), best)
        weights = ops.cast(weights, dtype)  # (batch, src_len)
        weights = ops.where(finished[:, None], ops.zeros_like(weights), weights)
        state = ops.where(finished[:, None], state, new_state)
        finished = ops.logical_or(finished, ops.equal(tokens, stop_id))
        return (tokens, state, finished, total), (tokens, weights)

    (_, _, _, total), (tokens, weights) = scan(
        body, (first_tokens, start_state, finished, total), None, length=max_length
    )
    return ops.transpose(tokens, (1, 0)), ops.transpose(weights, (1, 0, 2)), total
