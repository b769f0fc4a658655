"""Visible checks (course_lib/grading/checks/) against the wrong answers reviewers found.

Each wrong answer below is one a visible check used to accept (or a right answer it
used to reject) while the hidden tests scored it differently. The right answers
come from the hidden tests' references, so a check is also shown to pass them.
"""

import importlib.util
import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from course_lib.grading import checks
from course_lib.grading.spec import REPOSITORY_ROOT
from private_copy import skip_module_unless_private_copy

skip_module_unless_private_copy()  # the hidden tests are read below, at import


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


def test_attention_shapes_check_takes_lists_as_the_grader_does(capsys):
    """[units, query_dim] scored full marks in the hidden tests but failed the visible check."""
    def as_lists(**sizes):
        return {key: list(shape) for key, shape in A1.attention_shapes(**sizes).items()}

    checks.check_attention_shapes(as_lists)
    assert "attention_shapes: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match=r"should be a tuple of ints. Received: '\(4, 10\)'"):
        checks.check_attention_shapes(lambda **sizes: {**as_lists(**sizes), "U_att": "(4, 10)"})


@pytest.mark.parametrize("key", list(WRONG_SHAPES))
def test_attention_shapes_check_catches_every_wrong_entry(key):
    with pytest.raises(checks.CheckFailed) as failure:
        checks.check_attention_shapes(shapes_with(key, WRONG_SHAPES[key]))
    message = str(failure.value)
    assert f"gives {key} the wrong shape" in message, message
    assert checks.a1_attention._SHAPE_HINTS[key] in message


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


def test_a2_hidden_tests_give_only_the_sub_layers_and_no_way_back_to_the_library(monkeypatch):
    # A review brought the library's methods back with `decoder.__dict__.pop("step")` and disarmed the lock
    # and the key counter by patching `checks` in the kernel, where the hidden tests imported them from.
    hidden = _hidden("A2")
    assert "course_lib.grading" not in hidden.KERNEL_SETUP  # sent with the test, not imported in the kernel
    locked = dict(checks.A2_LOCKED_METHODS)
    monkeypatch.setattr(checks.a2_decoder, "A2_LOCKED_METHODS", {})  # as a submission patches its kernel's copy
    inputs = hidden._decoder_inputs(2, 3, steps=2)(np.random.default_rng(0))
    (decoder, tokens, state, memory), record = hidden._helpers["_grader_step_inputs"](inputs)
    for attribute in locked:
        decoder.__dict__.pop(attribute, None)
    for call in (lambda: decoder.step(tokens, state, memory), lambda: decoder(tokens, memory["values"], state),
                 lambda: decoder._recur(tokens, state, memory), lambda: decoder.call(tokens)):
        with pytest.raises(RuntimeError, match="not available here"):
            call()
    assert record["called"] == ["decoder.step(...)", "decoder(...)", "decoder._recur(...)", "decoder.call(...)"]
    decoder.attention.__dict__.pop("project_keys", None)
    decoder.attention(state, memory["values"], mask=memory["mask"])
    decoder.attention.project_keys(memory["values"])
    decoder.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
    assert record["project_keys"] == 2
    unlocked = hidden._helpers["_grader_decoder"](inputs)
    assert unlocked.step(tokens, state, hidden._helpers["_grader_memory"](unlocked, inputs))[0].shape == (2, hidden.VOCAB)


# -- A student's typical slips (second review): visible checks and hidden tests agree ------


def _hidden_verdict(assignment_id, test_name, **functions):
    """Runs one hidden test in this process against `functions`, as the grader would compare it."""
    from types import SimpleNamespace

    assignment = _hidden(assignment_id).ASSIGNMENT
    test = next(t for t in assignment.tests if t.name == test_name)
    inputs = test.inputs(np.random.default_rng(test.seed(assignment_id)))
    namespace = {"np": np}
    exec(assignment.kernel_setup, namespace)  # noqa: S102  (the `_grader_*` helpers a call may use)
    namespace.update({"student": SimpleNamespace(**functions), "inputs": inputs})
    got = eval(test.call, namespace)  # noqa: S307
    return test.judge(got, test.expected(inputs), inputs)


def unstable_softmax(scores):
    exponentials = np.exp(scores)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def test_a1_hidden_softmax_test_needs_the_maximum_subtracted():
    with np.errstate(over="ignore", invalid="ignore"):
        assert not _hidden_verdict("A1", "softmax: 3-D scores with large values", softmax=unstable_softmax)[0]
    assert _hidden_verdict("A1", "softmax: 3-D scores with large values", softmax=A1.softmax)[0]


def context_without_the_sum(weights, values):
    """The slip: each value scaled by its weight, the positions laid side by side instead of summed."""
    return (weights[..., None] * values).reshape(len(values), -1)  # (batch, src_len * value_dim)


def test_a1_every_hidden_context_test_needs_the_sum_over_positions():
    for name in ("context: random weights", "context: padded positions (weight 0), wide values"):
        assert not _hidden_verdict("A1", name, context_vector=context_without_the_sum)[0], name
        assert _hidden_verdict("A1", name, context_vector=A1.context_vector)[0], name


def keys_without_transpose(values, W_att):
    return values @ W_att


def test_a1_matrices_that_do_not_fit_get_a_hint_not_a_bare_numpy_error():
    with pytest.raises(checks.CheckFailed, match=r"keys_without_transpose raised ValueError .* W_att h_j multiplies"):
        checks.check_project_keys(keys_without_transpose)


A3 = _hidden("A3")


@pytest.mark.parametrize("slip", [lambda c, r, k: c[: k + 1], lambda c, r, k: c[k - 1 : k]], ids=["k+1", "only-k"])
def test_a3_hidden_top_k_test_catches_off_by_one(slip):
    def top_k_accuracy(candidates, references, k):
        return float(np.mean([any(c in refs for c in slip(cands, refs, k)) for cands, refs in zip(candidates, references)]))

    assert not _hidden_verdict("A3", "top_k: k = 2", top_k_accuracy=top_k_accuracy)[0]
    assert _hidden_verdict("A3", "top_k: k = 2", top_k_accuracy=A3.top_k_accuracy)[0]


def beam_step_with_parents_and_tokens_swapped(log_probs, scores, width):
    totals = (scores[:, None] + log_probs).ravel()
    best = np.argsort(totals)[::-1][:width]
    return totals[best], best % log_probs.shape[0], best // log_probs.shape[0]


