"""Pieces of the transliteration task: error kinds, noise, smoothed loss, evaluation."""

import warnings

import keras
import numpy as np
import pytest

from course_lib.losses import MaskedTokenLoss, SmoothedMaskedTokenLoss
from course_lib.tasks import transliteration as task


def test_error_kinds():
    assert task.error_kinds("किरण", "किरण") == set()
    assert task.error_kinds("कीरण", "किरण") == {"vowel length"}
    assert "virama / conjunct" in task.error_kinds("कसत्र", "क्सत्र")
    assert "nasal" in task.error_kinds("हिदी", "हिंदी")
    assert task.error_kinds("सिता", "सित") == {"vowel length", "word end"}
    assert task.error_kinds("घट", "घर") == {"word end"}
    assert task.error_kinds("गमल", "कमल") == {"other"}
    counts = task.error_summary(["किरन", "घर"], [["किरण"], ["घर"]])
    assert counts["word end"] == 1 and sum(counts.values()) == 1  # ण -> न: a wrong letter, not the anusvara rule
    # Any accepted spelling counts as right; a wrong word is shown with the first one.
    assert task.wrong_words(["किरन", "घर", "हिन्दी"], [["किरण"], ["घर"], ["हिंदी", "हिन्दी"]]) == [("किरन", "किरण")]


def test_nasal_errors_are_the_anusvara_rule_only():
    # Anusvara / chandrabindu lost, gained or swapped.
    assert task.error_kinds("हिदी", "हिंदी") == {"nasal"}
    assert task.error_kinds("हिंदी", "हिदी") == {"nasal"}
    assert task.error_kinds("हँसी", "हंसी") == {"nasal"}
    # The anusvara spelt as a nasal consonant + virama: nasal only, not a conjunct error.
    assert task.error_kinds("हिन्दी", "हिंदी") == {"nasal"}
    assert task.error_kinds("चंपा", "चम्पा") == {"nasal"}
    # A nasal consonant in place of another letter is not the anusvara rule.
    assert task.error_kinds("ममा", "मवा") == {"word end"}  # व -> म in the last two letters
    assert task.error_kinds("नमल", "कमल") == {"other"}
    assert task.error_kinds("लूपू", "लूपुम") == {"word end"}
    counts = task.error_summary(["नमल", "हिदी", "हिन्दी"], [["कमल"], ["हिंदी"], ["हिंदी"]])
    assert counts == {"vowel length": 0, "virama / conjunct": 0, "nasal": 2, "word end": 0, "other": 1}


def test_heatmap_titles_show_reference_and_mark_right_or_wrong():
    from course_lib.plots.fonts import missing_glyphs

    words = ["kamal", "audayabhet"]
    decoded = {
        "predictions": ["कमल", "अदद्यभीत"],
        "alignments": [np.full((4, 5), 0.2), np.full((9, 10), 0.1)],
        "sources": [list("kamal"), list("audayabhet")],
    }
    references = [["कमल"], ["औदयभेत", "औदयबेत"]]
    titles = [e["title"] for e in task.heatmap_examples(words, decoded, None, references=references)]
    assert titles == ["kamal → कमल ✓", "audayabhet → अदद्यभीत ✗\nreference औदयभेत"]
    # The marks and the Devanagari draw with the plot font.
    assert missing_glyphs([line for title in titles for line in title.split("\n")]) == []
    # A single string per word works too; without references the titles are as before.
    assert task.heatmap_examples(words, decoded, None, references=["कमल", "x"])[1]["title"].startswith(
        "audayabhet → अदद्यभीत ✗")
    assert [e["title"] for e in task.heatmap_examples(words, decoded, None)] == [
        "kamal → कमल", "audayabhet → अदद्यभीत"]
    with pytest.raises(ValueError, match="references"):
        task.heatmap_examples(words, decoded, None, references=[["कमल"]])


def test_accuracy_by_length():
    table = task.accuracy_by_length(["ghar", "kamala", "shastragaar"], ["घर", "कमल", "शस्त्रागार"],
                                    [["घर"], ["कमला"], ["शस्त्रागार"]])
    assert table == {"1-6": (0.5, 2), "10-12": (1.0, 1)}


