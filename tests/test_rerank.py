"""Reranking the beam with a channel or right-to-left model: teacher-forced sequence scores,
the combined score, right-to-left decoding, the task functions and the CLI."""

import json
import shutil

import keras
import numpy as np
import pytest

from course_lib.cli import main
from course_lib.data.buckets import batched_log_probs
from course_lib.data.transliteration_pairs import TransliterationPair
from course_lib.data.transliteration_words import generate_pairs
from course_lib.decoding.rerank import rerank_scores
from course_lib.decoding.sequences import reverse_tokens
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
    scores = batched_log_probs(model, np.repeat(SOURCE, k, axis=0), beams["beam_tokens"].reshape(batch * k, length))
    # Two independent routes to log P(y | x): step-by-step decoding and one teacher-forced pass.
    np.testing.assert_allclose(scores.reshape(batch, k), beams["beam_log_probs"], atol=1e-4)
    # Padding after <stop> adds nothing; a longer (padded) target array gives the same scores.
    padded = np.pad(beams["beam_tokens"].reshape(batch * k, length), ((0, 0), (0, 4)))
    np.testing.assert_allclose(batched_log_probs(model, np.repeat(SOURCE, k, axis=0), padded), scores, atol=1e-5)


def test_batched_log_probs_rejects_bad_input():
    model = _model(11, 13)
    with pytest.raises(ValueError, match="Received: source.shape=\\(3, 5\\), target.shape=\\(2, 4\\)"):
        batched_log_probs(model, SOURCE, np.ones((2, 4), "int32"))
    with pytest.raises(ValueError, match="target.dtype=float"):
        batched_log_probs(model, SOURCE, np.ones((3, 4), "float32"))


def test_rerank_score():
    direct = np.array([[-0.1, -0.3], [-0.2, -0.25]])
    other = np.array([[-9.0, -1.0], [-4.0, -8.0]])
    lengths = np.array([5, 4])
    np.testing.assert_allclose(rerank_scores(direct, other, lengths, 0.0), direct)
    np.testing.assert_allclose(rerank_scores(direct, other, lengths, 2.0),
                               [[-0.1 - 3.6, -0.3 - 0.4], [-0.2 - 2.0, -0.25 - 4.0]])
    per_candidate = np.array([[5, 2], [4, 8]])
    np.testing.assert_allclose(rerank_scores(direct, other, per_candidate, 1.0),
                               [[-0.1 - 1.8, -0.3 - 0.5], [-0.2 - 1.0, -0.25 - 1.0]])
    with pytest.raises(ValueError, match="Received: \\(2, 2\\) and \\(2, 1\\)"):
        rerank_scores(direct, other[:, :1], lengths)
    with pytest.raises(ValueError, match="other_lengths"):
        rerank_scores(direct, other, lengths[:1])
    with pytest.raises(ValueError, match="smallest 0"):
        rerank_scores(direct, other, np.array([0, 3]))
    with pytest.raises(ValueError, match="weight=-1"):
        rerank_scores(direct, other, lengths, -1)


def test_reverse_tokens_keeps_stop_and_padding_in_place():
    ids = np.array([[5, 6, 7, 2, 0], [8, 9, 0, 0, 0], [4, 5, 6, 7, 8]])
    flipped = reverse_tokens(ids, stop_id=2)
    np.testing.assert_array_equal(flipped, [[7, 6, 5, 2, 0], [9, 8, 0, 0, 0], [8, 7, 6, 5, 4]])
    np.testing.assert_array_equal(reverse_tokens(flipped, stop_id=2), ids)
    assert ids[0, 0] == 5  # the input is not changed
    with pytest.raises(ValueError, match="ids.shape=\\(5,\\)"):
        reverse_tokens(ids[0], stop_id=2)


@pytest.fixture(scope="module")
def small_models():
    pairs = generate_pairs(200, seed=3)
    roman_vocab, native_vocab = task.build_vocabularies(pairs)
    assert task.build_vocabularies(pairs, "native-roman") == (native_vocab, roman_vocab)
    forward = _model(len(roman_vocab), len(native_vocab), seed=1)
    reverse = _model(len(native_vocab), len(roman_vocab), seed=2)
    backwards = _model(len(roman_vocab), len(native_vocab), seed=4)
    bias = np.zeros(len(native_vocab), "float32")
    bias[2] = 1.5  # <stop> likely within a few letters, so that most beams finish before max_length
    backwards.decoder.output_layer.bias.assign(bias)
    backwards_other = _model(len(roman_vocab), len(native_vocab), seed=6)
    words = [p.roman for p in pairs[:12]]
    decoded = task.transliterate_words(forward, roman_vocab, native_vocab, words, beam_width=3)
    return {
        "decoded": decoded, "words": words, "vocabs": (roman_vocab, native_vocab),
        "channel": task.Reranker("channel", reverse, native_vocab, roman_vocab),
        "right_to_left": task.Reranker("right-to-left", backwards, roman_vocab, native_vocab),
        "forward": forward, "backwards_other": backwards_other,
    }


