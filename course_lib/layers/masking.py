"""Masked softmax and mask checks shared by every attention layer, token-id checks, and the mask the
recurrent encoders run with."""

import functools
import warnings

import keras
import numpy as np
from keras import ops

from course_lib.counts import check_count  # noqa: F401 - the layers, encoders and models import it from here
from course_lib.layers.precision import at_least_float32

# Added to the score of a padded position. Far below any real score, yet finite,
# so that a row in which every position is padding never produces inf - inf = NaN.
NEGATIVE_SCORE = -1e9


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over `axis` that gives padded positions exactly zero weight.

    Args:
        scores: float tensor of unnormalised scores.
        mask: optional mask broadcastable to `scores`, boolean (`False` =
            padding) or 0/1 integer (0 = padding). A float mask is refused
            (`check_mask_dtype`): an additive mask (0 real, -1e9 padding) cast
            to booleans would keep exactly the padding.
        axis: the axis to normalise over.

    Returns:
        Weights of the shape of `scores`. Rows with no real position are all zero.
    """
    # The softmax runs in at least float32 (as Keras's own softmax layers do
    # under a mixed policy): in float16, -1e9 would round to -inf and an
    # all-padding row would give inf - inf = NaN. The weights come back in the
    # scores' dtype.
    dtype = scores.dtype
    scores = ops.cast(scores, at_least_float32(dtype))
    if mask is None:
        return ops.cast(_softmax(scores, axis), dtype)
    check_mask_dtype(mask)
    mask = ops.cast(mask, "bool")
    scores = ops.where(mask, scores, NEGATIVE_SCORE)
    weights = _softmax(scores, axis)
    # exp(-1e9 - max) underflows to exactly 0 already; the product also zeroes
    # the uniform weights of an all-padding row.
    return ops.cast(weights * ops.cast(mask, weights.dtype), dtype)


def _softmax(scores, axis):
    """`ops.softmax`, without Keras's warning when `axis` has one position.

    Attention over one position (a one-letter word, a one-sentence document)
    rightly gives it weight 1; Keras warns that such a softmax "is likely not
    what you intended" and suggests a sigmoid, which would be wrong here.
    """
    if scores.shape[axis] != 1:
        return ops.softmax(scores, axis=axis)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="You are using a softmax over axis")
        return ops.softmax(scores, axis=axis)


def check_mask_dtype(mask):
    """Raises ValueError unless `mask` is boolean or integer (True or 1 = a real position).

    A float mask is refused: an additive mask (0 for real positions, -1e9 for
    padding) cast to booleans would keep exactly the padding, and 0.5 would
    count as a real position.
    """
    dtype = keras.backend.standardize_dtype(mask.dtype)
    if dtype != "bool" and "int" not in dtype:
        raise ValueError(
            "The mask must be boolean (True = a real position; integer 0/1 is accepted too), not an additive "
            f"or fractional float mask. Received: mask.dtype={dtype}"
        )


def check_mask(mask, expected_shape, name):
    """Raises ValueError unless `mask` is boolean or integer and has the (batch, length) shape of `name`."""
    check_mask_dtype(mask)
    if len(mask.shape) != len(expected_shape):
        raise ValueError(
            f"The mask must have shape {tuple(expected_shape)} to match `{name}`. "
            f"Received: mask.shape={mask.shape}"
        )
    for got, want in zip(mask.shape, expected_shape):
        if got is not None and want is not None and got != want:
            raise ValueError(
                f"The mask must have shape {tuple(expected_shape)} to match `{name}`. "
                f"Received: mask.shape={mask.shape}"
            )


def check_same_batch(**tensors):
    """Raises ValueError unless the named tensors have the same batch size (axis 0), where it is known.

    Mismatched batches would otherwise broadcast (a batch of 1 against 2) or fail
    deep inside a concatenation.
    """
    known = {name: tensor.shape for name, tensor in tensors.items() if tensor is not None}
    sizes = {shape[0] for shape in known.values() if len(shape) and shape[0] is not None}
    if len(sizes) > 1:
        names = [f"`{name}`" for name in known]
        raise ValueError(
            f"{', '.join(names[:-1])} and {names[-1]} must have the same batch size. "
            "Received: " + ", ".join(f"{name}.shape={shape}" for name, shape in known.items())
        )


def check_token_ids(tokens, name="tokens", axes=("batch", "length")):
    """Raises ValueError unless `tokens` is an integer tensor with one axis per name in `axes`."""
    dtype = str(getattr(tokens, "dtype", ""))
    if "int" not in dtype:
        raise ValueError(
            f"`{name}` must be an integer tensor of token ids. Received: {name}.dtype={dtype}"
        )
    if len(tokens.shape) != len(axes):
        raise ValueError(
            f"`{name}` must have rank {len(axes)} ({', '.join(axes)}). Received: {name}.shape={tokens.shape}"
        )


def check_token_range(tokens, vocab_size, name="tokens"):
    """Raises ValueError unless every id in a concrete array lies in `[0, vocab_size)`.

    Embedding lookups do not check their ids: a negative id reads a row from
    the end of the table (-1 is the last token), and one past the end fails
    deep inside TensorFlow on the CPU (on a GPU it reads zeros). The checks
    run where NumPy arrays come in (`generate`, `explain`, scoring); inside a
    compiled graph the values are not known.
    """
    values = np.asarray(tokens)
    if values.size == 0:
        return
    low, high = values.min(), values.max()
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(
            f"`{name}` holds ids outside the vocabulary [0, {vocab_size}). "
            f"Received: {name} with id {bad} (ids from {low} to {high})"
        )


def known_values(tensor):
    """The values of `tensor` as a NumPy array when they are known now (NumPy, an eager tensor), else None.

    Inside a traced or compiled function (`tf.function`, `jax.jit`, Keras's symbolic pass) they are not.
    """
    if isinstance(tensor, np.ndarray):
        return tensor
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        if tf.executing_eagerly() and isinstance(tensor, tf.Tensor):
            return tensor.numpy()
    elif backend == "jax":
        import jax

        if isinstance(tensor, jax.Array):
            try:
                return np.asarray(tensor)
            except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
                return None  # a tracer inside `jax.jit`: no values yet
    return None


def check_known_token_range(tokens, vocab_size, name="tokens"):
    """`check_token_range` where the ids' values are known (an eager call); nothing inside a compiled one."""
    values = known_values(tokens)
    if values is not None:
        check_token_range(values, vocab_size, name)


def check_flag(value, name):
    """Returns `value` as a plain bool; raises ValueError unless it is True or False (a NumPy bool too).

    A string such as "no" or "False" is truthy: taken as given, it would build the other model and save
    the string in the config.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"`{name}` must be True or False. Received: {name}={value!r}")
    return bool(value)


def _is_default(value, default):
    """Whether `value` is `default` as far as an unread option is concerned.

    `None` only for `None`; a tuple or list default equals any non-string
    sequence of the same items (`[32, 64]` is `(32, 64)`); a bool default
    equals what compares equal to it (`0` is `False`); any other default
    never equals a bool (`True` is not a ratio of 1.0, `False` not a dropout
    of 0).
    """
    if default is None:
        return value is None
    if isinstance(default, (tuple, list)):
        return not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and tuple(value) == tuple(default)
    if isinstance(default, (bool, np.bool_)):
        return not isinstance(value, (str, bytes)) and value == default
    return not isinstance(value, (bool, np.bool_)) and value == default


def check_unread_options(given, defaults, reason, **context):
    """Raises `ValueError` when an option the model never reads has a value other than its default.

    Used where a model's options apply to one of its variants only (the
    attentional decoder, one encoder), so that a value the variant would
    silently ignore is refused with what was received.

    Args:
        given: dict, option name -> the value received.
        defaults: dict, option name -> the value the model runs as; only the
            names in `defaults` are checked (each must be in `given`).
        reason: the message, e.g. "`deep_output` applies to the attentional
            decoder only"; or a callable taking the set of non-default names
            and returning it.
        **context: what chose the variant (`attention=False`), appended to
            the message after the options.

    The message is `f"{reason}. Received: name=value, ..., key=value"`, every
    value by `repr`, the options in the order of `defaults`. For how values
    are compared (tuples and lists, bools), see `_is_default`.
    """
    unread = {name: given[name] for name, default in defaults.items() if not _is_default(given[name], default)}
    if unread:
        if callable(reason):
            reason = reason(set(unread))
        received = {**unread, **context}
        raise ValueError(f"{reason}. Received: " + ", ".join(f"{name}={value!r}" for name, value in received.items()))


def check_special_ids(vocab_size, start_id, stop_id, pad_id):
    """Raises ValueError unless `<GO>`, `<stop>` and padding are three different ids in `[0, vocab_size)`.

    An id past the vocabulary used to fail only at the first decoding step,
    deep inside TensorFlow; `start_id == stop_id` decoded one `<stop>` and
    nothing else.

    Returns:
        `(start_id, stop_id, pad_id)` as Python ints.
    """
    ids = {"start_id": start_id, "stop_id": stop_id, "pad_id": pad_id}
    whole = all(isinstance(value, (int, np.integer)) and not isinstance(value, bool) for value in ids.values())
    if not whole or len(set(ids.values())) != 3 or not all(0 <= value < vocab_size for value in ids.values()):
        raise ValueError(
            f"`start_id`, `stop_id` and `pad_id` must be three different ids in [0, {vocab_size}). "
            "Received: " + ", ".join(f"{name}={value!r}" for name, value in ids.items())
        )
    return int(start_id), int(stop_id), int(pad_id)


def check_initial_state(initial_state, state_size=None, name="initial_state"):
    """Raises ValueError unless `initial_state` is `(batch, state_size)` (any size where `state_size` is None).

    A state of another rank or size used to fail deep inside the GRU cell (a
    MatMul or ConcatV2 error), or in the attention's query check.
    """
    shape = initial_state.shape
    if len(shape) != 2 or (state_size is not None and shape[-1] is not None and shape[-1] != state_size):
        raise ValueError(
            f"`{name}` must have shape (batch, {'state_size' if state_size is None else state_size}). "
            f"Received: {name}.shape={shape}"
        )


def check_step_inputs(previous_tokens, state, state_size=None):
    """What a decoder's `step()` checks: integer ids `y_{t-1}` `(batch,)` and `s_{t-1}` `(batch, state_size)`.

    Ids of shape `(batch, 1)` used to broadcast into logits `(batch, batch, vocab)`, and float ids were
    truncated by the embedding. The checks read static shapes only, so a traced decoding loop pays nothing.
    """
    check_token_ids(previous_tokens, "previous_tokens", axes=("batch",))
    check_initial_state(state, state_size, name="state")
    check_same_batch(previous_tokens=previous_tokens, state=state)


def check_decoder_inputs(target_inputs, encoder_outputs, initial_state, state_size=None):
    """What every decoder's teacher-forced call checks first.

    `target_inputs` integer `(batch, tgt_len)` with at least one step (`<GO>`),
    `encoder_outputs` `(batch, src_len, value_dim)`, `initial_state`
    `(batch, state_size)` of the same batch (`check_initial_state`).
    """
    check_token_ids(target_inputs, "target_inputs")
    check_initial_state(initial_state, state_size)
    if len(encoder_outputs.shape) != 3:
        raise ValueError(
            "`encoder_outputs` must have rank 3 (batch, src_len, value_dim): the alignments are "
            f"(batch, tgt_len, src_len). Received: encoder_outputs.shape={encoder_outputs.shape}"
        )
    check_same_batch(target_inputs=target_inputs, encoder_outputs=encoder_outputs, initial_state=initial_state)
    if target_inputs.shape[1] == 0:
        raise ValueError(
            f"`target_inputs` needs at least one step (`<GO>`). Received: target_inputs.shape={target_inputs.shape}"
        )


def runnable_mask(mask):
    """A copy of a `(rows, length)` mask in which an all-padding row keeps position 0.

    Recurrent layers are not asked to run over a sequence with no real step:
    Keras's cuDNN GRU (TensorFlow on a GPU) fails an assertion on such a row.
    The one step they then read is padding, and its result is discarded by the
    real mask downstream.
    """
    has_real = ops.any(mask, axis=-1, keepdims=True)  # (rows, 1)
    first = ops.equal(ops.arange(ops.shape(mask)[-1]), 0)[None, :]  # (1, length)
    return ops.logical_or(mask, ops.logical_and(ops.logical_not(has_real), first))


def run_recurrent(rnn, sequences, mask, training=None):
    """Runs a Keras recurrent layer over the steps of `sequences` where `mask` is True.

    Keras's cuDNN kernels (TensorFlow on a GPU) accept only right-padded masks,
    real steps first and padding after, with at least one real step per row.
    Inside a compiled function (`fit`, a decoding `tf.function`) any other mask
    fails an assertion at run time instead of falling back to the slow kernel.
    The masks here are not always right-padded: a flattened document has each
    sentence's padding in the middle, a document can hold an empty sentence, a
    source can be left-padded. So each row's real steps are moved to the front,
    in their order, the layer runs over that right-padded copy, and its
    per-step outputs are put back at their own positions. A recurrent layer
    skips masked steps anyway, so the final states and every real position's
    output are those of the layer run on the original mask; what sits at a
    padded position is unspecified (downstream masks ignore it).

    The reordering costs time (on a 2-core CPU it made the reversal encoder's
    forward and backward pass 60% slower), and only cuDNN needs it: on a CPU,
    and on JAX or PyTorch, whose masked recurrent layers never use cuDNN, the
    layer runs on the mask as it is.

    Args:
        rnn: a `keras.layers.RNN` (a GRU, say) or a `keras.layers.Bidirectional`.
        sequences: `(rows, length, features)`.
        mask: boolean `(rows, length)`; False = padding. A row with no real step
            reads one padding step (`runnable_mask`).
        training: passed on to the layer.

    Returns:
        What `rnn` returns, with its per-step outputs (when it returns
        sequences) in the original step order, carrying no Keras mask on any
        device: the caller says which mask they have (`compute_mask`).
    """
    check_mask_dtype(mask)
    mask = ops.cast(mask, "bool")
    if not _cudnn_may_run():
        results = rnn(sequences, mask=runnable_mask(mask), training=training)
        if not rnn.return_sequences:
            return results
        # Keras attached `runnable_mask` to the outputs, which calls position 0 of an all-padding row real; the
        # packed path below returns fresh tensors with no mask. A copy makes both the same: no mask attached.
        if isinstance(results, (list, tuple)):  # (outputs, *final_states)
            return [ops.copy(results[0]), *results[1:]]
        return ops.copy(results)
    length = ops.shape(mask)[1]
    positions = ops.arange(length)[None, :]  # (1, length)
    real_first = ops.where(mask, positions, positions + length)  # (rows, length): a sort key
    order = ops.argsort(real_first, axis=-1)  # (rows, length): packed step -> original position
    packed = ops.take_along_axis(sequences, order[:, :, None], axis=1)  # (rows, length, features)
    packed_mask = ops.take_along_axis(mask, order, axis=1)  # (rows, length), right-padded
    results = rnn(packed, mask=runnable_mask(packed_mask), training=training)
    if not rnn.return_sequences:
        return results
    back = ops.argsort(order, axis=-1)[:, :, None]  # (rows, length, 1): original position -> packed step
    if isinstance(results, (list, tuple)):  # (outputs, *final_states)
        return [ops.take_along_axis(results[0], back, axis=1), *results[1:]]
    return ops.take_along_axis(results, back, axis=1)  # (rows, length, units)


@functools.cache
def _cudnn_may_run():
    """True where Keras may run a masked GRU on cuDNN: TensorFlow with a GPU."""
    if keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf

    return bool(tf.config.list_logical_devices("GPU"))
