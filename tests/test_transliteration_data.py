"""Aksharantar/Dakshina loaders, the generated word set, length buckets."""

import numpy as np
import pytest

from course_lib.data import buckets
from course_lib.data.aksharantar import load_aksharantar
from course_lib.data.dakshina import load_dakshina
from course_lib.data.transliteration_pairs import references_by_source
from course_lib.data.transliteration_words import generate_pairs, splits, transliterate
from line_reports import load_reporting

AKSHARANTAR_LINES = [
    "shastragaar,शस्त्रागार",
    "bindya,बिंद्या",
    "bindya,बिन्द्या",
    "kiran",  # line 4: one column
    "ghar,",  # line 5: empty native side
    "india,india",  # line 6: native side not Devanagari
    "",  # blank lines carry nothing and are not errors
    "हिंदी,हिंदी",  # line 8: roman side in Devanagari
    "zindagi,ज़िंदगी",
]


def _write(tmp_path, name, lines, trailing_newline=False, extra_bytes=b""):
    path = tmp_path / name
    data = "\n".join(lines).encode("utf-8") + (b"\n" if trailing_newline else b"") + extra_bytes
    path.write_bytes(data)
    return path


def test_aksharantar_reports_malformed_lines_with_numbers(tmp_path):
    path = _write(tmp_path, "hin_test.csv", AKSHARANTAR_LINES)  # last line without newline
    pairs = load_reporting(load_aksharantar, path, (4, 5, 6, 8))
    assert [(p.roman, p.native, p.line_number) for p in pairs] == [
        ("shastragaar", "शस्त्रागार", 1), ("bindya", "बिंद्या", 2), ("bindya", "बिन्द्या", 3),
        ("zindagi", "ज़िंदगी", 9),
    ]
    with pytest.raises(ValueError, match="line 4: expected 2 comma-separated columns"):
        load_aksharantar(path, errors="raise")


def test_aksharantar_not_utf8_and_missing_file(tmp_path):
    path = _write(tmp_path, "bad.csv", ["ghar,घर"], trailing_newline=True, extra_bytes=b"kal,\xff\xfe\n")
    with pytest.raises(ValueError, match="line 2: not UTF-8"):
        load_aksharantar(path, errors="raise")
    with pytest.raises(FileNotFoundError, match="No such file"):
        load_aksharantar(tmp_path / "nothing.csv")
    with pytest.raises(ValueError, match="errors"):
        load_aksharantar(path, errors="ignore")


def test_aksharantar_url_offline_gives_clear_error(tmp_path, monkeypatch):
    import keras

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(keras.utils, "get_file", offline)
    with pytest.raises(FileNotFoundError, match="Could not download .*local file path"):
        load_aksharantar("https://example.org/aksharantar/hin_train.csv")


def test_dakshina_lexicon(tmp_path):
    lines = [
        "घर\tghar\t3",
        "घर\tghr\t1",
        "किरण\tkiran",  # line 3: two columns
        "किरण\tkiran\tmany",  # line 4: count not a number
        "किरण\tkiran\t2",
    ]
    path = _write(tmp_path, "hi.translit.sampled.dev.tsv", lines, trailing_newline=True)
    with pytest.warns(UserWarning, match="line 3: expected 3 tab-separated columns"):
        pairs = load_dakshina(path)
    assert [(p.native, p.roman, p.count) for p in pairs] == [("घर", "ghar", 3), ("घर", "ghr", 1), ("किरण", "kiran", 2)]
    with pytest.raises(ValueError, match="line 4: the count 'many'"):
        load_dakshina(path, errors="raise")


def test_references_group_spellings_most_frequent_first(tmp_path):
    path = _write(tmp_path, "hin_valid.csv", AKSHARANTAR_LINES[:3])
    grouped = references_by_source(load_aksharantar(path))
    assert grouped == {"shastragaar": ["शस्त्रागार"], "bindya": ["बिंद्या", "बिन्द्या"]}


def test_spelling_rules():
    assert transliterate("kamal") == "कमल"  # inherent vowel
    assert transliterate("dil") == "दिल"  # i-matra
    assert transliterate("hindi") == "हिंदी"  # anusvara, final long i
    assert transliterate("prem") == "प्रेम"  # conjunct
    assert transliterate("kavita") == "कविता"  # final long a
    assert transliterate("kripa") == "क्रिपा"  # no vowel sign ृ: not the dictionary's कृपा
    assert transliterate("ajay") == "अजय"  # independent vowel
    assert transliterate("champa") == "चंपा"
    with pytest.raises(ValueError, match="Cannot spell"):
        transliterate("xylo")
    with pytest.raises(ValueError, match="non-empty"):
        transliterate("  ")


def test_generated_splits_deterministic_and_disjoint():
    train, valid, test = splits(300, 50, 50, seed=3)
    again, _, _ = splits(300, 50, 50, seed=3)
    assert [p.roman for p in train] == [p.roman for p in again]
    romans = [set(p.roman for p in part) for part in (train, valid, test)]
    assert not (romans[0] & romans[1]) and not (romans[0] & romans[2]) and not (romans[1] & romans[2])
    assert all(p.native == transliterate(p.roman) for p in train)
    assert len({p.roman for p in generate_pairs(500, seed=1)}) == 500
    other, _, _ = splits(300, 50, 50, seed=4)
    assert [p.roman for p in other] != [p.roman for p in train]