def test_channel_scores_and_rerank_order(small_models):
    decoded, words, channel = small_models["decoded"], small_models["words"], small_models["channel"]
    log_probs, lengths = task.reranker_log_probs(decoded, words, channel)
    assert log_probs.shape == (12, 3) and np.all(log_probs < 0)
    np.testing.assert_array_equal(lengths[:, 0], [len(w) + 1 for w in words])  # |x| + <stop>
    # The same number from the scorer itself: log P(roman | native candidate).
    direct = batched_log_probs(channel.model, channel.source_vocab.encode([decoded["candidates"][0][1]]),
                                channel.target_vocab.encode([words[0]], add_stop=True))
    np.testing.assert_allclose(log_probs[0, 1], direct[0], atol=1e-5)

    unchanged = task.rerank(decoded, words, channel, weight=0.0)
    assert unchanged["candidates"] == decoded["candidates"]
    assert "alignments" not in unchanged
    # An impossible candidate (-inf, as an empty one gets) keeps its place at weight 0 too; it used
    # to be moved last (0 * -inf = NaN, mapped to -inf).
    impossible = log_probs.copy()
    impossible[:, 0] = -np.inf
    kept = task.rerank(decoded, words, channel, weight=0.0, scored=(impossible, lengths))
    assert kept["candidates"] == decoded["candidates"]
    np.testing.assert_array_equal(np.stack(kept["scores"]), np.stack(decoded["scores"]))
    only_channel = task.rerank(decoded, words, channel, weight=1e6, scored=(log_probs, lengths))
    for row, scores, reranked in zip(decoded["candidates"], log_probs / lengths, only_channel["candidates"]):
        assert reranked[0] == row[int(np.argmax(scores))]
        assert sorted(reranked) == sorted(row)
    assert only_channel["predictions"] == [row[0] for row in only_channel["candidates"]]
    assert any(a != b for a, b in zip(only_channel["predictions"], decoded["predictions"]))
    for scores in only_channel["scores"]:
        assert np.all(np.diff(scores) <= 0)


def test_right_to_left_decoding_and_scoring_agree(small_models):
    backwards = small_models["right_to_left"]
    roman_vocab, native_vocab = small_models["vocabs"]
    words = small_models["words"]
    decoded = task.transliterate_words(backwards.model, roman_vocab, native_vocab, words, beam_width=3,
                                       right_to_left=True)
    # The right-to-left model's own beams, put in reading order, then re-reversed and scored by a
    # teacher-forced pass of the same model: the length-normalised scores must match the beam's.
    log_probs, lengths = task.reranker_log_probs(decoded, words, backwards)
    # (A beam cut at max_length has no <stop>; the scorer adds one, so compare finished beams.)
    beams = backwards.model.generate(roman_vocab.encode(words), beam_width=3)
    finished = (beams["beam_tokens"] == 2).any(axis=-1)  # (words, 3); same word order and beam order
    finished &= np.array([[bool(c) for c in row] for row in decoded["candidates"]])  # empty ones score -inf
    assert finished.mean() > 0.5
    np.testing.assert_allclose((log_probs / lengths)[finished], np.stack(decoded["scores"])[finished], atol=1e-4)
    raw = backwards.model.generate(roman_vocab.encode(words[:1]), beam_width=3)
    written = native_vocab.decode(raw["tokens"][0])
    assert decoded["predictions"][0] == written[::-1]  # (generated words: one code point per token)
    steps = len(decoded["alignments"][0])
    np.testing.assert_allclose(decoded["alignments"][0][: steps - 1],
                               raw["alignments"][0][: steps - 1][::-1, : len(words[0])], atol=1e-6)


def test_several_reranking_models_average_their_log_probs(small_models):
    decoded, words, backwards = small_models["decoded"], small_models["words"], small_models["right_to_left"]
    other = task.Reranker("right-to-left", small_models["backwards_other"], backwards.source_vocab,
                          backwards.target_vocab)
    both = task.Reranker("right-to-left", [backwards.model, other.model], backwards.source_vocab,
                         backwards.target_vocab)
    assert both.models == (backwards.model, other.model) and backwards.models == (backwards.model,)
    first, lengths = task.reranker_log_probs(decoded, words, backwards)
    second, _ = task.reranker_log_probs(decoded, words, other)
    assert not np.allclose(first, second)
    mean, mean_lengths = task.reranker_log_probs(decoded, words, both)
    np.testing.assert_allclose(mean, (first + second) / 2, atol=1e-6)
    np.testing.assert_array_equal(mean_lengths, lengths)
    with pytest.raises(ValueError, match="at least one model"):
        task.Reranker("right-to-left", [], backwards.source_vocab, backwards.target_vocab)