def test_a3_beam_check_says_the_scores_are_right_when_only_the_indices_are_wrong(capsys):
    checks.check_beam_step(A3.beam_step)
    assert "beam_step: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match=r"the scores are right, but \(parents, tokens\) do not point"):
        checks.check_beam_step(beam_step_with_parents_and_tokens_swapped)


def accuracy_by_substring(predictions, references):
    """The slip: `p in spelling` also counts a word with its last sign dropped."""
    return float(np.mean([any(p in spelling for spelling in refs) for p, refs in zip(predictions, references)]))


def top_k_by_substring(candidates, references, k):
    return float(np.mean([any(c in s for c in cands[:k] for s in refs) for cands, refs in zip(candidates, references)]))


def top_k_first_spelling_only(candidates, references, k):
    return float(np.mean([refs[0] in cands[:k] for cands, refs in zip(candidates, references)]))


@pytest.mark.parametrize(
    "name, slip, check, hidden_test",
    [
        ("word_accuracy", accuracy_by_substring, checks.check_word_accuracy, "accuracy: 10 words, some with two spellings"),
        ("top_k_accuracy", top_k_by_substring, checks.check_top_k_accuracy, "top_k: k = 2"),
        ("top_k_accuracy", top_k_first_spelling_only, checks.check_top_k_accuracy, "top_k: k = 2"),
    ],
    ids=["accuracy-substring", "top-k-substring", "top-k-first-spelling"],
)
def test_a3_a_word_must_equal_an_accepted_spelling(name, slip, check, hidden_test, capsys):
    check(getattr(A3, name))
    assert f"{name}: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match="accepted spelling"):
        check(slip)
    assert not _hidden_verdict("A3", hidden_test, **{name: slip})[0]
    assert _hidden_verdict("A3", hidden_test, **{name: getattr(A3, name)})[0]


def beam_step_with_true_division(log_probs, scores, width):
    totals = (scores[:, None] + log_probs).ravel()
    best = np.argsort(-totals, kind="stable")[:width]
    return totals[best], best / log_probs.shape[1], best % log_probs.shape[1]


def test_a3_beam_check_refuses_fractional_parents():
    with pytest.raises(checks.CheckFailed, match=r"parents should be whole numbers .* use // "):
        checks.check_beam_step(beam_step_with_true_division)


A4 = _hidden("A4")


def locations_without_tanh(state, locations, U_att, W_att, v_att):
    scores = (locations @ W_att.T + (state @ U_att.T)[:, None, :]) @ v_att  # (batch, L)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.einsum("bl,blc->bc", weights, locations), weights


def test_a4_missing_tanh_is_named():
    with pytest.raises(checks.CheckFailed, match="inside the tanh"):
        checks.check_attention_over_locations(locations_without_tanh)


def locations_with_weights_kept_as_a_column(state, locations, U_att, W_att, v_att):
    context, weights = A4.attention_over_locations(state, locations, U_att, W_att, v_att)
    return context, weights[..., None]  # (batch, L, 1): right values, wrong shape


def attended_cell_with_true_division(weights, height, width):
    j = np.argmax(weights)
    return j / width, j % width


def test_a4_checks_name_a_column_of_weights_and_a_fractional_row():
    checks.check_attention_over_locations(A4.attention_over_locations)
    checks.check_attended_cell(A4.attended_cell)
    with pytest.raises(checks.CheckFailed, match=r"weights \(batch, L\) has shape \(2, 9, 1\), expected \(2, 9\)"):
        checks.check_attention_over_locations(locations_with_weights_kept_as_a_column)
    with pytest.raises(checks.CheckFailed, match=r"attended_cell should be whole numbers .* use // "):
        checks.check_attended_cell(attended_cell_with_true_division)


A5 = _hidden("A5")


def pool_without(part):
    def attention_pool(states, mask, W, b, u):
        if part == "b":
            return A5.attention_pool(states, mask, W, np.zeros_like(b), u)
        hidden = states @ W.T + b  # the tanh forgotten
        scores = np.where(mask, hidden @ u, -1e9)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True)) * mask
        totals = weights.sum(axis=-1, keepdims=True)
        weights = np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), 0.0)
        return np.einsum("...t,...td->...d", weights, states), weights

    return attention_pool


@pytest.mark.parametrize("part", ["b", "tanh"])
def test_a5_pool_check_catches_a_missing_b_or_tanh_and_so_do_the_hidden_tests(part, capsys):
    checks.check_attention_pool(A5.attention_pool)
    assert "attention_pool: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match="do not change when b changes"):
        checks.check_attention_pool(pool_without(part))
    assert not _hidden_verdict("A5", "pool: weights over a padded batch", attention_pool=pool_without(part))[0]
    # Its padding row is right, but the padding test judges the other rows too.
    ok, reason = _hidden_verdict("A5", "pool: a row of padding gives zeros, not NaN", attention_pool=pool_without(part))
    assert not ok and "of the other rows" in reason, reason


def test_a5_padding_test_gives_nothing_for_zeros_everywhere():
    # A review: returning zeros earned the padding point, which judged the padding row alone.
    def zeros(states, mask, W, b, u):
        return np.zeros(np.shape(states)[:-2] + np.shape(states)[-1:]), np.zeros(np.shape(mask))

    ok, reason = _hidden_verdict("A5", "pool: a row of padding gives zeros, not NaN", attention_pool=zeros)
    assert not ok and reason.startswith("pooled of the other rows: values differ"), reason
    assert _hidden_verdict("A5", "pool: a row of padding gives zeros, not NaN", attention_pool=A5.attention_pool)[0]


def test_a5_padding_test_still_fails_nan_on_a_padding_row():
    def nan_on_padding(states, mask, W, b, u):
        pooled, weights = A5.attention_pool(states, mask, W, b, u)
        weights = np.where(np.asarray(mask).any(axis=-1, keepdims=True), weights, np.nan)
        return pooled, weights

    ok, reason = _hidden_verdict("A5", "pool: a row of padding gives zeros, not NaN", attention_pool=nan_on_padding)
    assert not ok and reason == "weights of the padding row: contains NaN or infinity"


def test_a5_class_probabilities_check_catches_a_missing_b(capsys):
    checks.check_class_probabilities(A5.class_probabilities)
    assert "class_probabilities: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match="softmax\\(b\\) for every document: is b missing"):
        checks.check_class_probabilities(lambda document, V, b: A5.class_probabilities(document, V, 0 * b))


