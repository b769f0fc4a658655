"""Noisy-channel reranking: teacher-forced sequence scores, the combined score, the task and CLI."""

import json

import keras
import numpy as np
import pytest

from course_lib.cli import main
from course_lib.data.transliteration_pairs import TransliterationPair
from course_lib.data.transliteration_words import generate_pairs
from course_lib.decoding.rerank import noisy_channel_scores, sequence_log_probs
from course_lib.models import Seq2Seq
from course_lib.tasks import transliteration as task

SOURCE = np.array([[4, 5, 6, 7, 0], [8, 9, 4, 0, 0], [5, 5, 5, 5, 5]], "int32")


def _model(source_vocab, target_vocab, seed=0):
    keras.utils.set_random_seed(seed)
    model = Seq2Seq(source_vocab, target_vocab, embedding_dim=8, units=16, bidirectional=True, deep_output=True,
                    max_output_length=8)
    model.build()
    return model


def test_teacher_forced_score_equals_what_beam_search_accumulated():
    model = _model(11, 13)
    beams = model.generate(SOURCE, beam_width=3)
    batch, k, length = beams["beam_tokens"].shape
    scores = sequence_log_probs(model, np.repeat(SOURCE, k, axis=0), beams["beam_tokens"].reshape(batch * k, length))
    # Two independent routes to log P(y | x): step-by-step decoding and one teacher-forced pass.
    np.testing.assert_allclose(scores.reshape(batch, k), beams["beam_log_probs"], atol=1e-4)
    # Padding after <stop> adds nothing; a longer (padded) target array gives the same scores.
    padded = np.pad(beams["beam_tokens"].reshape(batch * k, length), ((0, 0), (0, 4)))
    np.testing.assert_allclose(sequence_log_probs(model, np.repeat(SOURCE, k, axis=0), padded), scores, atol=1e-5)


def test_sequence_log_probs_rejects_bad_input():
    model = _model(11, 13)
    with pytest.raises(ValueError, match="Received: source.shape=\\(3, 5\\), target.shape=\\(2, 4\\)"):
        sequence_log_probs(model, SOURCE, np.ones((2, 4), "int32"))
    with pytest.raises(ValueError, match="target.dtype=float"):
        sequence_log_probs(model, SOURCE, np.ones((3, 4), "float32"))


def test_noisy_channel_score():
    direct = np.array([[-0.1, -0.3], [-0.2, -0.25]])
    channel = np.array([[-9.0, -1.0], [-4.0, -8.0]])
    lengths = np.array([4, 3])
    np.testing.assert_allclose(noisy_channel_scores(direct, channel, lengths, 0.0), direct)
    np.testing.assert_allclose(noisy_channel_scores(direct, channel, lengths, 2.0),
                               [[-0.1 - 3.6, -0.3 - 0.4], [-0.2 - 2.0, -0.25 - 4.0]])
    with pytest.raises(ValueError, match="Received: \\(2, 2\\) and \\(2, 1\\)"):
        noisy_channel_scores(direct, channel[:, :1], lengths)
    with pytest.raises(ValueError, match="source_lengths"):
        noisy_channel_scores(direct, channel, lengths[:1])
    with pytest.raises(ValueError, match="weight=-1"):
        noisy_channel_scores(direct, channel, lengths, -1)


@pytest.fixture(scope="module")
def small_models():
    pairs = generate_pairs(200, seed=3)
    roman_vocab, native_vocab = task.build_vocabularies(pairs)
    assert task.build_vocabularies(pairs, "native-roman") == (native_vocab, roman_vocab)
    forward = _model(len(roman_vocab), len(native_vocab), seed=1)
    reverse = _model(len(native_vocab), len(roman_vocab), seed=2)
    words = [p.roman for p in pairs[:12]]
    decoded = task.transliterate_words(forward, roman_vocab, native_vocab, words, beam_width=3)
    return {"decoded": decoded, "words": words, "channel": (reverse, native_vocab, roman_vocab),
            "forward": (forward, roman_vocab, native_vocab)}