def test_rerank_refuses_what_it_cannot_use(small_models):
    decoded, words, channel = small_models["decoded"], small_models["words"], small_models["channel"]
    with pytest.raises(ValueError, match="must read Devanagari and write roman"):
        task.Reranker("channel", small_models["forward"], channel.target_vocab, channel.source_vocab)
    with pytest.raises(ValueError, match="must read roman letters and write Devanagari"):
        task.Reranker("right-to-left", channel.model, channel.source_vocab, channel.target_vocab)
    with pytest.raises(ValueError, match="kind='both'"):
        task.Reranker("both", channel.model, channel.source_vocab, channel.target_vocab)
    roman_vocab, native_vocab = small_models["vocabs"]
    greedy = task.transliterate_words(small_models["forward"], roman_vocab, native_vocab, words, beam_width=1)
    with pytest.raises(ValueError, match="at least 2"):
        task.reranker_log_probs(greedy, words, channel)
    with pytest.raises(ValueError, match="Received: 11 words"):
        task.reranker_log_probs(decoded, words[:11], channel)


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
    backwards = tmp_path / "backwards"
    assert main(["train", "transliteration", "--right-to-left", "--out", str(backwards)] + tiny) == 0
    assert json.loads((reverse / "training_state.json").read_text())["config"]["direction"] == "native-roman"
    # Resuming the reverse run as a forward one would mix up the vocabularies: refused.
    assert main(["train", "transliteration", "--direction", "roman-native", "--out", str(reverse)]
                + tiny + ["--epochs", "2"]) == 2
    assert "holds a native-roman model" in capsys.readouterr().err
    # Left out, the kind is the saved run's: both runs resume as what they are.
    for folder, kind in ((reverse, ("native-roman", False)), (backwards, ("roman-native", True))):
        assert main(["train", "transliteration", "--out", str(folder)] + tiny + ["--epochs", "2"]) == 0
        state = json.loads((folder / "training_state.json").read_text())
        assert (state["config"]["direction"], state["config"]["right_to_left"]) == kind
        assert state["epochs_done"] == 2

    # The reverse model is a transliterator of its own (Devanagari -> roman), scored per native word.
    metrics_path = tmp_path / "reverse.json"
    assert main(["evaluate", "transliteration", "--model", str(reverse), "--test", str(test),
                 "--metrics-json", str(metrics_path)]) == 0
    assert json.loads(metrics_path.read_text())["words"] == len({p.native for p in pairs[100:]})

    # (Without --rerank-weight the reranker gets one member's vote: 1 / number of models.)
    for reranker, kind, weight_flag, weight in ((reverse, "channel", ["--rerank-weight", "0.5"], 0.5),
                                                (backwards, "right-to-left", [], 1.0)):
        metrics_path = tmp_path / f"reranked_{kind}.json"
        assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                     "--rerank-with", str(reranker), "--metrics-json", str(metrics_path)] + weight_flag) == 0
        metrics = json.loads(metrics_path.read_text())
        assert metrics["reranked_with"] == [str(reranker)] and metrics["rerank_weight"] == weight
        assert metrics["reranker_kind"] == kind
        assert 0.0 <= metrics["word_accuracy"] <= metrics["top_k_accuracy"] <= 1.0 and metrics["words"] == 20
    # Two reranking folders are averaged, and by default each gets one member's vote (2 / 1 model).
    metrics_path = tmp_path / "reranked_twice.json"
    backwards_copy = tmp_path / "backwards_copy"
    shutil.copytree(backwards, backwards_copy)
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(backwards), "--rerank-with", str(backwards_copy),
                 "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    assert metrics["reranked_with"] == [str(backwards), str(backwards_copy)] and metrics["rerank_weight"] == 2.0
    # The same folder twice would count twice: refused.
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(backwards), "--rerank-with", str(backwards)]) == 2
    assert f"{str(backwards)!r} is given twice" in capsys.readouterr().err
    # ... but only folders of one kind.
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(backwards), "--rerank-with", str(reverse)]) == 2
    assert "same direction" in capsys.readouterr().err
    # The right-to-left model also transliterates on its own, in reading order.
    assert main(["transliterate", "--model", str(backwards), "ghar"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("ghar\t")
    # A left-to-right and a right-to-left model do not make one ensemble.
    assert main(["evaluate", "transliteration", "--model", str(forward), "--model", str(backwards),
                 "--test", str(test)]) == 2
    assert "same direction" in capsys.readouterr().err
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test),
                 "--rerank-with", str(reverse)]) == 2
    assert "use --beam 2 or more" in capsys.readouterr().err
    assert main(["evaluate", "transliteration", "--model", str(forward), "--test", str(test), "--beam", "3",
                 "--rerank-with", str(forward)]) == 2
    assert "Received: roman-native model" in capsys.readouterr().err
