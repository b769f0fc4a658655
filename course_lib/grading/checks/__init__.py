"""Visible checks for the assignments: quick feedback while you work.

Each `check_*` function runs your function on small made-up inputs and tests
properties any correct answer has (shapes, weights that sum to 1, padding
that gets no weight, the lecture's worked examples). A failed check raises
`CheckFailed` with a hint about what is wrong; it never shows a solution.
Passing every visible check does not guarantee full marks: the graders'
hidden tests use other inputs.

One module per assignment, each importing only `common` (and `answers`, which
keeps the course's own answers out of reach while a student's function runs):
`a1_attention`, `a2_decoder`, `a3_transliteration`, `a4_image_locations`,
`a5_hierarchical`, and `quiz`. Notebooks use them through this package:
`from course_lib.grading import checks; checks.check_softmax(softmax)`.
"""

from course_lib.grading.checks.common import (
    BROADCAST_HINT, KEEPDIMS_HINT, NEGATIVE_SCORE, SOFTMAX_OVERFLOW_HINT, TANH_PLACE_HINT, WEIGHTED_SUM_HINT, as_numpy,
    check_close, check_finite, check_indices, check_shape, check_weights, CheckFailed,
)
from course_lib.grading.checks.a1_attention import (
    check_apply_mask, check_attend_over_steps, check_attention_scores, check_attention_shapes, check_context_vector,
    check_parameter_count, check_project_keys, check_softmax,
)
from course_lib.grading.checks.a2_decoder import (
    A2_LOCKED_METHODS, check_attention_decoder_step, check_teacher_forced_decode, check_teacher_forcing_inputs,
)
from course_lib.grading.checks.a3_transliteration import (
    check_beam_step, check_edit_distance, check_length_normalized_score, check_top_k_accuracy, check_word_accuracy,
)
from course_lib.grading.checks.a4_image_locations import (
    check_attended_cell, check_attention_over_locations, check_feature_map_to_locations, check_weights_to_map,
)
from course_lib.grading.checks.a5_hierarchical import (
    check_attention_pool, check_class_probabilities, check_sentence_mask, check_sentence_vectors,
)
from course_lib.grading.checks.quiz import check_answer_dict, check_answer_type, check_multiplies

__all__ = [
    "BROADCAST_HINT", "KEEPDIMS_HINT", "NEGATIVE_SCORE", "SOFTMAX_OVERFLOW_HINT", "TANH_PLACE_HINT",
    "WEIGHTED_SUM_HINT", "as_numpy", "check_close",
    "check_finite", "check_indices", "check_shape", "check_weights", "CheckFailed", "check_apply_mask",
    "check_attend_over_steps", "check_attention_scores", "check_attention_shapes", "check_context_vector",
    "check_parameter_count", "check_project_keys", "check_softmax", "A2_LOCKED_METHODS",
    "check_attention_decoder_step", "check_teacher_forced_decode", "check_teacher_forcing_inputs",
    "check_beam_step", "check_edit_distance", "check_length_normalized_score",
    "check_top_k_accuracy", "check_word_accuracy", "check_attended_cell", "check_attention_over_locations",
    "check_feature_map_to_locations", "check_weights_to_map", "check_attention_pool",
    "check_class_probabilities", "check_sentence_mask", "check_sentence_vectors", "check_answer_dict",
    "check_answer_type", "check_multiplies",
]