@pytest.mark.parametrize(
    "value, kind, accepted",
    [(98432.0, "int", True), (98432.5, "int", False), ("98432", "int", False), (True, "int", False),
     (["V", "b"], "set", True), ({"V", "b"}, "set", True), ("Vb", "set", False),
     ([12, 4], "shape", True), ("0.69", "number", False), (np.float32(0.69), "number", True),
     # 0-d arrays and tensors hold one number (a review found them refused by one side and taken by the other)
     (np.asarray(98432), "int", True), ("tensor:98432", "int", True), (np.asarray(True), "int", False),
     (np.asarray(0.69), "number", True), ("tensor:0.69", "number", True), (np.asarray("0.69"), "number", False)],
)
def test_quiz_answer_forms_are_those_the_grader_takes(value, kind, accepted):
    from course_lib.grading.spec import allclose, exact

    if isinstance(value, str) and value.startswith("tensor:"):
        import keras

        value = keras.ops.convert_to_tensor(float(value[7:]) if "." in value else int(value[7:]))
    if accepted:
        checks.check_answer_type(value, kind, "answer")
    else:
        with pytest.raises(checks.CheckFailed, match="answer should be"):
            checks.check_answer_type(value, kind, "answer")
    # The grader's comparison for that kind of answer agrees.
    if kind == "int":
        assert exact(int)(value, 1 if np.asarray(value).dtype == bool else 98432, {})[0] == accepted
    elif kind == "set":
        assert exact(set)(value, set(value) if accepted else {"V", "b"}, {})[0] == accepted
    elif kind == "number":
        assert allclose()(value, 0.69, {})[0] == accepted


# -- Third review (an instructor's wrong submissions): each slip below used to pass ------


def softmax_minus_global_maximum(scores):
    """The slip: the maximum of the whole array is subtracted, not each row's own."""
    exponentials = np.exp(scores - np.max(scores))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def test_a1_hidden_softmax_test_needs_each_rows_own_maximum():
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ok, reason = _hidden_verdict("A1", "softmax: 3-D scores with large values", softmax=softmax_minus_global_maximum)
    assert not ok, reason
    assert _hidden_verdict("A1", "softmax: 3-D scores with large values", softmax=A1.softmax)[0]


def shapes_in_keras_orientation(batch, src_len, query_dim, value_dim, units):
    shapes = A1.attention_shapes(batch, src_len, query_dim, value_dim, units)
    return {**shapes, "U_att": (query_dim, units), "W_att": (value_dim, units)}


def test_a1_both_hidden_shape_tests_catch_transposed_matrices():
    names = [t.name for t in A1.ASSIGNMENT.tests if t.question == "shapes"]
    assert len(names) == 2
    for name in names:
        assert not _hidden_verdict("A1", name, attention_shapes=shapes_in_keras_orientation)[0], name
        assert _hidden_verdict("A1", name, attention_shapes=A1.attention_shapes)[0], name


def attend_with_the_previous_row(decoder_states, values, mask, U_att, W_att, v_att):
    """The slip: step t attends with row t - 1 of the block (the block already holds s_{t-1})."""
    return A1.attend_over_steps(np.roll(decoder_states, 1, axis=1), values, mask, U_att, W_att, v_att)


def test_a1_steps_check_catches_a_shifted_query():
    with pytest.raises(checks.CheckFailed, match=r"changed the weights of steps \[2\], expected step 1 alone"):
        checks.check_attend_over_steps(attend_with_the_previous_row)


def inputs_with_a_fixed_go(target_out, go_id=1):
    from course_lib.data import reversal

    target_out = np.asarray(target_out)
    return np.concatenate([np.full((len(target_out), 1), reversal.GO), target_out[:, :-1]], axis=1)


def test_a2_go_id_must_be_used_by_check_and_hidden_test():
    A2 = _hidden("A2")
    with pytest.raises(checks.CheckFailed, match="use the go_id argument"):
        checks.check_teacher_forcing_inputs(inputs_with_a_fixed_go)
    name = "inputs: batch of 4 targets"
    assert not _hidden_verdict("A2", name, teacher_forcing_inputs=inputs_with_a_fixed_go)[0]
    right = lambda target_out, go_id: np.concatenate(  # noqa: E731
        [np.full((len(target_out), 1), go_id), np.asarray(target_out)[:, :-1]], axis=1)
    assert _hidden_verdict("A2", name, teacher_forcing_inputs=right)[0]
    assert A2.ASSIGNMENT.tests[0].name == name


def _loop_in_a_notebook(step_lines, **names):
    """A student's `teacher_forced_decode`, defined as a notebook cell defines it: its globals are `ops` and
    `names` only (the check looks there for the student's `attention_decoder_step`). `step_lines` run at
    every step, from `state = initial_state`, and must set `logits` and `weights`."""
    from keras import ops

    source = (
        "def teacher_forced_decode(decoder, target_inputs, memory, initial_state):\n"
        "    state, all_logits, all_weights = initial_state, [], []\n"
        "    for step in range(target_inputs.shape[1]):\n"
        + "".join(f"        {line}\n" for line in step_lines)
        + "        all_logits.append(logits)\n"
        "        all_weights.append(weights)\n"
        "    return ops.stack(all_logits, axis=1), ops.stack(all_weights, axis=1)\n"
    )
    namespace = {"ops": ops, **names}
    exec(source, namespace)
    return namespace["teacher_forced_decode"]


def test_a2_loop_check_blames_the_step_when_the_step_is_wrong():
    """A right loop over a wrong step: the message sends the student back to part 2."""
    from keras import ops

    def attention_decoder_step(decoder, previous_tokens, state, memory):  # context first: the wrong order
        embedded = decoder.embedding(previous_tokens)
        context, weights = decoder.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
        new_state, _ = decoder.cell(ops.concatenate([context, embedded], axis=-1), state)
        return decoder.output_layer(new_state), new_state, weights

    # the student's loop, defined where it finds the student's step
    teacher_forced_decode = _loop_in_a_notebook(
        ["logits, state, weights = attention_decoder_step(decoder, target_inputs[:, step], state, memory)"],
        attention_decoder_step=attention_decoder_step,
    )
    with pytest.raises(checks.CheckFailed, match="because your attention_decoder_step does: fix part 2 first"):
        checks.check_teacher_forced_decode(teacher_forced_decode)


