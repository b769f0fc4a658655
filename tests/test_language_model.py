"""Tests of the RNN language model, its corpus and the perplexity helpers."""

import re

import keras
import numpy as np
import pytest

from course_lib.data import char_corpus
from course_lib.metrics.language_model import perplexity_from_log_probs, unigram_log_probs, unigram_perplexity
from course_lib.models.language_model import RNNLanguageModel, parameter_count
from layer_testing import check_output_shapes, check_reload_keeps_training, run_layer_test


def _tokens(batch=3, length=6, vocab=11, seed=0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(3, vocab, size=(batch, length)).astype("int32")
    tokens[:, 0] = 1
    return tokens


@pytest.mark.parametrize("cell", ["rnn", "gru", "lstm"])
def test_layer_contract(cell):
    tokens = _tokens()
    padded = np.concatenate([tokens, np.zeros((3, 2), "int32")], axis=1)

    def compare(original, with_padding):
        np.testing.assert_allclose(original[0], with_padding[0][:, : tokens.shape[1]], atol=1e-5)

    layer = run_layer_test(
        RNNLanguageModel,
        {"vocab_size": 11, "embedding_dim": 5, "units": 7, "cell": cell},
        {"tokens": tokens},
        expected_output_shapes=[(3, 6, 11)],
        padding_check=({"tokens": padded}, compare),
    )
    assert layer.count_params() == parameter_count(11, 5, 7, cell)
    assert any("s_0" in weight.path for weight in layer.trainable_weights)


def test_learned_initial_state_changes_the_first_prediction():
    layer = RNNLanguageModel(11, 5, 7, cell="gru")
    tokens = _tokens()
    before = np.asarray(layer(tokens))[:, 0]
    layer.initial_state.assign(layer.initial_state + 1.0)
    after = np.asarray(layer(tokens))[:, 0]
    assert np.abs(before - after).max() > 1e-3


def test_teacher_forcing_is_causal():
    layer = RNNLanguageModel(11, 5, 7, cell="lstm")
    tokens = _tokens()
    changed = tokens.copy()
    changed[:, 4] = 3 + (tokens[:, 4] - 3 + 1) % 8
    a, b = np.asarray(layer(tokens)), np.asarray(layer(changed))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert np.abs(a[:, 4:] - b[:, 4:]).max() > 1e-6


def test_generate_greedy_matches_step_by_step_argmax_and_stops():
    keras.utils.set_random_seed(1)
    layer = RNNLanguageModel(11, 5, 7, cell="gru")
    tokens, log_probs = layer.generate(4, max_length=9, temperature=0.0)
    assert tokens.shape == (4, 9) and log_probs.shape == (4,)
    assert np.all(tokens == tokens[0])  # greedy: every sample is the same
    # Re-score the greedy output with teacher forcing: each token was the argmax.
    row = tokens[0]
    length = int(np.argmax(row == 2)) + 1 if (row == 2).any() else len(row)
    inputs = np.concatenate([[1], row[: length - 1]])[None].astype("int32")
    logits = np.array(layer(inputs))[0]
    logits[:, [0, 1]] = -np.inf  # generation never picks <pad> or <GO>
    np.testing.assert_array_equal(logits.argmax(-1), row[:length])
    assert not np.isin(tokens[:, :length], [0, 1]).any()
    assert np.all(row[length:] == 0)
    scored = layer.token_log_probs(inputs, row[None, :length])
    np.testing.assert_allclose(scored.sum(), log_probs[0], rtol=1e-4)


def test_generate_sampling_is_seeded_and_temperature_matters():
    keras.utils.set_random_seed(2)
    layer = RNNLanguageModel(11, 5, 7, cell="rnn")
    a, _ = layer.generate(6, max_length=8, temperature=1.0, seed=3)
    b, _ = layer.generate(6, max_length=8, temperature=1.0, seed=3)
    c, _ = layer.generate(6, max_length=8, temperature=1.0, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(ValueError, match="temperature"):
        layer.generate(1, temperature=-1.0)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="cell"):
        RNNLanguageModel(11, cell="transformer")
    with pytest.raises(ValueError, match="units"):
        RNNLanguageModel(11, units=0)
    layer = RNNLanguageModel(11, 5, 7)
    with pytest.raises(ValueError, match="integer"):
        layer(np.zeros((2, 3), "float32"))


def test_corpus_is_deterministic_and_well_formed():
    train, valid = char_corpus.train_valid_split(50, 10, seed=5)
    again, _ = char_corpus.train_valid_split(50, 10, seed=5)
    other, _ = char_corpus.train_valid_split(50, 10, seed=6)
    assert train["sentences"] == again["sentences"] != other["sentences"]
    assert train["inputs"].shape == train["targets"].shape
    assert np.all(train["inputs"][:, 0] == char_corpus.GO)
    for sentence, row in zip(train["sentences"], train["targets"]):
        assert char_corpus.decode(row) == sentence
        assert row[len(sentence)] == char_corpus.STOP
    # Teacher forcing: the input is the target shifted right by one.
    np.testing.assert_array_equal(train["inputs"][:, 1:][train["targets"][:, 1:] != 0],
                                  train["targets"][:, :-1][train["targets"][:, 1:] != 0])


def test_the_grammar_floor_matches_the_generator():
    """`entropy_per_character` enumerates the grammar; the generator's own draws must agree with it."""
    phrases = dict(char_corpus._noun_phrases(char_corpus.SUBJECTS))
    assert len(phrases) == len(list(char_corpus._noun_phrases(char_corpus.SUBJECTS)))  # no two choices spell alike
    assert sum(phrases.values()) == pytest.approx(1.0)
    rng = np.random.default_rng(7)
    drawn = [char_corpus._noun_phrase(rng, char_corpus.SUBJECTS) for _ in range(40_000)]
    assert set(drawn) <= set(phrases)
    _, counts = np.unique(drawn, return_counts=True)
    frequencies = counts / counts.sum()
    entropy, mean_length = char_corpus._entropy_and_mean_length(phrases.items())
    # plug-in entropy of 40,000 draws over 1,040 phrases: biased low by about (1,040 - 1) / 80,000 = 0.013
    assert -np.sum(frequencies * np.log(frequencies)) == pytest.approx(entropy - 0.013, abs=0.02)
    assert np.mean([len(p) for p in drawn]) == pytest.approx(mean_length, abs=0.05)  # standard error 0.013

    floor = char_corpus.entropy_per_character()
    sentences = char_corpus.make_sentences(20_000, seed=3)
    tokens = np.mean([len(s) + 1 for s in sentences])  # characters and <stop>; standard error 0.06
    per_sentence = floor * tokens  # H(S), if the expected length is right
    object_entropy, _ = char_corpus._entropy_and_mean_length(char_corpus._noun_phrases(char_corpus.OBJECTS))
    expected = entropy + object_entropy + np.log(len(char_corpus.VERBS)) + np.log(2) + 0.5 * np.log(
        len(char_corpus.PREPOSITIONS) * len(char_corpus.PLACES))
    assert per_sentence == pytest.approx(expected, rel=0.006)


def test_perplexity_helpers():
    targets = np.array([[4, 5, 0], [4, 4, 0]])
    uniform = np.where(targets != 0, np.log(1 / 8), 0.0)
    assert perplexity_from_log_probs(uniform, targets) == pytest.approx(8.0)
    log_probs = unigram_log_probs(targets, vocab_size=6, smoothing=0.0)
    assert np.exp(log_probs[4]) == pytest.approx(0.75) and np.exp(log_probs[0]) == 0.0
    expected = np.exp(-(3 * np.log(0.75) + np.log(0.25)) / 4)
    assert unigram_perplexity(targets, targets, 6, smoothing=0.0) == pytest.approx(expected)
    with pytest.raises(ValueError, match="padding"):
        perplexity_from_log_probs(np.zeros((1, 2)), np.zeros((1, 2), int))


def test_numpy_integer_sizes_reach_keras_as_ints():
    # They passed the check and were handed on as they came: Keras's Embedding refused `input_dim`.
    layer = RNNLanguageModel(np.int64(11), np.int64(5), np.int32(7))
    assert np.asarray(layer(_tokens())).shape == (3, 6, 11)
    assert all(type(layer.get_config()[name]) is int for name in ("vocab_size", "embedding_dim", "units"))


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_output_shape_matches_the_logits(policy):
    # `compute_output_shape` raised NotImplementedError; the logits are float32 under a mixed policy.
    layer = RNNLanguageModel(11, 5, 7, dtype=policy)
    assert check_output_shapes(layer, {"tokens": _tokens()}, {"tokens": (None, None)}) == [(None, None, 11)]


def test_a_reloaded_training_model_evaluates_alike_and_trains_on(tmp_path):
    # The functional model around the layer reloads compiled (Keras's own `compile`); kept so.
    tokens = _tokens(batch=4)
    model = RNNLanguageModel(11, 5, 7).training_model()
    model.compile(keras.optimizers.Adam(1e-2), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    check_reload_keeps_training(model, tokens, tokens, tmp_path / "language_model.keras")


def test_a_tiny_temperature_samples_like_greedy_and_a_huge_one_never_writes_pad_or_go():
    """`logits / T` overflowed to +inf for every positive logit under a tiny T, and arg-max took the first of
    them, not the best; `<pad>` and `<GO>` were only 1e9 below, so a huge T could write them."""
    layer = RNNLanguageModel(9, 4, 6, start_id=1, stop_id=2, pad_id=0)
    layer.build((None, None))
    rng = np.random.default_rng(0)
    layer.set_weights([w + rng.normal(scale=3.0, size=w.shape).astype("float32") for w in layer.get_weights()])
    greedy, greedy_log_probs = layer.generate(5, max_length=6, temperature=0.0)
    for temperature in (1e-6, 1e-30, 1e-45):
        tokens, log_probs = layer.generate(5, max_length=6, temperature=temperature, seed=1)
        np.testing.assert_array_equal(tokens, greedy)
        np.testing.assert_allclose(log_probs, greedy_log_probs, rtol=1e-5)
    hot, _ = layer.generate(200, max_length=6, temperature=1e12, seed=2)
    first = hot[:, 0]  # nothing finished yet: padding here would be a written <pad>
    assert not np.isin(first, [0, 1]).any()
    assert len(set(first.tolist())) == 7  # about uniform over the 7 tokens it may write


@pytest.mark.parametrize("arguments, received", [
    ({"num_samples": 2.5}, "num_samples=2.5"), ({"num_samples": True}, "num_samples=True"),
    ({"temperature": "1"}, "temperature='1'"), ({"temperature": True}, "temperature=True"),
])
def test_generate_refuses_fractional_counts_and_non_numeric_temperatures(arguments, received):
    layer = RNNLanguageModel(9, 4, 6, start_id=1, stop_id=2, pad_id=0)
    with pytest.raises(ValueError, match=re.escape(received)):
        layer.generate(**{"max_length": 4, **arguments})
