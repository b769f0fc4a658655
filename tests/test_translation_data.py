"""The generated Hindi–English corpus and the Tatoeba loader."""

import warnings
import zipfile

import pytest

from course_lib.data import hindi_english as corpus
from course_lib.data.tatoeba import load_tatoeba, parse_lines
from line_reports import load_reporting


@pytest.fixture(scope="module")
def pairs():
    return corpus.generate_pairs()


def test_size_and_lecture_example(pairs):
    assert len(pairs) > 5000
    assert len({p.hindi for p in pairs}) == len(pairs)  # every Hindi sentence is distinct
    lecture = corpus.find_pair(pairs, "I am going home", "मैं घर जा रहा हूँ")
    assert lecture is not None
    # I-मैं, am-हूँ, going-जा/रहा, home-घर
    assert set(lecture.alignment) == {(0, 0), (1, 4), (2, 2), (2, 3), (3, 1)}


@pytest.mark.parametrize(
    "english, hindi",
    [
        ("I am going home", "मैं घर जा रही हूँ"),
        ("We are going home", "हम घर जा रहे हैं"),
        ("They are going home", "वे घर जा रही हैं"),
        ("She went to the big market", "वह बड़े बाज़ार गई"),
        ("The girls went to the small shop", "लड़कियाँ छोटी दुकान गईं"),
        ("He will come home", "वह घर आएगा"),
        ("You will return to the village", "तुम गाँव लौटोगी"),
        ("My sister is reading a new book", "मेरी बहन नई किताब पढ़ रही है"),
        ("Ram will eat a sweet mango", "राम मीठा आम खाएगा"),
        ("The children will drink cold milk", "बच्चे ठंडा दूध पिएँगे"),
        ("I will buy an old umbrella", "मैं पुराना छाता ख़रीदूँगा"),
    ],
)
def test_agreement_and_word_order(pairs, english, hindi):
    assert corpus.find_pair(pairs, english, hindi) is not None, (english, hindi)


def test_no_wrong_agreement(pairs):
    hindi = {p.hindi for p in pairs}
    for wrong in ["वह घर जा रहा हूँ", "लड़की घर गया", "मैं घर जा रहे हूँ", "वे घर जाएगा", "लड़के घर जा रहा है"]:
        assert wrong not in hindi
    # Every feminine subject in the past takes a feminine verb.
    for pair in pairs:
        if pair.hindi.startswith(("लड़की ", "सीता ", "मेरी बहन ")) and pair.tense == "past":
            assert pair.hindi.split()[-1].endswith(("ई", "ी")), pair.hindi


def test_hindi_is_verb_final_and_alignment_covers_every_word(pairs):
    for pair in pairs[::37]:
        english, hindi = pair.english.split(), pair.hindi.split()
        assert {i for i, _ in pair.alignment} == set(range(len(english)))
        assert {j for _, j in pair.alignment} == set(range(len(hindi)))
        links = pair.gold_links("en-hi")
        assert len(links) == len(hindi) and all(links)
        assert len(pair.gold_links("hi-en")) == len(english)
        # The English verb is aligned to the end of the Hindi sentence (SOV).
        assert max(j for _, j in pair.alignment) == len(hindi) - 1


def test_split_is_deterministic_and_disjoint():
    parts = corpus.split_corpus(seed=3)
    again = corpus.split_corpus(seed=3)
    other = corpus.split_corpus(seed=4)
    assert [p.hindi for p in parts["test"]] == [p.hindi for p in again["test"]]
    assert [p.hindi for p in parts["test"]] != [p.hindi for p in other["test"]]
    for side in ("english", "hindi"):
        seen = [{getattr(p, side) for p in parts[name]} for name in ("train", "valid", "test")]
        assert not seen[0] & seen[1] and not seen[0] & seen[2] and not seen[1] & seen[2], side
    total = sum(len(v) for v in parts.values())
    assert total == len(corpus.generate_pairs())
    assert 0.07 < len(parts["test"]) / total < 0.13


def test_split_rejects_bad_fractions():
    with pytest.raises(ValueError, match="valid_fraction"):
        corpus.split_corpus(valid_fraction=0.6, test_fraction=0.5)
    with pytest.raises(ValueError, match="direction"):
        corpus.generate_pairs()[0].gold_links("en-fr")


TATOEBA_FIXTURE = (
    "Go.\tजाओ।\tCC-BY 2.0 (France) Attribution: example #1\n"
    "Run!\tभागो!\tCC-BY 2.0 (France) Attribution: example #2\n"
    "only one column\n"
    "Hello.\t\tCC-BY attribution\n"
    "Swapped.\tnot hindi\tCC-BY attribution\n"
    "Too\tmany\tcolumns\there\n"
    "\n"
    "I am going home.\tमैं घर जा रहा हूँ।\n"
)


