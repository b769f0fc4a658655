"""The hierarchical encoder as the context encoder of a response generator."""

import os

import keras
import numpy as np
import pytest

from course_lib.data.dialogs import FILMS, encode_dialogs, generate_dialogs
from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder
from course_lib.models.dialog import HierarchicalDialogModel
from course_lib.text.vocabulary import Vocabulary
from layer_testing import check_reload_keeps_training


def small_set(count=12, seed=0):
    dialogs = generate_dialogs(count, seed=seed)
    vocabulary = Vocabulary.from_texts(
        [u for context in dialogs.contexts for u in context] + dialogs.responses, level="word"
    )
    return dialogs, vocabulary, encode_dialogs(dialogs, vocabulary)


def test_dialogs_are_deterministic_and_answer_from_the_context():
    first, second = generate_dialogs(30, seed=5), generate_dialogs(30, seed=5)
    assert first.contexts == second.contexts and first.responses == second.responses
    for context, response, film, kind in zip(first.contexts, first.responses, first.films, first.questions):
        title, actor, director, year, place = FILMS[film]
        assert len(context) == 3 and title in context[1]
        expected = {"actor": actor, "director": director, "year": year, "place": place}[kind]
        assert expected in response


def test_encode_dialogs_shapes():
    dialogs, vocabulary, arrays = small_set()
    assert arrays["context"].shape[:2] == (12, 3)
    assert np.all(arrays["target_in"][:, 0] == 1)
    lengths = (arrays["target_out"] != 0).sum(1)
    assert np.all(arrays["target_out"][np.arange(12), lengths - 1] == 2)


