"""Ensemble decoding: the mean of the members' distributions at every step."""

import keras
import numpy as np
import pytest

from course_lib.decoding.ensemble import Ensemble
from course_lib.models import Seq2Seq


def _model(seed, **kwargs):
    keras.utils.set_random_seed(seed)
    model = Seq2Seq(11, 13, embedding_dim=8, units=16, bidirectional=True, deep_output=True,
                    max_output_length=7, **kwargs)
    model.build()
    return model


SOURCE = np.array([[4, 5, 6, 7, 0], [8, 9, 4, 0, 0], [5, 5, 5, 5, 5]], "int32")


def test_one_member_decodes_like_the_model_itself():
    model = _model(0)
    alone = Ensemble([model])
    greedy = model.generate(SOURCE)
    result = alone.generate(SOURCE)
    # Width 1 gives what Seq2Seq.generate gives: the same keys, and `scores` the log-probability
    # (it used to be the length-normalised beam score, with beam_* and log_probs entries besides).
    assert sorted(result) == sorted(greedy) == ["alignments", "scores", "tokens"]
    np.testing.assert_array_equal(result["tokens"], greedy["tokens"])
    np.testing.assert_allclose(result["alignments"], greedy["alignments"], atol=1e-5)
    np.testing.assert_allclose(result["scores"], greedy["scores"], atol=1e-5)
    beam = model.generate(SOURCE, beam_width=3)
    np.testing.assert_array_equal(alone.generate(SOURCE, beam_width=3)["beam_tokens"], beam["beam_tokens"])


def test_step_averages_the_members_probabilities():
    members = [_model(0), _model(1), _model(2, conditional=True)]
    ensemble = Ensemble(members)
    encoded = ensemble.encode(SOURCE)
    memory = ensemble.decoder.prepare_memory(*encoded)
    state = ensemble.decoder.start_state(encoded[1])
    previous = np.array([1, 1, 1], "int32")
    logits, new_state, weights = ensemble.decoder.step(previous, state, memory)
    probabilities, member_weights = [], []
    for model in members:
        outputs, initial, mask = model.encode(SOURCE)
        member_memory = model.decoder.prepare_memory(outputs, initial, mask)
        member_logits, _, alpha = model.decoder.step(previous, model.decoder.start_state(initial), member_memory)
        probabilities.append(keras.ops.convert_to_numpy(keras.ops.softmax(member_logits)))
        member_weights.append(np.asarray(alpha))
    np.testing.assert_allclose(np.exp(np.asarray(logits)), np.mean(probabilities, axis=0), atol=1e-6)
    np.testing.assert_allclose(np.asarray(weights), np.mean(member_weights, axis=0), atol=1e-6)
    assert np.asarray(weights)[1, 3:].max() == 0.0  # padding still gets no attention
    assert len(new_state) == 3


def test_identical_members_change_nothing_and_different_ones_can():
    model = _model(0)
    twice = Ensemble([model, model]).generate(SOURCE, beam_width=2)
    once = model.generate(SOURCE, beam_width=2)
    np.testing.assert_array_equal(twice["beam_tokens"], once["beam_tokens"])
    np.testing.assert_allclose(twice["beam_scores"], once["beam_scores"], atol=1e-5)
    mixed = Ensemble([model, _model(5)]).generate(SOURCE, beam_width=2)
    assert not np.allclose(mixed["beam_scores"], once["beam_scores"])


def test_members_must_share_vocabularies():
    with pytest.raises(ValueError, match="target_vocab_size=14"):
        Ensemble([_model(0), Seq2Seq(11, 14, embedding_dim=8, units=16)])
    with pytest.raises(ValueError, match="models=\\[\\]"):
        Ensemble([])


def test_ensemble_generate_makes_the_checks_seq2seq_generate_makes():
    ensemble = Ensemble([_model(0), _model(1)])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ensemble.generate(np.array([[5, -1, 7]], "int32"))  # -1 would read the last embedding row
    with pytest.raises(ValueError, match="beam_width"):
        ensemble.generate(np.array([[5, 6, 7]], "int32"), beam_width=12)  # 13 tokens - <pad> - <GO> = 11
    with pytest.raises(ValueError, match="max_length"):
        ensemble.generate(np.array([[5, 6, 7]], "int32"), max_length=2.5)
    # An empty source used to fail inside the encoder (InvalidArgumentError).
    with pytest.raises(ValueError, match=r"`source` needs at least one position. Received: source.shape=\(2, 0\)"):
        ensemble.generate(np.zeros((2, 0), "int32"))
    with pytest.raises(ValueError, match="`source` must be an integer array"):
        ensemble.generate(np.array([[5.0, 6.0]]))


def test_a_plain_member_leaves_the_attentional_members_weights_as_they_are():
    """The plain decoder's all-zero "weights" were averaged in: with one of each, every row summed to 0.5."""
    def plain_model(seed):
        keras.utils.set_random_seed(seed)
        return Seq2Seq(11, 13, embedding_dim=8, units=16, attention=False, max_output_length=7)

    attentional, plain = _model(0), plain_model(1)
    result = Ensemble([attentional, plain]).generate(SOURCE)
    running = result["tokens"] != attentional.pad_id  # the steps before and at <stop>
    np.testing.assert_allclose(result["alignments"].sum(-1)[running], 1.0, atol=1e-5)
    both_plain = Ensemble([plain, plain_model(2)]).generate(SOURCE)
    assert not both_plain["alignments"].any()  # no member attends: zeros, as a plain model reports