def test_error_positions():
    predictions = ["कमला", "कविता", "कवि", "हिदी", "घर"]
    references = [["कमल", "कमला"], ["कविता"], ["कविता"], "हिंदी", ["घरा"]]
    # wrong: कवि (first 3 of 5 letters right, too short), हिदी (2 of 5 right: first half,
    # too short), घर (2 of 3 right, too short); कमला and कविता are accepted spellings
    assert task.error_positions(predictions, references) == {"wrong": 3, "second_half": 2, "too_short": 3}
    assert task.error_positions(["कवित"], [["कविता"]]) == {"wrong": 1, "second_half": 1, "too_short": 1}
    assert task.error_positions(["अविता"], [["कविता"]]) == {"wrong": 1, "second_half": 0, "too_short": 0}
    assert task.error_positions(["कविता"], [["कविता"]]) == {"wrong": 0, "second_half": 0, "too_short": 0}
    with pytest.raises(ValueError, match="one string per word"):
        task.error_positions("कवि", ["कविता"] * 3)
    with pytest.raises(ValueError, match="references"):
        task.error_positions(["कवि", "घर"], [["कविता"]])


def test_token_noise_only_touches_real_tokens():
    rng = np.random.default_rng(0)
    ids = np.array([[1, 5, 6, 7, 0, 0]] * 200, "int32")
    noisy = task.token_noise(ids, 0.3, rng, keep_first=True)
    assert np.all(noisy[:, 0] == 1) and np.all(noisy[:, 4:] == 0)
    changed = noisy[:, 1:4] != ids[:, 1:4]
    assert np.all(noisy[:, 1:4][changed] == 3)
    assert 0.2 < changed.mean() < 0.4
    assert task.token_noise(ids, 0.0, rng) is ids


def test_smoothed_loss_reduces_to_masked_loss_and_serialises():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 4, 7)).astype("float32")
    target = np.array([[4, 5, 2, 0], [6, 2, 0, 0], [4, 4, 4, 2]])
    plain = float(MaskedTokenLoss()(target, logits))
    assert float(SmoothedMaskedTokenLoss(0.0)(target, logits)) == pytest.approx(plain, rel=1e-5)
    smoothed = SmoothedMaskedTokenLoss(0.1)
    assert float(smoothed(target, logits)) != pytest.approx(plain, rel=1e-3)
    again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(smoothed))
    assert again.label_smoothing == 0.1
    with pytest.raises(ValueError, match="label_smoothing"):
        SmoothedMaskedTokenLoss(1.0)