def test_a2_loop_check_blames_the_loop_when_the_step_is_right():
    from keras import ops

    def forcing_without_carrying_the_state(decoder, target_inputs, memory, initial_state):
        all_logits, all_weights = [], []
        for step in range(target_inputs.shape[1]):
            logits, _, weights = attention_decoder_step(decoder, target_inputs[:, step], initial_state, memory)
            all_logits.append(logits)
            all_weights.append(weights)
        return ops.stack(all_logits, axis=1), ops.stack(all_weights, axis=1)

    with pytest.raises(checks.CheckFailed, match="carry the state from one step to the next"):
        checks.check_teacher_forced_decode(forcing_without_carrying_the_state)


def test_a2_loop_check_blames_the_loop_when_the_notebook_has_no_step_function():
    """A loop written without `attention_decoder_step` (nothing to blame in part 2) that never carries the state."""
    teacher_forced_decode = _loop_in_a_notebook([
        "embedded = decoder.embedding(target_inputs[:, step])",
        "context, weights = decoder.attention(initial_state, memory['values'], mask=memory['mask'], "
        "projected_keys=memory['keys'])",
        "state, _ = decoder.cell(ops.concatenate([embedded, context], axis=-1), initial_state)",
        "logits = decoder.output_layer(state)",
    ])
    with pytest.raises(checks.CheckFailed, match="carry the state from one step to the next"):
        checks.check_teacher_forced_decode(teacher_forced_decode)


def test_a2_loop_check_compares_the_alignments_not_only_their_shape():
    from keras import ops

    def forcing_with_steps_reversed(decoder, target_inputs, memory, initial_state):
        logits, alignments = teacher_forced_decode(decoder, target_inputs, memory, initial_state)
        return logits, ops.flip(alignments, axis=1)  # right logits, each row a step's weights, wrong order

    with pytest.raises(checks.CheckFailed, match="the logits are right but the alignments differ"):
        checks.check_teacher_forced_decode(forcing_with_steps_reversed)


def unstable_class_probabilities(document, V, b):
    exponentials = np.exp(document @ V.T + b)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def test_a5_class_softmax_must_be_stable_for_check_and_hidden_test():
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(checks.CheckFailed, match="NaN or infinity"):
            checks.check_class_probabilities(unstable_class_probabilities)
        name = "classify: large logits (a stable softmax)"
        assert not _hidden_verdict("A5", name, class_probabilities=unstable_class_probabilities)[0]
    assert _hidden_verdict("A5", name, class_probabilities=A5.class_probabilities)[0]
    # the ordinary test still passes the slip: only one half-point depends on stability
    assert _hidden_verdict("A5", "classify: 5 classes", class_probabilities=unstable_class_probabilities)[0]


# -- A1 part 6: the keys are projected once (second review, 2 Dec 2026) --------------------------


def _keys_every_step():
    """A right answer that projects the keys again at every step, defined beside the reference parts
    as a notebook would define it beside the student's own."""
    namespace = {name: getattr(A1, name) for name in ("project_keys", "attention_scores", "apply_mask",
                                                      "softmax", "context_vector")}
    namespace["np"] = np
    exec(  # noqa: S102
        "def attend_over_steps(decoder_states, values, mask, U_att, W_att, v_att):\n"
        "    contexts, all_weights = [], []\n"
        "    for step in range(decoder_states.shape[1]):\n"
        "        keys = project_keys(values, W_att)\n"
        "        weights = softmax(apply_mask(attention_scores(decoder_states[:, step], keys, U_att, v_att), mask))\n"
        "        contexts.append(context_vector(weights, values))\n"
        "        all_weights.append(weights)\n"
        "    return np.stack(contexts, axis=1), np.stack(all_weights, axis=1)\n",
        namespace,
    )
    return namespace["attend_over_steps"]


def test_attend_over_steps_check_counts_the_key_projections(capsys):
    checks.check_attend_over_steps(A1.attend_over_steps)  # the reference projects once
    assert "attend_over_steps: visible checks passed" in capsys.readouterr().out
    with pytest.raises(checks.CheckFailed, match="called project_keys 3 time"):
        checks.check_attend_over_steps(_keys_every_step())
    assert A1.project_keys.__name__ == "project_keys"  # the counter was taken out again


def test_a1_hidden_steps_test_counts_the_calls_of_project_keys():
    assignment = _hidden("A1").ASSIGNMENT
    test = next(t for t in assignment.tests if t.question == "steps")
    inputs = test.inputs(np.random.default_rng(test.seed("A1")))
    expected = test.expected(inputs)
    assert test.judge(expected, expected, inputs, {"project_keys": 1}) == (True, "")
    passed, reason = test.judge(expected, expected, inputs, {"project_keys": 5})
    assert not passed and "`project_keys` was called 5 time(s) instead of 1" in reason


@pytest.mark.parametrize("compare", ["allclose", "exact"])
def test_a_function_that_returns_none_is_told_a_return_may_be_missing(compare):
    from course_lib.grading.spec import allclose, exact

    judge = allclose() if compare == "allclose" else exact(int)
    passed, reason = judge(None, np.ones((4, 7)) if compare == "allclose" else 98432, {})
    assert not passed and "returned None (is a `return` missing?)" in reason


# -- wrong answers a student review found passing (or wrongly explained), 2 Dec 2026 ----------


def softmax_with_one_maximum(scores):
    """The slip: one maximum for the whole array, so a row far below it underflows to 0 / 0."""
    exponentials = np.exp(scores - np.max(scores))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def test_softmax_check_needs_each_rows_own_maximum():
    with np.errstate(invalid="ignore"), pytest.raises(checks.CheckFailed, match="each row's own maximum"):
        checks.check_softmax(softmax_with_one_maximum)
    checks.check_softmax(A1.softmax)


def scores_with_the_tanh_outside(query, projected_keys, U_att, v_att):
    return np.tanh((projected_keys + (query @ U_att.T)[:, None, :]) @ v_att)


def scores_with_a_sigmoid(query, projected_keys, U_att, v_att):
    return (1.0 / (1.0 + np.exp(-(projected_keys + (query @ U_att.T)[:, None, :])))) @ v_att


def scores_without_the_positions_axis(query, projected_keys, U_att, v_att):
    return np.tanh(projected_keys + query @ U_att.T) @ v_att


@pytest.mark.parametrize("wrong", [scores_with_the_tanh_outside, scores_with_a_sigmoid])
def test_scores_check_knows_where_the_tanh_goes(wrong):
    with pytest.raises(checks.CheckFailed, match="the tanh acts on the sum of the projections"):
        checks.check_attention_scores(wrong)