@pytest.mark.parametrize("attention", [True, False])
def test_dialog_model_forward_generate_and_reload(attention, tmp_path):
    _, vocabulary, arrays = small_set()
    model = HierarchicalDialogModel(len(vocabulary), embedding_dim=8, word_units=6, sentence_units=5, units=7,
                                    attention=attention, max_output_length=6)
    assert isinstance(model.encoder, HierarchicalAttentionEncoder)  # the document encoder, reused
    inputs = {"context": arrays["context"], "target_in": arrays["target_in"]}
    logits = np.asarray(model(inputs))
    assert logits.shape == arrays["target_in"].shape + (len(vocabulary),)
    generated = model.generate(arrays["context"])
    assert generated["tokens"].shape == (12, 6)
    assert generated["alignments"].shape == (12, 6, 3)
    assert generated["utterance_weights"].shape == (12, 3)
    shorter = model.generate(arrays["context"], max_length=4)  # greedy: the same words, cut at 4
    np.testing.assert_array_equal(shorter["tokens"], generated["tokens"][:, :4])
    np.testing.assert_allclose(shorter["alignments"], generated["alignments"][:, :4], atol=1e-6)
    assert set(model._greedy_functions) == {4, 6}  # each length compiled once, not run eagerly
    if attention:
        live = generated["tokens"] != 0
        np.testing.assert_allclose(generated["alignments"].sum(-1)[live], 1.0, atol=1e-5)
    path = os.path.join(tmp_path, "dialog.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(reloaded(inputs)), logits, atol=1e-5)


def test_dialog_model_training_lowers_the_loss():
    _, vocabulary, arrays = small_set(48)
    keras.utils.set_random_seed(0)
    model = HierarchicalDialogModel(len(vocabulary), embedding_dim=8, word_units=8, sentence_units=8, units=16)
    model.compile(keras.optimizers.Adam(1e-2))
    inputs = {"context": arrays["context"], "target_in": arrays["target_in"]}
    history = model.fit(inputs, arrays["target_out"], epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.75 * history.history["loss"][0]
    with pytest.raises(ValueError, match="context"):
        model({"source": arrays["context"]})
    with pytest.raises(ValueError, match="integer array"):
        model.generate(arrays["context"][0])


@pytest.mark.parametrize("attention", [True, False])
def test_a_dialog_model_that_generated_first_still_trains(attention):
    """`generate` on a fresh model built the encoder and decoder outside `build()`; the model stayed unbuilt, the
    next call built them again and Keras refused it, and every `fit`, for good."""
    _, vocabulary, arrays = small_set()
    model = HierarchicalDialogModel(len(vocabulary), embedding_dim=8, word_units=6, sentence_units=5, units=7,
                                    attention=attention, max_output_length=6)
    before = model.generate(arrays["context"])["tokens"]
    assert model.built
    model.compile(keras.optimizers.Adam(1e-2))
    inputs = {"context": arrays["context"], "target_in": arrays["target_in"]}
    history = model.fit(inputs, arrays["target_out"], epochs=2, batch_size=6, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert model.generate(arrays["context"])["tokens"].shape == before.shape


def test_dialog_generate_rejects_max_length_zero():
    _, vocabulary, arrays = small_set()
    model = HierarchicalDialogModel(len(vocabulary), embedding_dim=8, word_units=6, sentence_units=5, units=7,
                                    max_output_length=6)
    with pytest.raises(ValueError, match="max_length=0"):
        model.generate(arrays["context"], max_length=0)


def test_no_test_dialog_context_was_seen_in_training():
    from course_lib.data.dialogs import dialog_splits, generate_dialogs

    splits = dialog_splits(train=4000, test=500, seed=0)  # the full profile's sizes: 180 of 500 overlapped
    seen = {tuple(context) for context in splits["train"].contexts}
    assert len(splits["test"]) == 500 and not [c for c in splits["test"].contexts if tuple(c) in seen]
    from itertools import product

    from course_lib.data.dialogs import GENRES, OFFERS, OPENINGS, QUESTIONS

    every_context = {
        (opening.format(genre=genre), offer.format(film=film[0]), question)
        for opening, genre, offer, film in product(OPENINGS, GENRES, OFFERS, FILMS)
        for wordings, _ in QUESTIONS.values() for question in wordings
    }
    assert len(every_context) == 9216  # the docstring's count
    with pytest.raises(ValueError, match="Could not draw 5 dialogs outside the 9216 excluded contexts"):
        generate_dialogs(5, seed=2, exclude=every_context)


@pytest.mark.parametrize("train, valid, test, seed", [(1200, 200, 200, 0), (4000, 500, 500, 3)])
def test_dialog_validation_part_is_outside_training_and_test_which_stay_as_before(train, valid, test, seed):
    # There was no validation part, so epochs and rates were chosen on the test dialogs. The validation part
    # is drawn after the test part: the training and test dialogs of every seed are the ones drawn before.
    from course_lib.data.dialogs import dialog_splits, generate_dialogs

    splits = dialog_splits(train=train, test=test, seed=seed, valid=valid)
    assert set(splits) == {"train", "valid", "test"} and len(splits["valid"]) == valid
    before_train = generate_dialogs(train, seed)
    before_test = generate_dialogs(test, seed + 1_000_003, exclude={tuple(c) for c in before_train.contexts})
    for part, before in (("train", before_train), ("test", before_test)):
        assert splits[part].contexts == before.contexts and splits[part].responses == before.responses
        np.testing.assert_array_equal(splits[part].films, before.films)
    valid_contexts = {tuple(c) for c in splits["valid"].contexts}
    assert not valid_contexts & {tuple(c) for c in splits["train"].contexts + splits["test"].contexts}
    assert len(dialog_splits(train=50, test=20, seed=seed)["valid"]) == 300  # the default count


def test_train_dialogs_scores_the_validation_and_the_test_dialogs():
    from course_lib.tasks.documents import train_dialogs

    run = train_dialogs(sizes=(60, 12, 10), epochs=1, seed=0, embedding_dim=8, word_units=6, sentence_units=5,
                        units=7)
    assert [len(run.splits[part]) for part in ("train", "valid", "test")] == [60, 12, 10]
    assert set(run.valid_metrics) == set(run.metrics) == {"exact_match", "question_kind", "film_fact"}
    assert run.arrays["valid"]["context"].shape[0] == 12
    for sizes in ((60, 10), (60, 12, 10, 5)):  # (train, test) was the old form: refused, not misread
        with pytest.raises(ValueError, match=r"three dialog counts \(train, valid, test\)"):
            train_dialogs(sizes=sizes, epochs=1)


def test_a_reloaded_dialog_model_evaluates_alike_and_trains_on(tmp_path):
    # Its custom `compile` (defaults for the loss and metrics) used to be skipped on loading: the model came back
    # marked compiled with no optimizer and no loss, and `evaluate` raised "No loss to compute".
    _, vocabulary, arrays = small_set(8)
    keras.utils.set_random_seed(0)
    # With attention only: `compile` and its config are the same without (15 s of test time saved).
    model = HierarchicalDialogModel(len(vocabulary), embedding_dim=8, word_units=6, sentence_units=5, units=7)
    model.compile(keras.optimizers.Adam(1e-2))
    inputs = {"context": arrays["context"], "target_in": arrays["target_in"]}
    reloaded = check_reload_keeps_training(model, inputs, arrays["target_out"], tmp_path / "dialog.keras")
    assert reloaded.loss.pad_id == model.pad_id


def test_dialog_model_takes_numpy_integer_sizes():
    # `len(np.unique(ids))` and `ids.max() + 1` are NumPy integers; the encoder refused them, and Keras's layers
    # refuse them too, so they are stored as plain ints.
    sizes = dict(vocab_size=np.int64(20), embedding_dim=np.int64(8), word_units=np.int64(6),
                 sentence_units=np.int32(5), units=np.int64(7), max_output_length=np.int64(4))
    model = HierarchicalDialogModel(**sizes)
    assert all(type(model.get_config()[name]) is int for name in sizes)
    assert model.generate(np.ones((2, 3, 4), "int32"))["tokens"].shape == (2, 4)
    with pytest.raises(ValueError, match="`units` must be a whole number >= 1. Received: units=7.5"):
        HierarchicalDialogModel(20, units=7.5)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_dialog_generate_gives_float32_weights_under_a_mixed_policy(policy):
    # They came back float16 or bfloat16, and a bfloat16 array is no NumPy floating type.
    model = HierarchicalDialogModel(20, embedding_dim=8, word_units=6, sentence_units=5, units=8, dtype=policy)
    generated = model.generate(np.ones((2, 3, 4), "int32"), max_length=3)
    assert generated["alignments"].dtype == np.float32
    assert generated["utterance_weights"].dtype == np.float32
