"""Hidden tests of A2: one attentional decoder step and teacher forcing (6 points).

The reference is the course library's `AttentionGRUDecoder` itself: the
grader builds one with random weights, sends the weights to the student's
kernel (where the same decoder is rebuilt), and compares the student's
`attention_decoder_step` with `decoder.step` and the student's teacher-forced
loop with `decoder(...)`. The student's functions get the decoder's
sub-layers only (`decoder_view`), as in the visible checks.
"""

import inspect

import numpy as np

from course_lib.grading.checks.a2_decoder import A2_LOCKED_METHODS, decoder_view
from course_lib.grading.spec import Assignment, Question, Test, allclose, exact

VOCAB, EMBEDDING, UNITS, ATTENTION_UNITS, VALUE_DIM = 11, 6, 8, 5, 7


# Rebuilds the decoder in the student's kernel (and in the grader). The student's functions get
# `decoder_view(decoder)`: the four sub-layers, without the decoder's own step and teacher-forced pass.
# Its source is sent with the test, not imported in the kernel, where the submission could patch it.
KERNEL_SETUP = f'''
import numpy as np

A2_LOCKED_METHODS = {A2_LOCKED_METHODS!r}

{inspect.getsource(decoder_view)}

def _grader_decoder(inputs):
    from course_lib.decoders import AttentionGRUDecoder

    decoder = AttentionGRUDecoder(
        inputs["vocab"], inputs["embedding"], inputs["units"], attention_units=inputs["attention_units"]
    )
    values = inputs["values"]
    decoder.build((values.shape[0], 1), values.shape)
    decoder.set_weights([np.asarray(w, dtype="float32") for w in inputs["weights"]])
    return decoder


def _grader_memory(decoder, inputs):
    import keras

    values = keras.ops.convert_to_tensor(inputs["values"], dtype="float32")
    mask = keras.ops.convert_to_tensor(inputs["mask"], dtype="bool")
    return decoder.prepare_memory(values, None, mask)


def _grader_step_inputs(inputs):
    """The arguments of the student's step (the decoder's view first), and the view's record of calls."""
    import keras

    decoder = _grader_decoder(inputs)
    memory = _grader_memory(decoder, inputs)
    view, record = decoder_view(decoder)
    tokens = keras.ops.convert_to_tensor(inputs["tokens"], dtype="int32")
    state = keras.ops.convert_to_tensor(inputs["state"], dtype="float32")
    return (view, tokens, state, memory), record


def _grader_step_counting_keys(step, inputs):
    """The student's step, and how many times it projected the keys W_att h_j again (the memory holds them)."""
    arguments, record = _grader_step_inputs(inputs)
    return step(*arguments), record["project_keys"]


def _grader_forcing_arguments(inputs):
    import keras

    decoder = _grader_decoder(inputs)
    memory = _grader_memory(decoder, inputs)
    target_inputs = keras.ops.convert_to_tensor(inputs["target_inputs"], dtype="int32")
    state = keras.ops.convert_to_tensor(inputs["state"], dtype="float32")
    return decoder_view(decoder)[0], target_inputs, memory, state
'''

_helpers = {}
exec(KERNEL_SETUP, _helpers)


def attention_decoder_step(decoder, previous_tokens, state, memory):
    from keras import ops

    embedded = decoder.embedding(previous_tokens)  # (batch, embedding_dim)
    context, weights = decoder.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
    cell_input = ops.concatenate([embedded, context], axis=-1)  # (batch, emb + value_dim)
    new_state, _ = decoder.cell(cell_input, state)  # (batch, units)
    return decoder.output_layer(new_state), new_state, weights


def _random_weights(rng, batch, src_len):
    from course_lib.decoders import AttentionGRUDecoder

    decoder = AttentionGRUDecoder(VOCAB, EMBEDDING, UNITS, attention_units=ATTENTION_UNITS)
    decoder.build((batch, 1), (batch, src_len, VALUE_DIM))
    return [0.5 * rng.normal(size=w.shape).astype("float32") for w in decoder.get_weights()]


