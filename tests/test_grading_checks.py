"""Visible checks (course_lib/grading/checks.py) against the wrong answers reviewers found.

Each wrong answer below is one a visible check used to accept (or a right answer it
used to reject) while the hidden tests scored it differently. The right answers
come from the hidden tests' references, so a check is also shown to pass them.
"""

import importlib.util

import numpy as np
import pytest

from course_lib.grading import checks
from course_lib.grading.spec import REPOSITORY_ROOT


def _hidden(assignment_id):
    path = REPOSITORY_ROOT / "hidden_tests" / f"{assignment_id}.py"
    spec = importlib.util.spec_from_file_location(f"hidden_reference_{assignment_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


A1 = _hidden("A1")


# -- A1 part 2: the scores are checked on their own --------------------------------------


def scores_without_tanh(query, projected_keys, U_att, v_att):
    return (projected_keys + (query @ U_att.T)[:, None, :]) @ v_att


def test_attention_scores_check_does_not_depend_on_the_students_keys(capsys):
    checks.check_attention_scores(A1.attention_scores)  # no project_keys: a broken part 1 cannot matter
    assert capsys.readouterr().out.count("attention_scores: visible checks passed") == 1
    with pytest.raises(checks.CheckFailed, match="is the tanh missing"):
        checks.check_attention_scores(scores_without_tanh)


# -- A1 part 6: U_att and W_att swapped ---------------------------------------------------


def attend_with_swapped_matrices(decoder_states, values, mask, U_att, W_att, v_att):
    return A1.attend_over_steps(decoder_states, values, mask, W_att, U_att, v_att)


def test_attend_over_steps_check_catches_swapped_matrices():
    checks.check_attend_over_steps(A1.attend_over_steps)
    with pytest.raises(checks.CheckFailed, match="U_att acts on the decoder states s_{t-1} and W_att on the values h_j"):
        checks.check_attend_over_steps(attend_with_swapped_matrices)


# -- A1 part 7: every shape is checked -----------------------------------------------------


def shapes_with(key, wrong):
    def attention_shapes(batch, src_len, query_dim, value_dim, units):
        shapes = A1.attention_shapes(batch, src_len, query_dim, value_dim, units)
        shapes[key] = wrong(batch=batch, src_len=src_len, query_dim=query_dim, value_dim=value_dim, units=units)
        return shapes

    return attention_shapes


WRONG_SHAPES = {
    "scores": lambda **s: (s["src_len"],),
    "weights": lambda **s: (s["batch"], s["units"]),
    "context": lambda **s: (s["batch"], s["units"]),
    "U_att": lambda **s: (s["query_dim"], s["query_dim"]),
    "W_att": lambda **s: (s["value_dim"], s["units"]),
    "v_att": lambda **s: (128,),  # typed in: right for the first sizes only
}


def test_attention_shapes_check_passes_the_right_shapes(capsys):
    checks.check_attention_shapes(A1.attention_shapes)
    assert "attention_shapes: visible checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("key", list(WRONG_SHAPES))
def test_attention_shapes_check_catches_every_wrong_entry(key):
    with pytest.raises(checks.CheckFailed) as failure:
        checks.check_attention_shapes(shapes_with(key, WRONG_SHAPES[key]))
    message = str(failure.value)
    assert f"gives {key} the wrong shape" in message, message
    assert checks._SHAPE_HINTS[key] in message


# -- A2: the library's own step and teacher-forced pass are locked -------------------------


def attention_decoder_step(decoder, previous_tokens, state, memory):
    from keras import ops

    embedded = decoder.embedding(previous_tokens)
    context, weights = decoder.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
    new_state, _ = decoder.cell(ops.concatenate([embedded, context], axis=-1), state)
    return decoder.output_layer(new_state), new_state, weights


def teacher_forced_decode(decoder, target_inputs, memory, initial_state):
    from keras import ops

    state, all_logits, all_weights = initial_state, [], []
    for step in range(target_inputs.shape[1]):
        logits, state, weights = attention_decoder_step(decoder, target_inputs[:, step], state, memory)
        all_logits.append(logits)
        all_weights.append(weights)
    return ops.stack(all_logits, axis=1), ops.stack(all_weights, axis=1)


def step_calling_the_library(decoder, previous_tokens, state, memory):
    return decoder.step(previous_tokens, state, memory)


def forcing_calling_the_library(decoder, target_inputs, memory, initial_state):
    return decoder(target_inputs, memory["values"], initial_state, source_mask=memory["mask"])


def forcing_looping_over_the_library_step(decoder, target_inputs, memory, initial_state):
    from keras import ops

    state, all_logits, all_weights = initial_state, [], []
    for step in range(target_inputs.shape[1]):
        logits, state, weights = decoder.step(target_inputs[:, step], state, memory)
        all_logits.append(logits)
        all_weights.append(weights)
    return ops.stack(all_logits, axis=1), ops.stack(all_weights, axis=1)


def test_a2_checks_pass_a_step_and_a_loop_written_from_the_sub_layers(capsys):
    checks.check_attention_decoder_step(attention_decoder_step)
    checks.check_teacher_forced_decode(teacher_forced_decode)
    out = capsys.readouterr().out
    assert "attention_decoder_step: visible checks passed" in out and "teacher_forced_decode: visible checks passed" in out


@pytest.mark.parametrize(
    "check, answer, called",
    [
        (checks.check_attention_decoder_step, step_calling_the_library, "decoder.step(...)"),
        (checks.check_teacher_forced_decode, forcing_calling_the_library, "decoder(...)"),
        (checks.check_teacher_forced_decode, forcing_looping_over_the_library_step, "decoder.step(...)"),
    ],
    ids=["step-calls-decoder.step", "forcing-calls-decoder", "forcing-loops-over-decoder.step"],
)
def test_a2_checks_reject_calling_the_library(check, answer, called):
    with pytest.raises(checks.CheckFailed) as failure:
        check(answer)
    message = str(failure.value)
    assert f"calls {called}" in message and "The exercise is to write it yourself" in message, message
    assert failure.value.__context__ is None  # a clean message, not the error raised inside Keras


def test_a2_hidden_tests_lock_every_method_the_checks_lock():
    hidden = _hidden("A2")
    inputs = hidden._decoder_inputs(2, 3, steps=2)(np.random.default_rng(0))
    decoder = hidden._helpers["_grader_decoder"](inputs, locked=True)
    for attribute in checks.A2_LOCKED_METHODS:
        with pytest.raises(RuntimeError, match="not available here"):
            getattr(decoder, attribute)(inputs["tokens"], inputs["state"], {})
    unlocked = hidden._helpers["_grader_decoder"](inputs)
    memory = hidden._helpers["_grader_memory"](unlocked, inputs)
    assert unlocked.step(inputs["tokens"], inputs["state"], memory)[0].shape == (2, hidden.VOCAB)
