"""The data pipelines' inputs: epochs that reshuffle, targets with `<stop>`, counts, empty utterances,
UTF-16 files, empty articles and splits too small for their parts."""

import numpy as np
import pytest

from course_lib.data import buckets, char_corpus, dialogs, hindi_english
from course_lib.data.bbc import load_bbc, read_text
from course_lib.data.csv_documents import load_csv_documents
from course_lib.data.tf_data import array_dataset
from course_lib.text.documents import pad_documents
from course_lib.text.vocabulary import STOP, Vocabulary


def _pairs(count=60, seed=0):
    """Padded sources `(count, 8)` and reversed targets with `<stop>` `(count, 9)`."""
    rng = np.random.default_rng(seed)
    source, target = np.zeros((count, 8), "int32"), np.zeros((count, 9), "int32")
    for row, length in enumerate(rng.integers(1, 9, size=count)):
        source[row, :length] = rng.integers(4, 20, size=length)
        target[row, :length] = source[row, :length][::-1]
        target[row, length] = STOP
    return source, target


def _noise(inputs, target_out, rng):
    """A transform whose output shows the randomness it was given."""
    return {**inputs, "source": np.where(rng.random(inputs["source"].shape) < 0.3, 3, inputs["source"])}, target_out


def _passes(dataset, count):
    return [[tuple(np.asarray(part).tolist() for part in (b[0]["source"], b[0]["target_in"], b[1]))
             for b in dataset] for _ in range(count)]


def _as_lists(batches):
    return [tuple(np.asarray(part).tolist() for part in (b[0]["source"], b[0]["target_in"], b[1])) for b in batches]


# -- 1: every pass over a dataset is a new epoch ---------------------------------------------------------------


@pytest.mark.parametrize("bucketed", [True, False])
def test_each_pass_reshuffles_and_the_same_seed_gives_the_same_passes(bucketed):
    source, target = _pairs()
    dataset = buckets.as_dataset(source, target, 8, bucketed=bucketed, seed=5, transform=_noise)
    passes = _passes(dataset, 3)
    assert passes[0] != passes[1] and passes[1] != passes[2]  # order and noise drawn anew each epoch
    # Pass k is the epoch `make_batches` gives for seed + k; a new dataset with the seed gives them again.
    for k, batches in enumerate(passes):
        assert batches == _as_lists(buckets.make_batches(source, target, 8, bucketed, seed=5 + k, transform=_noise))
    again = buckets.as_dataset(source, target, 8, bucketed=bucketed, seed=5, transform=_noise)
    assert _passes(again, 3) == passes
    # Every pass holds every example once.
    for batches in passes:
        assert sorted([i for i in row if i] for b in batches for row in b[2]) == sorted(
            [i for i in row if i] for row in target.tolist())
    # Without a seed every pass is the same sorted order (for evaluation).
    fixed = buckets.as_dataset(source, target, 8, bucketed=bucketed, seed=None)
    first, second = _passes(fixed, 2)
    assert first == second


@pytest.mark.parametrize("bucketed", [True, False])
def test_the_endless_stream_is_pass_after_pass_and_starts_again_the_same(bucketed):
    # repeat=True is unchanged: seed, seed + 1, ... in one stream; a new iterator starts it again from its first
    # batch (`fit_steps` continues it with `skip`).
    source, target = _pairs()
    expected = [batch for k in range(3)
                for batch in _as_lists(buckets.make_batches(source, target, 8, bucketed, seed=5 + k, transform=_noise))]
    endless = buckets.as_dataset(source, target, 8, bucketed=bucketed, seed=5, repeat=True, transform=_noise)
    assert _as_lists(endless.take(len(expected))) == expected
    assert _as_lists(endless.take(len(expected))) == expected


def test_keras_fit_sees_a_new_order_each_epoch():
    import keras

    seen = []

    def spy(inputs, target_out, rng):
        seen.append(inputs["source"][:, 0].tolist())
        return inputs, target_out

    source = np.array([[4 + i % 9, 5, 0] for i in range(40)], "int32")
    target = np.array([[4 + i % 9, STOP, 0] for i in range(40)], "int32")
    dataset = buckets.as_dataset(source, target, 8, seed=0, transform=spy)
    source_in = keras.Input((None,), name="source", dtype="int32")
    target_in = keras.Input((None,), name="target_in", dtype="int32")
    logits = keras.layers.Dense(14)(keras.layers.Embedding(14, 4)(target_in))
    model = keras.Model({"source": source_in, "target_in": target_in}, logits)
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(dataset, epochs=2, verbose=0, shuffle=False)
    assert len(seen) == 10 and seen[:5] != seen[5:]