def test_a_sum_that_does_not_broadcast_gets_the_broadcast_hint():
    with pytest.raises(checks.CheckFailed) as failure:
        checks.check_attention_scores(scores_without_the_positions_axis)
    assert checks.BROADCAST_HINT in str(failure.value) and "U_att, whose second axis" not in str(failure.value)


def test_an_inverted_mask_is_called_inverted():
    with pytest.raises(checks.CheckFailed, match="the mask is inverted"):
        checks.check_apply_mask(lambda scores, mask: np.where(~np.asarray(mask), scores, checks.NEGATIVE_SCORE))
    weights = np.array([[0.0, 0.0, 1.0]])
    with pytest.raises(checks.CheckFailed, match="the mask is inverted"):
        checks.check_weights(weights, mask=np.array([[True, True, False]]))


def attend_with_inline_keys(decoder_states, values, mask, U_att, W_att, v_att):
    """Projects once, but by hand: the task says to use project_keys."""
    keys = values @ W_att.T
    steps = [A1.attention_scores(decoder_states[:, t], keys, U_att, v_att) for t in range(decoder_states.shape[1])]
    weights = np.stack([A1.softmax(A1.apply_mask(s, mask)) for s in steps], axis=1)
    return np.einsum("bts,bsd->btd", weights, values), weights


def test_keys_made_without_project_keys_are_told_to_use_it():
    namespace = {"project_keys": A1.project_keys}
    attend = type(attend_with_inline_keys)(attend_with_inline_keys.__code__, {**globals(), **namespace})
    with pytest.raises(checks.CheckFailed, match="never called your project_keys"):
        checks.check_attend_over_steps(attend)
    test = next(t for t in A1.ASSIGNMENT.tests if t.question == "steps")
    inputs = test.inputs(np.random.default_rng(test.seed("A1")))
    expected = test.expected(inputs)
    passed, reason = test.judge(expected, expected, inputs, {})
    assert not passed and "`project_keys` was never called" in reason


def test_tanh_outside_is_caught_in_a4_and_a5():
    A4, A5 = _hidden("A4"), _hidden("A5")

    def locations_tanh_outside(state, locations, U_att, W_att, v_att):
        scores = np.tanh((locations @ W_att.T + (state @ U_att.T)[:, None, :]) @ v_att)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        return np.einsum("bl,blc->bc", weights, locations), weights

    def pool_tanh_outside(states, mask, W, b, u):
        scores = np.where(mask, np.tanh((states @ W.T + b) @ u), -np.inf)
        top = np.where(mask.any(-1, keepdims=True), scores.max(-1, keepdims=True), 0.0)
        weights = np.where(mask, np.exp(scores - top), 0.0)
        weights /= np.maximum(weights.sum(-1, keepdims=True), 1e-30)
        return np.einsum("bt,btd->bd", weights, states), weights

    checks.check_attention_over_locations(A4.attention_over_locations)
    checks.check_attention_pool(A5.attention_pool)
    with pytest.raises(checks.CheckFailed, match="the tanh acts on the sum"):
        checks.check_attention_over_locations(locations_tanh_outside)
    with pytest.raises(checks.CheckFailed, match="the tanh acts on the sum"):
        checks.check_attention_pool(pool_tanh_outside)