def test_fast_profile_config_and_multi_reference_evaluation():
    config = task.TransliterationConfig.for_profile("fast", epochs=1, units=16, embedding_dim=8)
    assert config.bidirectional and config.deep_output and config.attention
    train, valid, _ = task.generated_splits(task.TransliterationConfig.for_profile("fast", train_words=200))
    assert config.steps_per_execution > 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = task.train(config, train[:200], valid[:60], verbose=0)
    # The validation set (a generator) has a known length: Keras does not run
    # it dry, so there is no "Your input ran out of data" warning, and every
    # epoch is validated.
    assert not [w for w in caught if "ran out of data" in str(w.message)], [str(w.message) for w in caught]
    assert len(result["history"]["val_loss"]) == config.epochs
    model, source_vocab, target_vocab = result["model"], result["source_vocab"], result["target_vocab"]
    # Exactly the epoch's batches, although 4 is not a multiple of the configured 20 steps per execution.
    steps_per_epoch = -(-200 // config.batch_size)
    assert steps_per_epoch % config.steps_per_execution
    assert int(model.optimizer.iterations) == config.epochs * steps_per_epoch
    word = valid[0].roman
    prediction = task.transliterate_words(model, source_vocab, target_vocab, [word])["predictions"][0]
    # Any accepted spelling counts: the model's own output added as a second reference scores 1.
    from course_lib.data.transliteration_pairs import TransliterationPair

    pairs = [TransliterationPair(word, valid[0].native, 1), TransliterationPair(word, prediction or "क", 2)]
    metrics = task.evaluate(model, source_vocab, target_vocab, pairs, beam_width=1)
    assert metrics["words"] == 1
    assert metrics["word_accuracy"] == (1.0 if prediction else float(prediction == valid[0].native))


def test_the_config_has_no_length_penalty_and_runs_saved_with_one_still_load():
    # `TransliterationConfig.length_penalty` was range-checked and saved, but nothing read it: evaluation takes
    # `length_penalty` (`evaluate transliteration --length-penalty`). A value given to the config is refused.
    import dataclasses

    with pytest.raises(ValueError, match=r"no setting 'length_penalty'.*Received: length_penalty=2.0"):
        task.TransliterationConfig.for_profile("fast", length_penalty=2.0)
    saved = {"config": {**dataclasses.asdict(task.TransliterationConfig()), "length_penalty": 2.0}}
    assert task.config_from_state(saved) == task.TransliterationConfig()


def test_greedy_transliteration_refuses_a_length_penalty():
    # It used to be dropped: the penalty went to the beam only, and greedy decoding was asked for.
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.text.vocabulary import Vocabulary

    source_vocab = Vocabulary.from_texts(["ghar"], level="char")
    target_vocab = Vocabulary.from_texts(["घर"], level="char")
    model = Seq2Seq(len(source_vocab), len(target_vocab), embedding_dim=4, units=4, max_output_length=4)
    with pytest.raises(ValueError, match=r"Received: length_penalty=5.0, beam_width=1"):
        task.transliterate_words(model, source_vocab, target_vocab, ["ghar"], length_penalty=5.0)
    assert len(task.transliterate_words(model, source_vocab, target_vocab, ["ghar"], beam_width=2,
                                        length_penalty=5.0)["candidates"][0]) == 2
    with pytest.raises(ValueError, match=r"`max_length` must be a whole number >= 1. Received: max_length=0"):
        task.transliterate_words(model, source_vocab, target_vocab, ["ghar"], max_length=0)  # was the default



def test_rerank_refuses_an_overflowing_weight_and_a_reranker_of_other_letters():
    from course_lib.data.transliteration_pairs import TransliterationPair
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.text.vocabulary import Vocabulary

    roman_vocab = Vocabulary.from_texts(["ghar", "kamal"], level="char", lowercase=True)
    native_vocab = Vocabulary.from_texts(["घर", "कमल"], level="char")
    other_roman = Vocabulary.from_texts(["kal"], level="char", lowercase=True)

    def seq2seq(source_vocab, seed):
        keras.utils.set_random_seed(seed)
        return Seq2Seq(len(source_vocab), len(native_vocab), embedding_dim=4, units=4, max_output_length=4)

    model = seq2seq(roman_vocab, 0)
    reranker = task.Reranker("right-to-left", seq2seq(roman_vocab, 1), roman_vocab, native_vocab)
    words = ["ghar", "kamal"]
    decoded = task.transliterate_words(model, roman_vocab, native_vocab, words, beam_width=2)
    # 1e308 times a log-probability overflowed: every combined score -inf, with a RuntimeWarning.
    with pytest.raises(ValueError, match=r"at most 1,000,000 .*Received: weight=1e\+308"):
        task.rerank(decoded, words, reranker, weight=1e308)
    assert len(task.rerank(decoded, words, reranker, weight=1e6)["predictions"]) == 2
    # A reranker that knows other roman letters would read most of them as <unk>.
    other = task.Reranker("right-to-left", seq2seq(other_roman, 2), other_roman, native_vocab)
    pairs = [TransliterationPair("ghar", "घर", 1), TransliterationPair("kamal", "कमल", 2)]
    with pytest.raises(ValueError, match=r"A reranker must know the letters of the model .*Received: the reranker "
                                         r"lacks 4 roman letters of the model \('ghmr'\)"):
        task.evaluate(model, roman_vocab, native_vocab, pairs, beam_width=2, reranker=other)
    # It re-encodes words and candidates itself: the same letters under other ids, or more of them, do no harm.
    wider_roman = Vocabulary.from_texts(["zzz", "kamal", "ghar"], level="char", lowercase=True)
    assert wider_roman.tokens != roman_vocab.tokens
    wider = task.Reranker("right-to-left", seq2seq(wider_roman, 3), wider_roman, native_vocab)
    assert task.evaluate(model, roman_vocab, native_vocab, pairs, beam_width=2, reranker=wider)["words"] == 2
    # Nor does a reranker score the candidates of a reverse (native-roman) model.
    with pytest.raises(ValueError, match=r"roman-native model. Received: the model, a native-roman model"):
        task.evaluate(model, roman_vocab, native_vocab, pairs, beam_width=2, reranker=reranker,
                      direction="native-roman")
    assert task.evaluate(model, roman_vocab, native_vocab, pairs, beam_width=2, reranker=reranker)["words"] == 2