# -- 2: targets must end with <stop> ------------------------------------------------------------------------


def test_targets_without_stop_are_refused():
    vocabulary = Vocabulary.from_texts(["abc", "ba"], level="char")
    source = vocabulary.encode(["abc", "ba"])
    forgotten = vocabulary.encode(["cba", "ab"])  # `add_stop=True` forgotten
    for make in (lambda: buckets.make_batches(source, forgotten, 2),
                 lambda: buckets.as_dataset(source, forgotten, 2)):
        with pytest.raises(ValueError, match=rf"<stop>.*target row 0 ends with id {vocabulary.index['a']} \(2 of 2 rows"):
            make()
    with_stop = vocabulary.encode(["cba", "ab"], add_stop=True)
    one_bad = with_stop.copy()
    one_bad[1] = 0  # an all-padding row
    with pytest.raises(ValueError, match="target row 1 is all padding"):
        buckets.make_batches(source, one_bad, 2)
    batches = buckets.make_batches(source, with_stop, 2)
    assert sum(len(b[1]) for b in batches) == 2


# -- 3: counts are whole numbers, named when wrong ---------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [0, 2.5, None, True, "4"])
def test_a_batch_size_that_is_not_a_count_is_named(batch_size):
    source, target = _pairs(10)
    calls = [lambda: buckets.make_batches(source, target, batch_size, bucketed=False, seed=0),
             lambda: buckets.make_batches(source, target, batch_size, bucketed=True, seed=0),
             lambda: buckets.as_dataset(source, target, batch_size),
             lambda: array_dataset(source, target, batch_size)]
    for call in calls:
        with pytest.raises(ValueError, match=rf"`batch_size` must be a whole number >= 1. Received: batch_size={batch_size!r}"):
            call()
    assert len(buckets.make_batches(source, target, np.int64(4), seed=0)) == 3  # a NumPy integer is a count


@pytest.mark.parametrize("shuffle", [False, True])
def test_array_dataset_refuses_no_rows(shuffle):
    with pytest.raises(ValueError, match="Received: 0 rows"):
        array_dataset(np.zeros((0, 2)), np.zeros((0,)), 2, shuffle=shuffle)


def test_char_corpus_arrays_need_sentences_and_a_real_limit():
    with pytest.raises(ValueError, match="Received: 0 sentences"):
        char_corpus.to_arrays([])
    for bad in (0, -1, 3.0):
        with pytest.raises(ValueError, match=rf"`max_length` must be a whole number >= 1. Received: max_length={bad!r}"):
            char_corpus.to_arrays(["abc"], max_length=bad)
    inputs, targets = char_corpus.to_arrays(["abc", "a"])  # None: no limit, the longest sentence
    assert inputs.shape == targets.shape == (2, 4)
    assert char_corpus.to_arrays(["abc"], max_length=5)[0].shape == (1, 6)
    with pytest.raises(ValueError, match="longer than max_length"):
        char_corpus.to_arrays(["abcd"], max_length=3)


def test_vocabulary_sizes_and_lengths_are_whole_numbers():
    with pytest.raises(ValueError, match=r"`max_size` must be a whole number >= 1. Received: max_size=5.5"):
        Vocabulary.from_texts(["a b c"], max_size=5.5)
    with pytest.raises(ValueError, match=r"`min_count` must be a whole number >= 1. Received: min_count=1.5"):
        Vocabulary.from_texts(["a b c"], min_count=1.5)
    with pytest.raises(ValueError, match="must exceed the 4 special tokens"):
        Vocabulary.from_texts(["a b c"], max_size=4)
    vocabulary = Vocabulary.from_texts(["a b c"], max_size=np.int64(6))
    assert len(vocabulary) == 6
    for bad in (3.7, 0, True):
        with pytest.raises(ValueError, match=rf"`length` must be a whole number >= 1. Received: length={bad!r}"):
            vocabulary.encode(["a"], length=bad)
    assert vocabulary.encode(["a b"], length=4).tolist() == [[4, 5, 0, 0]]
    with pytest.raises(ValueError, match="`max_words` must be a positive integer or None. Received: max_words=True"):
        pad_documents([[[4, 5]]], max_words=True)


# -- 5: an empty utterance keeps its place -------------------------------------------------------------------