def test_tatoeba_reads_good_lines_and_reports_malformed_ones(tmp_path):
    path = tmp_path / "hin.txt"
    path.write_text(TATOEBA_FIXTURE, encoding="utf-8")
    pairs = load_reporting(load_tatoeba, path, (3, 4, 5, 6))
    assert [p.english for p in pairs] == ["Go.", "Run!", "I am going home."]
    assert pairs[2].hindi == "मैं घर जा रहा हूँ।" and pairs[2].line_number == 8
    assert pairs[0].attribution.startswith("CC-BY")
    with pytest.raises(ValueError, match="line 3:"):
        load_tatoeba(path, errors="raise")


def test_tatoeba_reports_bad_utf8_with_line_number():
    pairs, malformed = parse_lines([b"Go.\t\xe0\xa4\x9c\xe0\xa4\xbe\xe0\xa4\x93\tx\n", b"Bad\t\xff\xfe\tx\n"])
    assert len(pairs) == 1 and malformed[0].line_number == 2 and "UTF-8" in malformed[0].reason


def test_tatoeba_reads_the_anki_zip(tmp_path):
    archive = tmp_path / "hin-eng.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("_about.txt", "about")
        handle.writestr("hin.txt", "Go.\tजाओ।\tattribution\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_tatoeba(archive)[0].hindi == "जाओ।"


def test_tatoeba_missing_file_and_offline_url(tmp_path, monkeypatch):
    import keras

    with pytest.raises(FileNotFoundError, match="No such file"):
        load_tatoeba(tmp_path / "missing.txt")
    requested = []

    def offline(*args, **kwargs):  # not the real `get_file`: a cached ~/.keras/datasets/hin-eng.zip would be read
        requested.append(kwargs.get("origin"))
        raise OSError("network is unreachable")

    monkeypatch.setattr(keras.utils, "get_file", offline)
    url = "http://127.0.0.1:9/hin-eng.zip"
    with pytest.raises(FileNotFoundError, match="Could not download .*OSError: network is unreachable.*local file path"):
        load_tatoeba(url)
    assert requested == [url]


def test_tatoeba_directory_instead_of_file_is_a_clear_error(tmp_path):
    folder = tmp_path / "sentences"
    folder.mkdir()
    with pytest.raises(ValueError, match="not a directory.*sentences"):
        load_tatoeba(folder)


def test_split_keeps_a_shared_hindi_translation_in_one_part(tmp_path):
    # Tatoeba-like data: different English sentences with one Hindi translation.
    lines = []
    for i in range(40):
        lines.append(f"Hello {i}!\tनमस्ते {i}\tattribution")
        lines.append(f"Hi {i}!\tनमस्ते {i}\tattribution")
        lines.append(f"Good day {i}.\tनमस्ते {i}\tattribution")
    path = tmp_path / "hin.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    parts = corpus.split_corpus(load_tatoeba(path), seed=0)
    assert sum(len(part) for part in parts.values()) == 120
    assert all(len(part) % 3 == 0 and part for part in parts.values())
    for side in ("english", "hindi"):
        seen = [{getattr(p, side) for p in parts[name]} for name in ("train", "valid", "test")]
        assert not seen[0] & seen[1] and not seen[0] & seen[2] and not seen[1] & seen[2], side


def test_split_translation_writes_the_parts_in_the_files_own_format(tmp_path, capsys):
    from course_lib.cli import main

    lines = [f"Sentence {i}.\tवाक्य {i}।\tCC-BY attribution #{i}" for i in range(50)]
    lines += [f"Another {i}.\tवाक्य {i}।\tCC-BY attribution #{i}b" for i in range(5)]  # shares a Hindi sentence
    source = tmp_path / "hin.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "split"
    assert main(["split-translation", str(source), "--out", str(out)]) == 0
    expected = corpus.split_corpus(load_tatoeba(source), seed=0)
    assert capsys.readouterr().out.startswith(f"{len(expected['train'])} / {len(expected['valid'])} / {len(expected['test'])} pairs")
    for part in ("train", "valid", "test"):
        written = load_tatoeba(out / f"{part}.txt")
        assert [(p.english, p.hindi, p.attribution) for p in written] == [
            (p.english, p.hindi, p.attribution) for p in expected[part]]
    # A second split into the same folder would overwrite the first: refused, files unchanged.
    before = (out / "test.txt").read_text(encoding="utf-8")
    assert main(["split-translation", str(source), "--out", str(out), "--seed", "1"]) == 2
    assert "already holds train.txt, valid.txt, test.txt" in capsys.readouterr().err
    assert (out / "test.txt").read_text(encoding="utf-8") == before