def _decoder_inputs(batch, src_len, steps=None):
    def make(rng):
        lengths = rng.integers(1, src_len + 1, size=batch)
        lengths[0] = src_len  # one full row
        lengths[-1] = min(lengths[-1], max(1, src_len // 2))  # and a padded one, whatever the draw: a step that
        # ignores the mask must lose every test, not only those whose draw happened to hold padding
        inputs = {
            "vocab": VOCAB, "embedding": EMBEDDING, "units": UNITS, "attention_units": ATTENTION_UNITS,
            "weights": _random_weights(rng, batch, src_len),
            "values": rng.normal(size=(batch, src_len, VALUE_DIM)).astype("float32"),
            "mask": np.arange(src_len)[None, :] < lengths[:, None],
            "state": rng.normal(size=(batch, UNITS)).astype("float32"),
            "tokens": rng.integers(1, VOCAB, size=batch).astype("int32"),
        }
        if steps:
            inputs["target_inputs"] = np.concatenate(
                [np.ones((batch, 1), "int32"), rng.integers(3, VOCAB, size=(batch, steps - 1)).astype("int32")], axis=1
            )
        return inputs

    return make


def _expected_step(inputs):
    import keras

    decoder = _helpers["_grader_decoder"](inputs)
    memory = _helpers["_grader_memory"](decoder, inputs)
    tokens = keras.ops.convert_to_tensor(inputs["tokens"], dtype="int32")
    state = keras.ops.convert_to_tensor(inputs["state"], dtype="float32")
    logits, new_state, weights = decoder.step(tokens, state, memory)
    return tuple(np.asarray(x) for x in (logits, new_state, weights))


def _expected_forcing(inputs):
    decoder = _helpers["_grader_decoder"](inputs)
    logits, alignments = decoder(
        inputs["target_inputs"], inputs["values"], inputs["state"], source_mask=inputs["mask"]
    )
    return np.asarray(logits), np.asarray(alignments)


def _part(index, name):
    base = allclose(rtol=1e-4, atol=1e-4)

    def compare(got, expected, inputs):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, f"expected a tuple of {len(expected)} values"
        ok, reason = base(got[index], expected[index], inputs)
        return ok, reason.replace("result", name, 1)

    return compare


STEP_CALL = "student.attention_decoder_step(*_grader_step_inputs(inputs)[0])"
COUNTING_STEP_CALL = "_grader_step_counting_keys(student.attention_decoder_step, inputs)"


def _weights_with_keys_projected_once(got, expected, inputs):
    """The step's weights (part 2 of its result), and no second projection of the keys inside the step."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return False, "the step could not be run"
    ok, reason = _part(2, "weights")(got[0], expected, inputs)
    if ok and got[1]:
        return False, ("the right weights, but the keys W_att h_j were projected again inside the step: pass "
                       "projected_keys=memory[\"keys\"] to decoder.attention (prepare_memory computed them once)")
    return ok, reason
FORCING_CALL = "student.teacher_forced_decode(*_grader_forcing_arguments(inputs))"


def _teacher_inputs(rng):
    # Not the course's <GO> id (1): an answer that ignores `go_id` must fail.
    return {"target_out": rng.integers(3, 14, size=(4, 6)).astype("int32"), "go_id": 5}


ASSIGNMENT = Assignment(
    id="A2",
    notebook="A2_attentional_decoder",
    questions=[
        Question("inputs", "teacher-forcing inputs: <GO> + the target shifted right"),
        Question("step", "one decoder step with attention"),
        Question("forcing", "a teacher-forced pass built from the step"),
    ],
    tests=[
        Test("inputs: batch of 4 targets", "inputs", 1.0,
             call="student.teacher_forcing_inputs(inputs['target_out'], inputs['go_id'])",
             inputs=_teacher_inputs,
             expected=lambda i: np.concatenate([np.full((4, 1), i["go_id"]), i["target_out"][:, :-1]], axis=1),
             compare=exact()),
        Test("step: logits", "step", 1.0, call=STEP_CALL, inputs=_decoder_inputs(3, 5),
             expected=_expected_step, compare=_part(0, "logits"), timeout=60),
        Test("step: new state s_t", "step", 1.0, call=STEP_CALL, inputs=_decoder_inputs(2, 4),
             expected=_expected_step, compare=_part(1, "new state"), timeout=60),
        Test("step: attention weights over a padded batch, keys projected once", "step", 1.0,
             call=COUNTING_STEP_CALL, inputs=_decoder_inputs(4, 6), expected=_expected_step,
             compare=_weights_with_keys_projected_once, timeout=60),
        Test("forcing: logits of 5 steps", "forcing", 1.0, call=FORCING_CALL, inputs=_decoder_inputs(3, 4, steps=5),
             expected=_expected_forcing, compare=_part(0, "logits"), substitute=("attention_decoder_step",), timeout=60),
        Test("forcing: alignments of 3 steps over a padded batch", "forcing", 1.0, call=FORCING_CALL,
             inputs=_decoder_inputs(2, 6, steps=3), expected=_expected_forcing, compare=_part(1, "alignments"),
             substitute=("attention_decoder_step",), timeout=60),
    ],
    kernel_setup=KERNEL_SETUP,
    references={"attention_decoder_step": attention_decoder_step},
    cell_timeout=60,  # graded cells take under 4 s in the fast profile; training cells are skipped
    notebook_timeout=600,
    memory_mb=8192,
)