def _without_vowel_length(native):
    """The Devanagari word with every long vowel made short (आ -> अ, ी -> ि ...)."""
    return native.translate(str.maketrans({"आ": "अ", "ई": "इ", "ऊ": "उ", "ा": None, "ी": "ि", "ू": "ु"}))


def test_typed_words_drop_only_the_vowel_length():
    exact = generate_pairs(400, seed=2)
    assert generate_pairs(400, seed=2, drop_vowel_length=0.0) == exact  # no typing noise drawn at 0
    all_short = generate_pairs(400, seed=2, drop_vowel_length=1.0)
    assert not any(long in p.roman for p in all_short for long in ("aa", "ee", "oo"))
    typed = generate_pairs(2000, seed=2, drop_vowel_length=0.5)
    assert len({p.roman for p in typed}) == 2000  # one pair per typed word
    read_as_typed = [transliterate(p.roman) for p in typed]
    ambiguous = [(r, p.native) for r, p in zip(read_as_typed, typed) if r != p.native]
    # About a quarter of the words lose a long vowel that the rules cannot restore...
    assert 0.15 < len(ambiguous) / len(typed) < 0.4, len(ambiguous)
    # ...and they differ from the Devanagari word in nothing but vowel length.
    assert all(_without_vowel_length(r) == _without_vowel_length(n) for r, n in ambiguous)
    assert any("ा" in n and "ा" not in r for r, n in ambiguous)
    train, valid, test = splits(300, 50, 50, seed=3, drop_vowel_length=0.5)
    romans = [set(p.roman for p in part) for part in (train, valid, test)]
    assert not (romans[0] & romans[1]) and not (romans[0] & romans[2]) and not (romans[1] & romans[2])
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"drop_vowel_length={bad}"):
            generate_pairs(10, drop_vowel_length=bad)


def test_bucketed_batches_pad_less_and_keep_every_example():
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 20, size=500)
    source = np.zeros((500, 20), "int32")
    for row, length in enumerate(lengths):
        source[row, :length] = rng.integers(4, 30, size=length)
    target = np.concatenate([source[:, ::-1] * 0 + 5, np.zeros((500, 1), "int32")], axis=1)
    target[np.arange(500), lengths] = 2  # tokens then <stop>
    target[:, :][np.arange(21)[None, :] > lengths[:, None]] = 0
    bucketed = buckets.make_batches(source, target, 32, bucketed=True, seed=1)
    padded = buckets.make_batches(source, target, 32, bucketed=False, seed=1)
    cells = lambda batches: sum(b[0]["source"].size for b in batches)
    assert cells(bucketed) < 0.7 * cells(padded)
    seen = sorted(tuple(row[row > 0]) for b in bucketed for row in b[0]["source"])
    assert seen == sorted(tuple(row[row > 0]) for row in source)
    inputs, target_out = bucketed[0]
    assert np.all(inputs["target_in"][:, 0] == 1)  # <GO>
    assert not np.any(inputs["target_in"] == 2)  # <stop> is never fed
    np.testing.assert_array_equal(buckets.sequence_lengths(np.array([[5, 6, 0], [0, 0, 0]])), [2, 0])


@pytest.mark.parametrize("bucketed, seed", [(True, None), (True, 3), (False, None), (False, 3)])
def test_as_dataset_knows_its_number_of_batches(bucketed, seed):
    import tensorflow as tf

    rng = np.random.default_rng(0)
    source = rng.integers(4, 20, size=(203, 7)).astype("int32")
    target = np.concatenate([source[:, :5], np.full((203, 1), 2, "int32")], axis=1)
    # 203 rows in batches of 16 (pools of 50 batches with a seed): 13 batches, the last of 11 rows.
    dataset = buckets.as_dataset(source, target, 16, bucketed=bucketed, seed=seed)
    assert int(dataset.cardinality()) == 13
    assert sum(1 for _ in dataset) == 13
    assert sum(len(batch[1]) for batch in dataset) == 203
    endless = buckets.as_dataset(source, target, 16, bucketed=bucketed, seed=seed, repeat=True)
    assert int(endless.cardinality()) == int(tf.data.INFINITE_CARDINALITY)
    assert sum(1 for _ in endless.take(30)) == 30
    with pytest.raises(ValueError, match="batch_size"):
        buckets.as_dataset(source, target, 0)


def test_batched_generate_returns_results_in_input_order():
    class Echo:
        def generate(self, source, max_length=None):
            return {"tokens": source * 10, "width": np.full(len(source), source.shape[1])}

    source = np.array([[4, 5, 6], [7, 0, 0], [8, 9, 0]], "int32")
    output = buckets.batched_generate(Echo(), source, batch_size=2)
    # Rows 1 and 2 (lengths 1 and 2) share a batch cut to width 2; row 0 is alone.
    assert [list(t) for t in output["tokens"]] == [[40, 50, 60], [70, 0], [80, 90]]
    assert output["width"] == [3, 2, 2]


def test_loaders_refuse_a_directory_named_like_a_file(tmp_path):
    for name, loader in (("words.csv", load_aksharantar), ("words.tsv", load_dakshina)):
        folder = tmp_path / name
        folder.mkdir()
        with pytest.raises(ValueError, match=f"not a directory.*{name}"):
            loader(folder)
