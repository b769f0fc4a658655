"""Supervised attention: the oracle weights, the squared-error loss and training with it."""

import os
import tempfile

import keras
import numpy as np
import pytest

from course_lib.data import hindi_english, reversal
from course_lib.losses import attention_supervision_loss, oracle_weights
from course_lib.models import Seq2Seq
from course_lib.tasks import translation as task


def test_oracle_weights_split_evenly_and_leave_unlinked_rows_zero():
    # target word 0 <- source 2; word 1 <- sources 0 and 1 (0.5 each, the lecture's "ja raha");
    # word 2 linked to nothing; row 3 is <stop>/padding.
    weights = oracle_weights([[{2}, {0, 1}, set()]], target_length=4, source_length=3)
    expected = np.zeros((1, 4, 3), "float32")
    expected[0, 0, 2] = 1.0
    expected[0, 1, :2] = 0.5
    np.testing.assert_array_equal(weights, expected)


def test_oracle_weights_reject_links_outside_the_matrix():
    with pytest.raises(ValueError, match="source_length=2"):
        oracle_weights([[{2}]], target_length=1, source_length=2)
    with pytest.raises(ValueError, match="target_length=1"):
        oracle_weights([[{0}, {1}]], target_length=1, source_length=2)


def test_loss_is_the_squared_error_over_linked_steps_only():
    rng = np.random.default_rng(0)
    oracle = oracle_weights([[{0}, {1, 2}, set()], [{2}, set(), set()]], target_length=3, source_length=3)
    predicted = rng.dirichlet(np.ones(3), size=(2, 3)).astype("float32")
    linked = oracle.sum(-1) > 0  # 3 linked steps of 6
    expected = ((oracle - predicted) ** 2).sum(-1)[linked].mean()
    loss = float(attention_supervision_loss(oracle, predicted))
    np.testing.assert_allclose(loss, expected, rtol=1e-6)
    predicted_elsewhere = predicted.copy()
    predicted_elsewhere[~linked] = rng.dirichlet(np.ones(3), size=int((~linked).sum()))
    assert float(attention_supervision_loss(oracle, predicted_elsewhere)) == pytest.approx(loss)
    assert float(attention_supervision_loss(oracle, oracle)) == 0.0
    with pytest.raises(ValueError, match="oracle.shape"):
        attention_supervision_loss(oracle, predicted[:, :2])


def _mirror_batch(batch=32, length=5, seed=0):
    """Reversal data (`data.reversal`) and its gold alignment: output step t copies input length-1-t."""
    source, target_in, target_out = reversal.make_examples(
        reversal.random_digits(np.random.default_rng(seed), batch, length))
    links = [[{length - 1 - step} for step in range(length)]] * batch
    oracle = oracle_weights(links, length + 1, length)
    return {"source": source, "target_in": target_in, "alignment": oracle}, target_out


def _oracle_error(model, inputs):
    alignments = model.alignments(inputs["source"], inputs["target_in"])
    return float(attention_supervision_loss(inputs["alignment"], alignments))


def test_supervision_pulls_attention_to_the_oracle_and_survives_save_load():
    inputs, target_out = _mirror_batch()
    errors = {}
    for weight in (0.0, 5.0):
        keras.utils.set_random_seed(0)
        model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16,
                        alignment_loss_weight=weight)
        model.compile(optimizer=keras.optimizers.Adam(2e-2))
        before = _oracle_error(model, inputs)
        model.fit(inputs, target_out, epochs=60, batch_size=32, verbose=0)
        errors[weight] = (before, _oracle_error(model, inputs))
    # Same start (same seed); only the supervised model is pulled towards the oracle.
    assert errors[5.0][0] == pytest.approx(errors[0.0][0])
    assert errors[5.0][1] < 0.05 * errors[5.0][0]  # measured: 0.80 -> 0.004
    assert errors[5.0][1] < 0.1 * errors[0.0][1]  # unsupervised after the same steps: 0.60
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        reloaded = keras.models.load_model(path)
    assert reloaded.alignment_loss_weight == 5.0
    evaluation = {key: inputs[key] for key in ("source", "target_in")}
    np.testing.assert_allclose(reloaded(evaluation), model(evaluation), atol=1e-6)


def test_the_supervised_term_is_added_in_training_only():
    inputs, _ = _mirror_batch(batch=4)
    model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16, alignment_loss_weight=2.0)
    model(inputs, training=True)
    expected = 2.0 * _oracle_error(model, inputs)
    assert len(model.losses) == 1
    np.testing.assert_allclose(float(model.losses[0]), expected, rtol=1e-5)
    model(inputs, training=False)
    assert model.losses == []


def test_supervision_errors_are_clear():
    inputs, _ = _mirror_batch(batch=4)
    model = Seq2Seq(reversal.VOCAB_SIZE, reversal.VOCAB_SIZE, embedding_dim=8, units=16, alignment_loss_weight=1.0)
    without = {"source": inputs["source"], "target_in": inputs["target_in"]}
    with pytest.raises(ValueError, match="no 'alignment'"):
        model(without, training=True)
    model(without, training=False)  # evaluation and decoding need no oracle
    with pytest.raises(ValueError, match="alignment_loss_weight=-1"):
        Seq2Seq(12, 12, alignment_loss_weight=-1)
    with pytest.raises(ValueError, match="attention=False"):
        Seq2Seq(12, 12, attention=False, alignment_loss_weight=1.0)
    with pytest.raises(ValueError, match="keys="):
        model({**inputs, "gold": inputs["alignment"]})


def test_translation_supervises_with_the_gold_alignment_and_refuses_pairs_without_one(tmp_path):
    from course_lib.cli import main
    from course_lib.data.tatoeba import TatoebaPair

    parts = hindi_english.load_corpus(seed=0)
    pairs = parts["train"][:64]
    inputs, _ = task.encode_pairs(pairs, "en-hi", *task.build_vocabularies(pairs, "en-hi"))
    oracle = task.oracle_alignments(pairs, "en-hi", inputs)
    for step, links in enumerate(pairs[0].gold_links("en-hi")):
        assert set(np.flatnonzero(oracle[0, step])) == links
        np.testing.assert_allclose(oracle[0, step].sum(), 1.0)

    out = tmp_path / "supervised"
    assert main(["train", "translation", "--max-train", "64", "--epochs", "1", "--units", "8",
                 "--embedding-dim", "8", "--alignment-loss-weight", "1", "--supervised-pairs", "10",
                 "--out", str(out)]) == 0
    assert task.Translator.load(out).model.alignment_loss_weight == 1.0

    config = task.TranslationConfig.for_profile(embedding_dim=8, units=16, epochs=1, alignment_loss_weight=1.0)
    untagged = [TatoebaPair("I am going home.", "मैं घर जा रहा हूँ।", "", 1)] * 8
    with pytest.raises(ValueError, match="8 of 8 pairs without one"):
        task.train(config, untagged, verbose=0)
    unsupervised = task.TranslationConfig.for_profile(embedding_dim=8, units=16, epochs=1, supervised_pairs=5)
    with pytest.raises(ValueError, match="supervised_pairs=5"):
        task.train(unsupervised, parts["train"][:16], verbose=0)