def test_integer_division_in_the_length_normalisation_is_caught():
    checks.check_length_normalized_score(_hidden("A3").length_normalized_score)
    with pytest.raises(checks.CheckFailed, match="not //"):
        checks.check_length_normalized_score(lambda log_prob, length, penalty: log_prob // length ** penalty)


def test_quiz_dict_answers_need_every_key_in_its_form():
    right = {"V": (20_000, 300), "c": (20_000,), "scores": (20_000,)}
    kinds = {"V": "shape", "c": "shape", "scores": "shape"}
    checks.check_answer_dict(right, kinds, "q1_shapes(...)")
    with pytest.raises(checks.CheckFailed, match="should have the keys"):
        checks.check_answer_dict({"V": (20_000, 300)}, kinds, "q1_shapes(...)")
    with pytest.raises(checks.CheckFailed, match=r"\['c'\] should be a tuple of ints"):
        checks.check_answer_dict({**right, "c": 20_000}, kinds, "q1_shapes(...)")
    with pytest.raises(checks.CheckFailed, match="should be a dict"):
        checks.check_answer_dict([(20_000, 300)], kinds, "q1_shapes(...)")


def test_a2_step_check_wants_the_memorys_keys_and_explains_sizes():
    from keras import ops

    def step_projecting_keys(decoder, previous_tokens, state, memory):
        embedded = decoder.embedding(previous_tokens)
        context, weights = decoder.attention(state, memory["values"], mask=memory["mask"])
        new_state, _ = decoder.cell(ops.concatenate([embedded, context], axis=-1), state)
        return decoder.output_layer(new_state), new_state, weights

    def step_concatenating_the_values(decoder, previous_tokens, state, memory):
        embedded = decoder.embedding(previous_tokens)
        _, weights = decoder.attention(state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"])
        flat = ops.reshape(memory["values"] * weights[..., None], (ops.shape(weights)[0], -1))
        new_state, _ = decoder.cell(ops.concatenate([embedded, flat], axis=-1), state)
        return decoder.output_layer(new_state), new_state, weights

    checks.check_attention_decoder_step(_hidden("A2").attention_decoder_step)
    with pytest.raises(checks.CheckFailed, match="projected the keys W_att h_j again"):
        checks.check_attention_decoder_step(step_projecting_keys)
    with pytest.raises(checks.CheckFailed) as failure:
        checks.check_attention_decoder_step(step_concatenating_the_values)
    message = str(failure.value)
    assert "4 + 6 = 10 numbers" in message and "\x1b[" not in message, message


def test_a2_hidden_weights_test_wants_the_memorys_keys():
    """The hidden test counts decoder.attention.project_keys during the student's step, in the kernel's helpers."""
    from types import SimpleNamespace

    from keras import ops

    A2 = _hidden("A2")

    def step_projecting_keys(decoder, previous_tokens, state, memory):
        embedded = decoder.embedding(previous_tokens)
        context, weights = decoder.attention(state, memory["values"], mask=memory["mask"])
        new_state, _ = decoder.cell(ops.concatenate([embedded, context], axis=-1), state)
        return decoder.output_layer(new_state), new_state, weights

    test = next(t for t in A2.ASSIGNMENT.tests if "keys projected once" in t.name)
    inputs = test.inputs(np.random.default_rng(test.seed("A2")))
    expected = test.expected(inputs)
    verdicts = {}
    for name, step in (("reference", A2.attention_decoder_step), ("projects again", step_projecting_keys)):
        got = eval(test.call, {**A2._helpers, "student": SimpleNamespace(attention_decoder_step=step),  # noqa: S307
                               "inputs": inputs})
        got = (tuple(np.asarray(part) for part in got[0]), got[1])
        verdicts[name] = test.judge(got, expected, inputs)
    assert verdicts["reference"] == (True, "")
    assert not verdicts["projects again"][0]
    assert "the keys W_att h_j were projected again inside the step" in verdicts["projects again"][1]


def test_quiz_matrices_written_in_the_keras_orientation_are_caught():
    checks.check_multiplies((128, 512), 512, "U_att")
    with pytest.raises(checks.CheckFailed, match=r"the way Keras stores kernels.*Received: \(512, 128\)"):
        checks.check_multiplies((512, 128), 512, "U_att")  # (inputs, outputs): the total count is still right
    with pytest.raises(checks.CheckFailed, match="should be a tuple of ints"):
        checks.check_multiplies(512, 512, "U_att")


@pytest.mark.parametrize(
    "slip", [lambda log_prob, length, penalty: log_prob / max(1, length * penalty),
             lambda log_prob, length, penalty: log_prob / (1 + (length - 1) * penalty)],
    ids=["times-penalty", "linear"],
)
def test_a3_length_normalisation_check_tries_a_fractional_penalty(slip):
    # Both slips are right at penalties 0 and 1, which were all the check used to try.
    with pytest.raises(checks.CheckFailed, match="raise the length to the penalty"):
        checks.check_length_normalized_score(slip)


def test_a4_map_check_uses_a_batch_of_two():
    checks.check_weights_to_map(_hidden("A4").weights_to_map)
    with pytest.raises(ValueError, match="cannot reshape"):  # written for one row of weights only
        checks.check_weights_to_map(lambda weights, height, width: np.asarray(weights).reshape(1, height, width))
    with pytest.raises(checks.CheckFailed, match="each row of weights is its own map"):
        checks.check_weights_to_map(lambda weights, height, width: np.broadcast_to(
            np.asarray(weights)[:1].reshape(1, height, width), (len(weights), height, width)))


def test_a5_sentence_check_compares_the_word_weights():
    A5 = _hidden("A5")

    def uniform_word_weights(word_states, word_mask, W, b, u):
        vectors, _ = A5.sentence_vectors(word_states, word_mask, W, b, u)
        mask = np.asarray(word_mask, float)
        return vectors, mask / np.maximum(mask.sum(-1, keepdims=True), 1.0)

    checks.check_sentence_vectors(A5.sentence_vectors, A5.attention_pool)
    with pytest.raises(checks.CheckFailed, match="word weights of document 1, sentence 1"):
        checks.check_sentence_vectors(uniform_word_weights, A5.attention_pool)


def test_a_dict_is_not_a_set_of_names_for_the_quiz_check_or_the_grader():
    # set({"V": ..., "b": ...}) is {"V", "b"}: a dict answer would pass as the set of its keys.
    from course_lib.grading.spec import exact

    answer = {"V": (20_000, 300), "b": (20_000,)}
    passed, reason = exact(set)(answer, {"V", "b"}, {})
    assert not passed and reason == "result: expected a collection, got a dict"
    with pytest.raises(checks.CheckFailed, match="answer should be a set of names"):
        checks.check_answer_type(answer, "set", "answer")


def test_the_grader_tells_a_half_percent_error_from_float32_rounding():
    # allclose's default tolerance is what separates a slip (a constant 0.5 % off) from float32 noise.
    from course_lib.grading.spec import allclose

    expected = np.linspace(0.1, 2.0, 20)
    assert allclose()(expected.astype(np.float32), expected, {})[0]
    passed, reason = allclose()(expected * 1.005, expected, {})
    assert not passed and reason == "result: values differ from the reference at 20 of 20 entries"


def test_a_hidden_test_worth_no_points_is_refused():
    from course_lib.grading.spec import Assignment, Question, Test

    with pytest.raises(ValueError, match="must be worth points. Received: points=0"):
        Assignment(id="AX", notebook="AX", questions=[Question("q")], tests=[Test("t", question="q", points=0, call="1")])


@pytest.mark.parametrize("value, kind, accepted", [
    ((np.int64(12), np.int32(4)), "shape", True),  # e.g. from an array's .shape or np.prod: the grader takes them
    ((12, True), "shape", False),
    (True, "number", False), (np.bool_(False), "number", False),
])
def test_quiz_forms_with_numpy_integers_and_bools(value, kind, accepted):
    from course_lib.grading.spec import exact

    if accepted:
        checks.check_answer_type(value, kind, "answer")
        assert exact(tuple)(value, (12, 4), {})[0]
    else:
        with pytest.raises(checks.CheckFailed, match="answer should be"):
            checks.check_answer_type(value, kind, "answer")


def test_quiz_checks_refuse_what_the_grader_would_mark_wrong_for_its_form():
    # The grader compares a dict answer whole (an extra key fails it), a set of names as strings, a choice
    # as one letter; the visible check must not pass those forms.
    kinds = {"V": "shape", "c": "shape"}
    with pytest.raises(checks.CheckFailed, match="should have the keys"):
        checks.check_answer_dict({"V": (2, 3), "c": (2,), "extra": (1,)}, kinds, "q1_shapes(...)")
    for value, kind in (([1, 2], "set"), ({"V", 3}, "set"), ("ab", "choice"), ("", "choice")):
        with pytest.raises(checks.CheckFailed, match="answer should be"):
            checks.check_answer_type(value, kind, "answer")
    checks.check_answer_type(" b ", "choice", "answer")  # white space around the letter is fine


def softmax_without_keepdims(scores):
    exponentials = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exponentials / exponentials.sum(axis=-1)  # (batch,): does not broadcast against (batch, positions)


def context_without_an_axis_for_dim(weights, values):
    return np.sum(weights * values, axis=1)


def test_broadcasting_mistakes_get_the_hint_of_their_own_part():
    """A softmax without keepdims or a weighted sum without weights[..., None] raised a bare NumPy error in its own
    check, and the step check then blamed the scores' addition."""
    with pytest.raises(checks.CheckFailed, match="softmax_without_keepdims raised ValueError") as failure:
        checks.check_softmax(softmax_without_keepdims)
    assert checks.KEEPDIMS_HINT in str(failure.value)
    with pytest.raises(checks.CheckFailed, match="context_without_an_axis_for_dim raised ValueError") as failure:
        checks.check_context_vector(context_without_an_axis_for_dim)
    assert checks.WEIGHTED_SUM_HINT in str(failure.value)

    def attend(decoder_states, values, mask, U_att, W_att, v_att):
        keys = A1.project_keys(values, W_att)
        steps = [A1.attention_scores(decoder_states[:, t], keys, U_att, v_att) for t in range(decoder_states.shape[1])]
        weights = np.stack([softmax_without_keepdims(A1.apply_mask(s, mask)) for s in steps], axis=1)
        return np.einsum("bts,bsd->btd", weights, values), weights

    inside = r"raised inside softmax_without_keepdims\(\), which attend calls"
    with pytest.raises(checks.CheckFailed, match=inside) as failure:
        checks.check_attend_over_steps(attend)
    assert checks.BROADCAST_HINT not in str(failure.value)


def test_weights_that_ignore_the_decoder_state_are_not_blamed_on_the_indexing():
    def scores_without_tanh(query, keys, U_att, v_att):
        return (keys + (query @ U_att.T)[:, None, :]) @ v_att  # the query's term is the same at every position

    def attend(decoder_states, values, mask, U_att, W_att, v_att):
        keys = A1.project_keys(values, W_att)
        steps = [scores_without_tanh(decoder_states[:, t], keys, U_att, v_att) for t in range(decoder_states.shape[1])]
        weights = np.stack([A1.softmax(A1.apply_mask(s, mask)) for s in steps], axis=1)
        return np.einsum("bts,bsd->btd", weights, values), weights

    with pytest.raises(checks.CheckFailed, match="the weights do not depend on the decoder state"):
        checks.check_attend_over_steps(attend)


def test_a5_pooling_without_an_axis_for_dim_gets_the_weighted_sum_hint():
    A5 = _hidden("A5")

    def pool(states, mask, W, b, u):
        _, weights = A5.attention_pool(states, mask, W, b, u)
        return np.sum(weights * states, axis=1), weights

    with pytest.raises(checks.CheckFailed, match="pool raised ValueError") as failure:
        checks.check_attention_pool(pool)
    assert checks.WEIGHTED_SUM_HINT in str(failure.value)


# -- A3: the library's own metrics are out of reach (review of 6 Dec 2026) ---------------------------------


def _notebook_functions(source):
    """Functions defined by `source` as a notebook cell defines them (their globals are the cell's namespace)."""
    namespace = {"np": np}
    exec(source, namespace)  # noqa: S102
    return namespace


A3_DELEGATIONS = {
    "imported under another name": (
        "from course_lib.metrics.transliteration import word_accuracy as library_accuracy\n"
        "def word_accuracy(predictions, references):\n"
        "    return library_accuracy(predictions, references)\n"),
    "imported inside the function": (
        "def word_accuracy(predictions, references):\n"
        "    from course_lib.metrics.transliteration import word_accuracy\n"
        "    return word_accuracy(predictions, references)\n"),
    "through the module": (
        "from course_lib.metrics import transliteration\n"
        "def word_accuracy(predictions, references):\n"
        "    return transliteration.word_accuracy(predictions, references)\n"),
    "kept before the module's function was replaced by a decoy": (
        "import course_lib.metrics.transliteration as metrics\n"
        "kept = metrics.word_accuracy\n"
        "metrics.word_accuracy = lambda predictions, references: 0.0\n"
        "def word_accuracy(predictions, references):\n"
        "    return kept(predictions, references)\n"),
    "bound straight to the graded name": (
        "from course_lib.metrics.transliteration import word_accuracy\n"),
    "a default argument": (
        "from course_lib.metrics import transliteration\n"
        "def word_accuracy(predictions, references, _implementation=transliteration.word_accuracy):\n"
        "    return _implementation(predictions, references)\n"),
    "a functools.partial kept in a list": (
        "import functools\n"
        "from course_lib.metrics import transliteration\n"
        "_kept = [functools.partial(transliteration.word_accuracy)]\n"
        "def word_accuracy(predictions, references):\n"
        "    return _kept[0](predictions, references)\n"),
    "through a helper, caught": (
        "from course_lib.metrics.transliteration import word_accuracy as library_accuracy\n"
        "def _score(predictions, references):\n"
        "    return [library_accuracy(predictions, references)]\n"
        "def word_accuracy(predictions, references):\n"
        "    try:\n"
        "        return _score(predictions, references)[0]\n"
        "    except Exception:\n"
        "        return 0.5\n"),
}


@pytest.mark.parametrize("how", list(A3_DELEGATIONS))
def test_a3_word_accuracy_handed_to_the_library_fails_the_check_and_the_hidden_test(how):
    from course_lib.metrics import transliteration

    original = transliteration.word_accuracy
    try:
        student = _notebook_functions(A3_DELEGATIONS[how])["word_accuracy"]
        _a3_check_and_hidden_test_refuse(student)
    finally:
        transliteration.word_accuracy = original  # (one case replaces it with a decoy)


def _a3_check_and_hidden_test_refuse(student):
    from course_lib.metrics import transliteration

    original = transliteration.word_accuracy
    with pytest.raises(checks.CheckFailed, match=r"calls course_lib\.metrics\.transliteration\.word_accuracy, the course's own version"):
        checks.check_word_accuracy(student)
    with pytest.raises(RuntimeError, match="would score zero"):
        _hidden_verdict("A3", "accuracy: 10 words, some with two spellings", word_accuracy=student)
    assert transliteration.word_accuracy is original  # put back after the call


def test_a3_top_k_and_distance_handed_to_the_library_fail_and_own_answers_pass(capsys):
    A3 = _hidden("A3")
    delegating = _notebook_functions(
        "from course_lib.metrics.transliteration import edit_distance as distance, top_k_accuracy\n"
        "def my_top_k(candidates, references, k):\n"
        "    return top_k_accuracy(candidates, references, k)\n"
        "def my_distance(a, b):\n"
        "    return distance(a, b)\n")
    with pytest.raises(checks.CheckFailed, match="calls course_lib.metrics.transliteration.top_k_accuracy"):
        checks.check_top_k_accuracy(delegating["my_top_k"])
    with pytest.raises(checks.CheckFailed, match="calls course_lib.metrics.transliteration.edit_distance"):
        checks.check_edit_distance(delegating["my_distance"])
    with pytest.raises(RuntimeError, match="calls course_lib.metrics.transliteration.top_k_accuracy"):
        _hidden_verdict("A3", "top_k: k = 2", top_k_accuracy=delegating["my_top_k"])
    with pytest.raises(RuntimeError, match="calls course_lib.metrics.transliteration.edit_distance"):
        _hidden_verdict("A3", "distance: Devanagari pairs, empty words, reversals", edit_distance=delegating["my_distance"])
    # answers of one's own, in a notebook that also imported the library (its import is not the offence)
    own = _notebook_functions(
        "from course_lib.metrics.transliteration import word_accuracy as library_accuracy\n"
        + "".join(inspect.getsource(getattr(A3, name)) for name in ("word_accuracy", "top_k_accuracy", "edit_distance")))
    checks.check_word_accuracy(own["word_accuracy"])
    checks.check_top_k_accuracy(own["top_k_accuracy"])
    checks.check_edit_distance(own["edit_distance"])
    for name, test in (("word_accuracy", "accuracy: 10 words, some with two spellings"), ("top_k_accuracy", "top_k: k = 2"),
                       ("edit_distance", "distance: Devanagari pairs, empty words, reversals")):
        assert _hidden_verdict("A3", test, **{name: own[name]})[0], name
    assert "edit_distance: visible checks passed" in capsys.readouterr().out


# The visible checks' own formulas answer A1's scores and softmax and A5's class softmax: locked the same way.
CHECKS_DELEGATIONS = [
    ("A1", "score: batch of 4, units differ from both state sizes", "attention_scores",
     "from course_lib.grading.checks.common import _additive_scores\n"
     "def attention_scores(query, keys, U_att, v_att):\n"
     "    return _additive_scores(query, keys, U_att, v_att)\n"),
    ("A1", "softmax: random scores 4x7", "softmax",
     "def softmax(scores):\n"
     "    from course_lib.grading import checks\n"
     "    return checks.common._softmax_rows(scores)\n"),
    ("A5", "classify: 5 classes", "class_probabilities",
     "from course_lib.grading.checks.common import _softmax_rows as stable\n"
     "def class_probabilities(document, V, b):\n"
     "    return stable(document @ V.T + b)\n"),
]


@pytest.mark.parametrize("assignment_id, test_name, name, source", CHECKS_DELEGATIONS,
                         ids=[case[2] for case in CHECKS_DELEGATIONS])
def test_answers_handed_to_the_checks_own_formulas_fail_the_hidden_test(assignment_id, test_name, name, source):
    from course_lib.grading.checks import common

    student = _notebook_functions(source)[name]
    assert _hidden_verdict(assignment_id, test_name, **{name: _hidden(assignment_id).__dict__[name]})[0]
    with pytest.raises(RuntimeError, match=rf"your {name} calls course_lib\.grading\.checks\.common\._"):
        _hidden_verdict(assignment_id, test_name, **{name: student})
    assert common._additive_scores.__name__ == "_additive_scores" and common._softmax_rows.__name__ == "_softmax_rows"


def test_a3_an_answer_whose_module_is_first_imported_during_the_call_is_caught():
    """In the grading kernel nothing imports course_lib.metrics.transliteration before the hidden tests (its cells
    are skipped): an import inside the student's function was the first, and got the real function."""
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        from types import SimpleNamespace
        from course_lib.grading.spec import load_assignment
        assert "course_lib.metrics.transliteration" not in sys.modules
        namespace = {}
        exec("def word_accuracy(predictions, references):\\n"
             "    from course_lib.metrics.transliteration import word_accuracy as library\\n"
             "    return library(predictions, references)\\n", namespace)
        assignment = load_assignment("A3")
        test = next(t for t in assignment.tests if t.question == "accuracy")
        environment = {"np": np}
        exec(assignment.kernel_setup, environment)
        environment.update(student=SimpleNamespace(**namespace), inputs=test.inputs(np.random.default_rng(0)))
        try:
            eval(test.call, environment)
        except RuntimeError as error:
            print("REFUSED", error)
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                               cwd=REPOSITORY_ROOT)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "REFUSED your word_accuracy calls course_lib.metrics.transliteration.word_accuracy" in completed.stdout


def test_a_right_answer_is_not_refused_for_a_name_it_shares_with_a_locked_answer_and_nothing_stays_locked():
    """The notebook keeps the checks' softmax under the name `softmax` (a scratch cell, say); the student's own
    answer calls its own helper's `softmax` attribute, and keeps the library's metric for later: all fine."""
    from course_lib.grading.checks import common
    from course_lib.metrics import transliteration

    namespace = _notebook_functions(
        "from course_lib.grading.checks.common import _softmax_rows as softmax\n"
        "from course_lib.metrics import transliteration\n"
        "_kept = {}\n"
        "class Helper:\n"
        "    @staticmethod\n"
        "    def softmax(logits):\n"
        "        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))\n"
        "        return shifted / shifted.sum(axis=-1, keepdims=True)\n"
        "def class_probabilities(document, V, b):\n"
        "    _kept.setdefault('metric', transliteration.word_accuracy)  # kept, not called\n"
        "    return Helper.softmax(document @ V.T + b)\n")
    checks.check_class_probabilities(namespace["class_probabilities"])
    assert _hidden_verdict("A5", "classify: 5 classes", class_probabilities=namespace["class_probabilities"])[0]
    assert namespace["_kept"]["metric"](["a"], [["a"]]) == 1.0  # the library's code was put back
    assert common._softmax_rows(np.zeros((1, 2))).tolist() == [[0.5, 0.5]]
    assert "_grader_answer_lock" not in vars(transliteration) and "_grader_answer_lock" not in vars(common)


def test_a1_visible_checks_refuse_the_checks_own_formulas():
    namespace = _notebook_functions(
        "from course_lib.grading.checks.common import _additive_scores as attention_scores, _softmax_rows\n"
        "def softmax(scores):\n"
        "    return _softmax_rows(scores)\n")
    with pytest.raises(checks.CheckFailed, match=r"your softmax calls course_lib\.grading\.checks\.common\._softmax_rows"):
        checks.check_softmax(namespace["softmax"])
    with pytest.raises(checks.CheckFailed, match=r"calls course_lib\.grading\.checks\.common\._additive_scores"):
        checks.check_attention_scores(namespace["attention_scores"])
