"""A2: the attentional decoder: teacher-forcing inputs, one decoder step, the teacher-forced decode."""

import re

import numpy as np

from course_lib.grading.checks.common import as_numpy, check_shape, check_weights, CheckFailed, _fail, _passed, _rng


# The library's own step and teacher-forced pass, by attribute, and how a student calls them.
# `decoder_view` makes them raise, in the visible checks and in the hidden tests (hidden_tests/A2.py).
A2_LOCKED_METHODS = {
    "step": "decoder.step(...)",
    "__call__": "decoder(...)",
    "call": "decoder.call(...)",
    "_recur": "decoder._recur(...)",
    "_scheduled_sampling": "decoder._scheduled_sampling(...)",
}


def decoder_view(decoder):
    """What a student's A2 functions get as `decoder`: its four sub-layers, and none of its own methods.

    The view is a plain object, not the decoder: its `step`, `decoder(...)` and the other methods of
    `A2_LOCKED_METHODS` raise RuntimeError, and no library method stands behind them that a
    submission could bring back (as `decoder.__dict__.pop("step")` did when the decoder itself was
    handed over with its methods overwritten). `view.attention` calls the decoder's attention and
    counts the projections of the keys: calls without `projected_keys`, and `project_keys` itself.

    The hidden tests send this function's source to the student's kernel with the test instead of
    importing it there, where the submission could patch this module; so it uses nothing but
    `A2_LOCKED_METHODS`, which they send along.

    Args:
        decoder: a built `course_lib.decoders.AttentionGRUDecoder`.

    Returns:
        `(view, record)`: `record["project_keys"]` counts the projections of the keys made through
        `view.attention`, `record["called"]` lists the locked methods called (as in `A2_LOCKED_METHODS`).
    """
    record = {"project_keys": 0, "called": []}
    attention = decoder.attention

    class Attention:
        """`decoder.attention`: the decoder's layer, counting each projection of the keys."""

        def __call__(self, query, values, mask=None, projected_keys=None, **kwargs):
            if projected_keys is None:
                record["project_keys"] += 1
            return attention(query, values, mask=mask, projected_keys=projected_keys, **kwargs)

        call = __call__

        def project_keys(self, values):
            record["project_keys"] += 1
            return attention.project_keys(values)

        def __getattr__(self, name):  # units, score, ...: read from the layer
            return getattr(attention, name)

    def locked(name):
        def method(*args, **kwargs):
            record["called"].append(name)
            raise RuntimeError(f"{name} is not available here: build the step from decoder.embedding, "
                               "decoder.attention, decoder.cell and decoder.output_layer")

        return method

    class Decoder:
        """The sub-layers of an AttentionGRUDecoder; its own step and teacher-forced pass raise."""

        def __getattr__(self, name):
            raise AttributeError(f"decoder.{name} is not available in this exercise: use decoder.embedding, "
                                 "decoder.attention, decoder.cell and decoder.output_layer")

    for attribute, name in A2_LOCKED_METHODS.items():
        setattr(Decoder, attribute, locked(name))
    view = Decoder()
    view.embedding, view.attention = decoder.embedding, Attention()
    view.cell, view.output_layer = decoder.cell, decoder.output_layer
    return view, record


def _a2_decoder(seed=0, batch=3, src_len=5, value_dim=6, vocab=9):
    """The view a student's function gets (`decoder_view`), the decoder behind it (for the expected values), and inputs.

    Returns `(view, reference, memory, state, mask, record)`: `record` is `decoder_view`'s.
    """
    import keras

    from course_lib.decoders import AttentionGRUDecoder

    keras.utils.set_random_seed(seed)
    reference = AttentionGRUDecoder(vocab, 4, 8, attention_units=5)
    rng = _rng(seed)
    values = keras.ops.convert_to_tensor(rng.normal(size=(batch, src_len, value_dim)), dtype="float32")
    mask = np.arange(src_len)[None, :] < np.array([[src_len], [2], [3]])[:batch]
    reference.build((batch, 1), values.shape)
    memory = reference.prepare_memory(values, None, keras.ops.convert_to_tensor(mask))
    state = keras.ops.convert_to_tensor(rng.normal(size=(batch, 8)), dtype="float32")
    view, record = decoder_view(reference)
    return view, reference, memory, state, mask, record


