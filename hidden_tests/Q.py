"""Hidden tests of Q: the lecture's eight self-test questions (10 points)."""

import numpy as np

from course_lib.grading.spec import Assignment, Question, Test, allclose, exact


def _softmax(scores):
    exponentials = np.exp(scores - np.max(scores))
    return exponentials / exponentials.sum()


def _value(expression, expected, question, name, points, compare=None, inputs=lambda rng: {}):
    return Test(name, question, points, call=expression, inputs=inputs, expected=expected,
                compare=compare or exact())


def _lm_inputs(rng):
    vocab, state = 9, 4
    return {"V": rng.normal(size=(vocab, state)), "c": rng.normal(size=vocab), "state": 3 * rng.normal(size=state)}


def _loss_inputs(rng):
    return {"probabilities": _softmax(rng.normal(size=6)), "label": 4}


def _context_inputs(rng):
    return {"states": rng.normal(size=(7, 5)), "weights": _softmax(rng.normal(size=7))}


def _scores_inputs(rng):
    return {"scores": rng.normal(scale=2.0, size=6)}


def _error_inputs(rng):
    return {"predicted": _softmax(rng.normal(size=5)), "true": _softmax(rng.normal(size=5))}


TOLERANCE = allclose(rtol=1e-3, atol=1e-5)

ASSIGNMENT = Assignment(
    id="Q",
    notebook="Q_self_test_quiz",
    questions=[Question(f"Q{i}", title) for i, title in enumerate([
        "shapes of the language model's output layer",
        "captioning option 1",
        "video classification",
        "weighted average versus concatenation",
        "weights from scores, squared error",
        "sizes of the attention parameters",
        "how attention is trained",
        "attention over image locations",
    ], start=1)],
    tests=[
        _value("student.q1_shapes(12000, 256)", lambda i: {"V": (12000, 256), "c": (12000,), "scores": (12000,)},
               "Q1", "Q1: shapes for 12,000 words and a 256-d state", 0.5),
        Test("Q1: next-word distribution", "Q1", 0.5,
             call="student.q1_next_word_distribution(inputs['V'], inputs['c'], inputs['state'])",
             inputs=_lm_inputs, expected=lambda i: _softmax(i["V"] @ i["state"] + i["c"]), compare=TOLERANCE),
        _value("student.q2_projection_shape(300)", lambda i: (300, 4096), "Q2", "Q2: projection for a 300-d state", 0.5),
        _value("student.Q2_CHOICE", lambda i: "b", "Q2", "Q2: why step 5 depends on the image", 0.5),
        _value("student.Q3_PARAMETERS", lambda i: {"V", "b", "W_conv", "U_enc", "W_enc"}, "Q3",
               "Q3: parameters of video classification", 0.5, compare=exact(set)),
        Test("Q3: loss of one video", "Q3", 0.5,
             call="student.q3_loss(inputs['probabilities'], inputs['label'])", inputs=_loss_inputs,
             expected=lambda i: -np.log(i["probabilities"][i["label"]]), compare=TOLERANCE),
        Test("Q4: context of 7 states", "Q4", 0.5, call="student.q4_context(inputs['states'], inputs['weights'])",
             inputs=_context_inputs, expected=lambda i: i["weights"] @ i["states"], compare=TOLERANCE),
        _value("student.Q4_CHOICE", lambda i: "d", "Q4", "Q4: reason", 0.5),
        Test("Q5: weights from other scores", "Q5", 1.0, call="student.q5_weights(inputs['scores'])",
             inputs=_scores_inputs, expected=lambda i: _softmax(i["scores"]), compare=TOLERANCE),
        Test("Q5: squared error of other weights", "Q5", 1.0,
             call="student.q5_squared_error(inputs['predicted'], inputs['true'])", inputs=_error_inputs,
             expected=lambda i: np.sum((i["predicted"] - i["true"]) ** 2), compare=TOLERANCE),
        _value("student.q6_attention_sizes(1024, 300, 64)",
               lambda i: {"U_att": (64, 1024), "W_att": (64, 300), "v_att": (64,), "total": 64 * 1024 + 64 * 300 + 64},
               "Q6", "Q6: sizes for a 1024-d state, 300-d encoder, d1 = 64", 1.0),
        _value("student.q6_attention_sizes(7, 5, 3)['total']", lambda i: 3 * 7 + 3 * 5 + 3,
               "Q6", "Q6: total for small sizes", 1.0, compare=exact(int)),
        _value("student.Q7_CHOICE", lambda i: "c", "Q7", "Q7: how attention is trained", 1.0),
        _value("student.q8_image_attention(7, 7, 2048)", lambda i: (49, 2048), "Q8", "Q8: a 7x7x2048 feature map", 0.5),
        _value("student.Q8_CHOICE", lambda i: "a", "Q8", "Q8: why not fc7", 0.5),
    ],
    cell_timeout=30,
    notebook_timeout=180,
    memory_mb=4096,
)