def test_an_empty_utterance_stays_in_its_place_and_is_masked():
    from course_lib.encoders.hierarchical import document_masks

    vocabulary = Vocabulary.from_texts(["hi there", "who is it ?", "it was x"], level="word", split_punctuation=False)
    dialog_set = dialogs.DialogSet([["hi there", "", "who is it ?"], ["", "hi", ""]], ["it was x", "it"],
                                   np.array([0, 1]), ["actor", "actor"])
    context = dialogs.encode_dialogs(dialog_set, vocabulary)["context"]
    who = vocabulary.lookup("who is it ?".split())
    assert context.shape == (2, 3, 4)
    assert context[0].tolist() == [vocabulary.lookup(["hi", "there"]) + [0, 0], [0, 0, 0, 0], who]
    assert context[1].tolist() == [[0, 0, 0, 0], vocabulary.lookup(["hi"]) + [0, 0, 0], [0, 0, 0, 0]]
    _, sentence_mask = document_masks(context)
    assert np.asarray(sentence_mask).tolist() == [[True, False, True], [False, True, False]]
    # Documents are unchanged: empty sentences are dropped and the next ones move up.
    ids, report = pad_documents([[[4], [], [5, 6]], [[], []]])
    assert ids.tolist() == [[[4, 0], [5, 6]], [[0, 0], [0, 0]]] and report.empty_documents == 1
    kept, report = pad_documents([[[4], [], [5, 6]], [[], []]], keep_empty=True)
    assert kept.tolist() == [[[4, 0], [0, 0], [5, 6]], [[0, 0], [0, 0], [0, 0]]] and report.empty_documents == 1
    with pytest.raises(ValueError, match="keep_empty"):
        pad_documents([[[4]]], keep_empty="yes")


# -- 6: UTF-16 files, empty articles ----------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_files_with_a_utf16_or_utf32_byte_order_mark_are_read_as_such(encoding, tmp_path):
    text = "label,text\nsport,Goal scored £5 — नमस्ते\ntech,New chip\n"
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no mark: put it in by hand
        data = "\ufeff".encode(encoding) + data
    path = tmp_path / "documents.csv"
    path.write_bytes(data)
    assert read_text(path) == (text, False)
    documents = load_csv_documents(path)
    assert documents.texts == ["Goal scored £5 — नमस्ते", "New chip"] and documents.fallback_files == []


def test_a_broken_utf16_file_is_named(tmp_path):
    path = tmp_path / "broken.csv"
    path.write_bytes("label,text\n".encode("utf-16") + b"\x00")  # an odd number of bytes
    with pytest.raises(ValueError, match=r"broken\.csv.*UTF-16 byte-order mark"):
        read_text(path)


@pytest.mark.parametrize("content", [b"", b"   \n\n  \r\n", "\n".encode("utf-16")])
def test_an_empty_bbc_article_is_refused_with_its_file_named(content, tmp_path):
    for name in ("sport", "tech"):
        (tmp_path / "bbc" / name).mkdir(parents=True)
        (tmp_path / "bbc" / name / "001.txt").write_text("Title\n\nBody text.", encoding="utf-8")
    (tmp_path / "bbc" / "tech" / "002.txt").write_bytes("Chip news\n\nNew chip.".encode("utf-16"))
    assert load_bbc(tmp_path, warn=False).texts[-1] == "Chip news\nNew chip."  # UTF-16: no fallback, no NULs
    (tmp_path / "bbc" / "sport" / "002.txt").write_bytes(content)
    with pytest.raises(ValueError, match=r"empty or white-space-only file .*sport/002\.txt"):
        load_bbc(tmp_path, warn=False)


# -- 7: splits too small for their parts ------------------------------------------------------------------------


def test_split_corpus_refuses_no_pairs_and_empty_parts():
    pairs = hindi_english.generate_pairs()
    with pytest.raises(ValueError, match="Received: 0 pairs"):
        hindi_english.split_corpus([])
    one_sentence = [pair for pair in pairs if pair.english == pairs[0].english]
    with pytest.raises(ValueError, match=rf"the valid and test parts would be empty. Received: {len(one_sentence)} pairs in 1 "):
        hindi_english.split_corpus(one_sentence)
    english = list(dict.fromkeys(pair.english for pair in pairs))
    five = [pair for pair in pairs if pair.english in set(english[:5])]
    with pytest.raises(ValueError, match="would be empty"):
        hindi_english.split_corpus(five)
    # A fraction of 0 asks for an empty part; enough sentences fill every part asked for.
    parts = hindi_english.split_corpus(five, valid_fraction=0, test_fraction=0.2)
    assert parts["valid"] == [] and parts["test"] and parts["train"]
    parts = hindi_english.split_corpus([pair for pair in pairs if pair.english in set(english[:20])])
    assert all(parts.values())