def _call_without_library(function, arguments, called, exercise, instead, sizes=""):
    """Calls the student's function; fails when it used one of the decoder's locked methods.

    An error from inside a sub-layer (sizes that do not fit) becomes a hint that gives the
    `sizes` the sub-layers expect, instead of a traceback from deep in TensorFlow.
    """
    try:
        result = function(*arguments)
    except Exception as error:
        if not called:
            if sizes and not isinstance(error, CheckFailed) and _is_size_error(error):
                raise CheckFailed(f"{exercise} raised {type(error).__name__} ({_size_line(error)}). {sizes}") from error
            raise
        result = None
    if called:
        _fail(f"{exercise} calls {called[0]}, the course library's own version of what this exercise asks for. "
              f"The exercise is to write it yourself: {instead}. The grader makes {called[0]} unavailable, so "
              "this answer would score zero.")
    return result


def _is_size_error(error):
    """Whether `error` says that arrays of the wrong sizes met (NumPy, Keras or TensorFlow wording)."""
    text = str(error).lower()  # `error` may also be one line of a message
    return any(word in text for word in ("incompatible", "broadcast", "shape", "dimension", "size"))


def _size_line(error):
    """The line of `error`'s message that names the sizes (TensorFlow's first line only names the layer)."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines() if line.strip()]
    sized = [line for line in lines if _is_size_error(line)]
    return (sized or lines or [""])[0][:300]


def check_teacher_forcing_inputs(teacher_forcing_inputs):
    from course_lib.data import reversal

    source, target_in, target_out = reversal.make_examples(np.array([[1, 2, 3], [4, 5, 6]]))
    result = np.asarray(teacher_forcing_inputs(target_out, reversal.GO))
    check_shape(result, target_in.shape, "teacher_forcing_inputs(target_out)")
    if not np.all(result[:, 0] == reversal.GO):
        _fail("every decoder input starts with <GO>.")
    if np.any(result == reversal.STOP):
        _fail("<stop> is only ever an output: drop the last target token from the inputs.")
    if not np.array_equal(result, target_in):
        _fail("input t + 1 must be target token t (the target shifted right by one).")
    other_go = 7  # another vocabulary's <GO> id: the argument, not reversal.GO, must be used
    result = np.asarray(teacher_forcing_inputs(target_out, other_go))
    if not np.all(result[:, 0] == other_go):
        _fail(f"with go_id={other_go} the inputs must start with {other_go}: use the go_id argument, "
              "not a fixed id.")
    _passed("teacher_forcing_inputs")


def check_attention_decoder_step(attention_decoder_step):
    import keras

    decoder, reference, memory, state, mask, record = _a2_decoder()
    tokens = keras.ops.convert_to_tensor([1, 4, 7], dtype="int32")
    result = _call_without_library(
        attention_decoder_step, (decoder, tokens, state, memory), record["called"], "attention_decoder_step",
        "use decoder.embedding, decoder.attention, decoder.cell and decoder.output_layer",
        sizes="Here e(y_{t-1}) has 4 numbers and c_t must have the 6 of each h_j (a weighted SUM over the 5 "
              "source positions), so decoder.cell takes [e(y_{t-1}); c_t] of 4 + 6 = 10 numbers per example, "
              "and a state of 8.",
    )
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        _fail("attention_decoder_step should return (logits, new_state, weights).")
    logits = check_shape(result[0], (3, 9), "logits")
    new_state = check_shape(result[1], (3, 8), "new_state")
    weights = check_weights(result[2], mask=mask, name="attention weights")
    _, expected_weights = reference.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
    if not np.allclose(weights, as_numpy(expected_weights), atol=1e-5):
        _fail("the weights must come from attending with the previous state s_{t-1} (the `state` argument), "
              "before the GRU update.")
    if record["project_keys"]:
        _fail("attention_decoder_step projected the keys W_att h_j again (decoder.attention without "
              "projected_keys): pass projected_keys=memory[\"keys\"], which prepare_memory computed once for "
              "the source sentence.")
    if np.allclose(new_state, as_numpy(state)):
        _fail("the new state equals the old one: run decoder.cell on [e(y_{t-1}); c_t].")
    expected_logits = reference.output_layer(keras.ops.convert_to_tensor(new_state))
    if not np.allclose(logits, as_numpy(expected_logits), atol=1e-5):
        _fail("the logits must be decoder.output_layer applied to the new state s_t.")
    reference_logits, reference_state, _ = reference.step(tokens, state, memory)
    if not np.allclose(new_state, as_numpy(reference_state), atol=1e-4):
        _fail("the new state differs from the course decoder's: feed the GRU cell [e(y_{t-1}); c_t], "
              "embedding first.")
    _passed("attention_decoder_step")


def check_teacher_forced_decode(teacher_forced_decode):
    import keras

    decoder, reference, memory, state, mask, record = _a2_decoder(seed=1)
    target_inputs = keras.ops.convert_to_tensor([[1, 4, 5, 6], [1, 7, 8, 3], [1, 3, 3, 3]], dtype="int32")
    result = _call_without_library(
        teacher_forced_decode, (decoder, target_inputs, memory, state), record["called"], "teacher_forced_decode",
        "loop over the decoder inputs and call your attention_decoder_step at every step",
    )
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        _fail("teacher_forced_decode should return (logits, alignments).")
    check_shape(result[0], (3, 4, 9), "logits")
    alignments = check_shape(result[1], (3, 4, 5), "alignments")
    check_weights(alignments, mask=mask[:, None, :], name="alignments at every step")
    reference_logits, reference_alignments = reference(target_inputs, memory["values"], state, source_mask=memory["mask"])
    if not np.allclose(as_numpy(result[0]), as_numpy(reference_logits), atol=1e-4):
        if not _step_agrees(teacher_forced_decode, decoder, reference, target_inputs[:, 0], state, memory):
            _fail("the logits differ from the course decoder's, because your attention_decoder_step does: "
                  "fix part 2 first (its check says how), then run this cell again.")
        _fail("the logits differ from the course decoder's teacher-forced pass: feed the TRUE previous token "
              "at every step and carry the state from one step to the next.")
    if not np.allclose(as_numpy(alignments), as_numpy(reference_alignments), atol=1e-4):
        _fail("the logits are right but the alignments differ from the course decoder's: row t of each "
              "example must be the attention weights of step t (keep every step's weights, in order, and "
              "stack them on axis 1).")
    _passed("teacher_forced_decode")


def _step_agrees(teacher_forced_decode, decoder, reference, tokens, state, memory):
    """Whether the student's `attention_decoder_step` (the one the loop calls) matches one reference step.

    True when there is no such function to look at, so that the loop gets the blame only when the
    step is right.
    """
    step = getattr(teacher_forced_decode, "__globals__", {}).get("attention_decoder_step")
    if not callable(step):
        return True
    expected_logits, expected_state, _ = reference.step(tokens, state, memory)
    try:
        logits, new_state, _ = step(decoder, tokens, state, memory)
        logits, new_state = as_numpy(logits), as_numpy(new_state)
    except Exception:  # CheckFailed included: a step that fails its own check is not right
        return False
    return (logits.shape == tuple(expected_logits.shape) and new_state.shape == tuple(expected_state.shape)
            and np.allclose(logits, as_numpy(expected_logits), atol=1e-4)
            and np.allclose(new_state, as_numpy(expected_state), atol=1e-4))