def test_rerank_orders_by_the_combined_score(small_models):
    decoded, words, channel = small_models["decoded"], small_models["words"], small_models["channel"]
    log_probs = task.channel_log_probs(decoded, words, channel)
    assert log_probs.shape == (12, 3) and np.all(log_probs < 0)
    # The same number from the scorer itself: log P(roman | native candidate).
    reverse, native_vocab, roman_vocab = channel
    direct = sequence_log_probs(reverse, native_vocab.encode([decoded["candidates"][0][1]]),
                                roman_vocab.encode([words[0]], add_stop=True))
    np.testing.assert_allclose(log_probs[0, 1], direct[0], atol=1e-5)

    unchanged = task.rerank_with_channel(decoded, words, channel, weight=0.0)
    assert unchanged["candidates"] == decoded["candidates"]
    assert "alignments" not in unchanged
    only_channel = task.rerank_with_channel(decoded, words, channel, weight=1e6, log_probs=log_probs)
    for row, scores, reranked in zip(decoded["candidates"], log_probs, only_channel["candidates"]):
        assert reranked[0] == row[int(np.argmax(scores))]
        assert sorted(reranked) == sorted(row)
    assert only_channel["predictions"] == [row[0] for row in only_channel["candidates"]]
    assert any(a != b for a, b in zip(only_channel["predictions"], decoded["predictions"]))
    for scores in only_channel["scores"]:
        assert np.all(np.diff(scores) <= 0)


def test_rerank_refuses_what_it_cannot_use(small_models):
    decoded, words, channel = small_models["decoded"], small_models["words"], small_models["channel"]
    with pytest.raises(ValueError, match="read Devanagari and write roman"):
        task.channel_log_probs(decoded, words, small_models["forward"])
    forward, roman_vocab, native_vocab = small_models["forward"]
    greedy = task.transliterate_words(forward, roman_vocab, native_vocab, words, beam_width=1)
    with pytest.raises(ValueError, match="at least 2"):
        task.channel_log_probs(greedy, words, channel)
    with pytest.raises(ValueError, match="Received: 11 words"):
        task.channel_log_probs(decoded, words[:11], channel)


def test_reverse_direction_groups_references_by_native():
    pairs = [TransliterationPair("ghar", "घर", 1), TransliterationPair("gharr", "घर", 2),
             TransliterationPair("kamal", "कमल", 3)]
    roman_vocab, native_vocab = task.build_vocabularies(pairs)
    words, references = task.test_items(pairs, roman_vocab, "native-roman")
    assert words == ["घर", "कमल"] and references == [["ghar", "gharr"], ["kamal"]]
    source, target = task.encode_pairs(pairs, native_vocab, roman_vocab, "native-roman")
    assert native_vocab.decode(source[0]) == "घर" and roman_vocab.decode(target[1]) == "gharr"
    with pytest.raises(ValueError, match="direction='hindi-english'"):
        task.sides(pairs, "hindi-english")


def _csv(path, pairs):
    path.write_text("\n".join(f"{p.roman},{p.native}" for p in pairs), encoding="utf-8")
    return path


def test_cli_trains_a_reverse_model_and_reranks_with_it(tmp_path, capsys):
    pairs = generate_pairs(120, seed=5)
    train, test = _csv(tmp_path / "train.csv", pairs[:100]), _csv(tmp_path / "test.csv", pairs[100:])
    tiny = ["--units", "16", "--embedding-dim", "8", "--batch-size", "32", "--epochs", "1", "--train", str(train)]
    forward, reverse = tmp_path / "forward", tmp_path / "reverse"
    assert main(["train", "transliteration", "--out", str(forward)] + tiny) == 0
    assert main(["train", "transliteration", "--direction", "native-roman", "--out", str(reverse)] + tiny) == 0
    assert json.loads((reverse / "training_state.json").read_text())["config"]["direction"] == "native-roman"
    # Resuming the reverse run as a forward one would mix up the vocabularies: refused.
    assert main(["train", "transliteration", "--out", str(reverse)] + tiny[:-2] + ["--epochs", "2"]) == 2
    assert "holds a native-roman model" in capsys.readouterr().err

    # The reverse model is a transliterator of its own (Devanagari -> roman), scored per native word.
    metrics_path = tmp_path / "reverse.json"
    assert main(["evaluate", "transliteration", "--model", str(reverse), "--test", str(test),
                 "--metrics-json", str(metrics_path)]) == 0
    assert json.loads(metrics_path.read_text())["words"] == len({p.native for p in pairs[100:]})

    metrics_path = tmp_path / "reranked.json"
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(reverse), "--rerank-weight", "0.5", "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    assert metrics["reranked_with"] == str(reverse) and metrics["rerank_weight"] == 0.5
    assert 0.0 <= metrics["word_accuracy"] <= metrics["top_k_accuracy"] <= 1.0 and metrics["words"] == 20
    capsys.readouterr()
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test),
                 "--rerank-with", str(reverse)]) == 2
    assert "use --beam 2 or more" in capsys.readouterr().err
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(forward)]) == 2
    assert "read Devanagari and write roman" in capsys.readouterr().err
