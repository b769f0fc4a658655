"""Generated documents, the BBC loader (with a Latin-1 file) and the CSV loader."""

import numpy as np
import pytest

from course_lib.data.bbc import duplicate_groups, load_bbc, read_text, split_indices
from course_lib.data.csv_documents import load_csv_documents
from course_lib.data.documents import CLASS_NAMES, TOPIC_WORDS, document_splits, generate_documents
from course_lib.text.documents import split_sentences


def test_generated_documents_are_deterministic_and_planted():
    first, second = generate_documents(50, seed=3), generate_documents(50, seed=3)
    assert first.texts == second.texts and np.array_equal(first.labels, second.labels)
    assert generate_documents(50, seed=4).texts != first.texts
    for text, label, where in zip(first.texts, first.labels, first.planted_index):
        sentences = split_sentences(text)
        assert 4 <= len(sentences) <= 8 and 0 <= where < len(sentences)
        words = sentences[where].lower().rstrip(".").split()
        topic = set(TOPIC_WORDS[CLASS_NAMES[label]])
        assert len(topic.intersection(words)) == 3  # the planted sentence decides the class
        for i, sentence in enumerate(sentences):
            if i != where:
                assert sum(w.strip(".") in set().union(*TOPIC_WORDS.values()) for w in sentence.lower().split()) <= 1


def test_splits_differ_and_classes_are_balanced():
    splits = document_splits(train=400, valid=50, test=100, seed=0)
    assert {len(s) for s in splits.values()} == {400, 50, 100}
    assert splits["train"].texts[:100] != splits["test"].texts
    assert splits["valid"].texts != splits["test"].texts[:50]
    counts = np.bincount(splits["train"].labels, minlength=len(CLASS_NAMES))
    assert counts.min() > 60
    with pytest.raises(ValueError, match="min_sentences"):
        generate_documents(5, min_sentences=3, max_sentences=2)


def write_bbc_fixture(root):
    articles = {
        "business": ["Profits up\n\nThe bank made money. Shares rose.", "Merger talks\n\nTwo firms met."],
        "sport": ["Cup final\n\nThe team won the match.", "Coach leaves\n\nHe said goodbye. Fans were sad."],
    }
    for name, texts in articles.items():
        (root / "bbc" / name).mkdir(parents=True)
        for i, text in enumerate(texts, start=1):
            (root / "bbc" / name / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    # A Latin-1 article: the pound sign and an e-acute are single bytes, not valid UTF-8.
    (root / "bbc" / "sport" / "003.txt").write_bytes("Caf\xe9 team\n\nTickets cost \xa35.".encode("latin-1"))


def test_bbc_loader_reads_every_file_and_reports_latin1(tmp_path):
    write_bbc_fixture(tmp_path)
    with pytest.warns(UserWarning, match=r"read as Windows-1252 \(or Latin-1 if"):
        documents = load_bbc(tmp_path)
    assert len(documents) == 5 and documents.class_names == ("business", "sport")
    assert documents.labels.tolist() == [0, 0, 1, 1, 1]
    assert documents.titles[0] == "Profits up" and documents.texts[0] == "Profits up\nThe bank made money. Shares rose."
    assert len(documents.fallback_files) == 1 and documents.fallback_files[0].endswith("sport/003.txt")
    assert documents.texts[4] == "Café team\nTickets cost £5."
    assert len(load_bbc(tmp_path / "bbc", warn=False)) == 5  # the bbc/ folder itself works too
    with pytest.raises(FileNotFoundError):
        load_bbc(tmp_path / "missing")


def test_windows_1252_punctuation_is_read_as_such_then_latin1(tmp_path):
    path = tmp_path / "quotes.txt"
    # Curly quotes, en dash and euro sign are bytes 0x80-0x9F in Windows-1252; Latin-1 made them control characters.
    path.write_bytes("Price \u00a35 \u201cquoted\u201d \u2013 \u20ac3, caf\u00e9".encode("cp1252"))
    assert read_text(path) == ("Price \u00a35 \u201cquoted\u201d \u2013 \u20ac3, caf\u00e9", True)
    # 0x81 is undefined in Windows-1252: the whole file is read as Latin-1, every byte kept.
    path.write_bytes(b"caf\xe9 \x81 \xa35")
    assert read_text(path) == ("caf\u00e9 \x81 \u00a35", True)
    path.write_bytes("caf\u00e9 \u201cok\u201d".encode("utf-8"))
    assert read_text(path) == ("caf\u00e9 \u201cok\u201d", False)


def test_split_indices_are_stratified_and_disjoint():
    labels = np.repeat([0, 1, 2], [50, 30, 20])
    parts = split_indices(labels, valid_fraction=0.1, test_fraction=0.2, seed=1)
    together = np.concatenate(list(parts.values()))
    assert len(together) == 100 and len(set(together.tolist())) == 100
    assert np.bincount(labels[parts["test"]]).tolist() == [10, 6, 4]


def test_duplicate_groups_join_versions_of_an_article():
    body = "the minister said on monday that the new rules would start in april after a long debate"
    texts = [
        f"Rules agreed\n{body}",
        "Cup final\nthe team won the match in the last minute of extra time",
        f"Rules agreed\n{body.replace('april', 'may')}",  # edited copy under the same title
        f"New rules from April\n{body}",  # retitled copy
        f"Rules   agreed\n{body}".replace(" monday", "\n\nmonday"),  # a paragraph break more
        "Budget day\nthe chancellor spoke about taxes and spending for an hour",
        "RULES AGREED\nan entirely different story about the weather in the north of the country",
    ]
    titles = [text.split("\n")[0] for text in texts]
    assert duplicate_groups(texts, titles).tolist() == [0, 1, 0, 0, 0, 5, 0]
    assert duplicate_groups(texts).tolist() == [0, 1, 0, 0, 0, 5, 6]  # without titles: similar words only
    assert duplicate_groups(texts, min_overlap=None).tolist() == [0, 1, 2, 3, 0, 5, 6]  # equal up to white space
    with pytest.raises(ValueError, match="Received: min_overlap=0"):
        duplicate_groups(texts, min_overlap=0)
    with pytest.raises(ValueError, match="Received: len\\(texts\\)=7, len\\(titles\\)=2"):
        duplicate_groups(texts, titles[:2])


def test_split_indices_keep_each_group_in_one_part():
    labels = np.repeat([0, 1], [40, 30])
    plain = split_indices(labels, seed=3)
    singletons = split_indices(labels, seed=3, groups=np.arange(70) + 100)
    assert all(np.array_equal(plain[name], singletons[name]) for name in plain)  # no group: the plain split
    groups = np.arange(70)
    groups[[1, 2, 3]] = 1  # an article in three versions
    groups[[50, 69]] = 50
    for seed in range(20):
        parts = split_indices(labels, seed=seed, groups=groups)
        part_of = {int(i): name for name, indices in parts.items() for i in indices}
        assert len(part_of) == 70
        assert len({part_of[i] for i in (1, 2, 3)}) == 1 and part_of[50] == part_of[69]
        assert 8 <= np.sum(labels[parts["test"]] == 0) <= 8 + 2  # 20 % of 40; a group of 3 can overshoot by 2
    with pytest.raises(ValueError, match=r"Received: groups.shape=\(3,\), labels.shape=\(70,\)"):
        split_indices(labels, groups=[0, 1, 2])


def test_versions_of_a_bbc_article_never_land_in_two_parts(tmp_path, capsys):
    from course_lib.tasks.documents import load_splits

    rng = np.random.default_rng(0)
    versions = []
    for label in ("business", "sport"):
        folder = tmp_path / "bbc" / label
        folder.mkdir(parents=True)
        for number in range(1, 21):
            words = " ".join(f"w{rng.integers(10000)}" for _ in range(40))
            (folder / f"{number:03d}.txt").write_text(f"{label} story {number}\n\n{words}.\n", encoding="utf-8")
            if number <= 4:  # a retitled copy, a paragraph break more, and a same-title update
                edited = words.split()
                edited[20] = "changed"
                (folder / f"{number + 100:03d}.txt").write_text(
                    f"{label} news {number}\n\n{' '.join(edited)}.\n", encoding="utf-8")
                half = words.split()
                (folder / f"{number + 200:03d}.txt").write_text(
                    f"{label} story {number}\n\n{' '.join(half[:30])}\n\n{' '.join(half[30:])}.\n", encoding="utf-8")
                update = " ".join(f"u{rng.integers(10000)}" for _ in range(30))
                (folder / f"{number + 300:03d}.txt").write_text(
                    f"{label} story {number}\n\n{update}.\n", encoding="utf-8")
                versions.append([f"{label}/{n:03d}.txt" for n in (number, number + 100, number + 200, number + 300)])
    for seed in range(5):
        splits = load_splits(str(tmp_path), seed=seed)
        part_of = {path.split("bbc/")[-1]: name for name in ("train", "valid", "test") for path in splits[name].paths}
        assert len(part_of) == 56  # 64 files, 8 exact copies (up to white space) left out
        for article in versions:
            assert len({part_of[path] for path in article if path in part_of}) == 1, (seed, article)
    out = capsys.readouterr().out
    assert "8 duplicate document(s) left out" in out and "24 documents are versions of 8 articles" in out


def test_generated_documents_are_scored_in_a_trained_models_class_order():
    # A model trained on a CSV of generated documents numbers its classes in sorted order; the generated
    # documents number them sport, politics, technology, business. `evaluate --data generated` used to
    # compare the numbers (accuracy 0.2 for a model that was right every time).
    from course_lib.tasks.documents import load_splits

    plain = load_splits(sizes=(8, 4, 12), seed=3)
    csv_order = sorted(CLASS_NAMES)
    ordered = load_splits(sizes=(8, 4, 12), seed=3, class_names=csv_order)
    for name in ("train", "valid", "test"):
        assert ordered[name].class_names == tuple(csv_order) and ordered[name].texts == plain[name].texts
        assert [csv_order[i] for i in ordered[name].labels] == [CLASS_NAMES[i] for i in plain[name].labels]
    # The message names the classes the model lacks, and no command-line flag (it is raised from Python too).
    with pytest.raises(ValueError, match=r"trained on classes \('sport', 'business'\); the documents' classes "
                                         r"\('sport', 'politics', 'technology', 'business'\) include "
                                         r"\['politics', 'technology'\], which it does not know\. "
                                         r"Received: class_names=\('sport', 'business'\)$") as caught:
        load_splits(sizes=(8, 4, 12), class_names=("sport", "business"))
    assert "--data" not in str(caught.value)


def test_train_documents_refuses_sizes_with_ready_splits():
    # `sizes` was ignored for the given splits, yet saved: `evaluate documents` then generated other data by it.
    from course_lib.tasks.documents import load_splits, train_documents

    splits = load_splits(sizes=(8, 4, 12), seed=3)
    with pytest.raises(ValueError, match=r"ready `splits` already hold theirs.*"
                                         r"Received: sizes=\(4, 2, 2\) and splits of 8 train, 4 valid, 12 test"):
        train_documents(splits=splits, sizes=(4, 2, 2), epochs=1, verbose=0)


def test_csv_loader(tmp_path):
    path = tmp_path / "docs.csv"
    path.write_text('label,text\nsport,"The team won, again. Great."\nbusiness,Shares fell.\n\n', encoding="utf-8")
    documents = load_csv_documents(path)
    assert documents.class_names == ("business", "sport") and documents.labels.tolist() == [1, 0]
    assert documents.texts[0] == "The team won, again. Great."
    bad = tmp_path / "bad.csv"
    bad.write_text("sport,one,two\n", encoding="utf-8")
    with pytest.raises(ValueError, match="two fields"):
        load_csv_documents(bad)
    bad.write_text("label,text\nsport,fine\nsport,one,two\n", encoding="utf-8")
    with pytest.raises(ValueError, match="3 fields in row 3 of"):  # the header is row 1
        load_csv_documents(bad)
    with pytest.raises(ValueError, match="not among the classes"):
        load_csv_documents(path, class_names=("sport",))


def test_a_csv_with_a_byte_order_mark_reads_its_header_as_a_header(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("label,text\nsport,The match ended late.\ntech,A new phone came out.\n".encode("utf-8-sig"))
    documents = load_csv_documents(path)
    assert list(documents.class_names) == ["sport", "tech"]  # not '\ufefflabel' as a third class
    assert len(documents.texts) == 2


def test_a_document_stored_twice_never_lands_in_two_parts(tmp_path, capsys):
    from course_lib.tasks.documents import load_splits

    rng = np.random.default_rng(0)
    lines = []
    for label in ("business", "sport"):
        for number in range(30):
            words = " ".join(f"w{rng.integers(1000)}" for _ in range(8))
            lines.append(f"{label},{label} story {number}. {words}.")
    lines += lines[:6]  # six articles stored twice, as in the original BBC archive
    path = tmp_path / "docs.csv"
    path.write_text("label,text\n" + "\n".join(lines) + "\n")
    for seed in range(5):
        splits = load_splits(str(path), seed=seed)
        seen = {name: {" ".join(t.split()) for t in splits[name].texts} for name in ("train", "valid", "test")}
        assert not seen["train"] & seen["test"] and not seen["train"] & seen["valid"] and not seen["valid"] & seen["test"]
        assert len(splits["all"]) == 60
    assert "6 duplicate document(s) left out" in capsys.readouterr().out


def test_a_group_counts_with_all_its_documents_and_the_class_of_its_first():
    # Four versions-groups of three documents, one class: 25 % for test is one group, not three.
    parts = split_indices(np.zeros(12, int), valid_fraction=0.25, test_fraction=0.25, seed=0, groups=np.arange(12) // 3)
    assert [len(parts[name]) for name in ("train", "valid", "test")] == [6, 3, 3], parts
    # Documents 0 and 1 are versions filed under classes 0 and 1: the group is split as class 0's.
    for seed in range(5):
        parts = split_indices([0, 1, 1, 1, 1], valid_fraction=0.0, test_fraction=0.5, seed=seed, groups=[0, 0, 2, 3, 4])
        assert {0, 1} <= set(parts["test"]) and len(parts["test"]) == 4, (seed, parts)


def test_a_story_and_its_longer_update_are_versions_of_one_article():
    # The update repeats the whole story and adds twice as much again: every 5-gram of the story is in
    # the update (share 1.0 of the shorter one), but only a third of their union (Jaccard 0.34).
    story = ("the council said on tuesday that the old bridge over the river would close for repairs "
             "next month and that buses would run on a new route while the work went on")
    update = story + (" and on friday engineers found cracks in two of its supports so the closure will now "
                      "last until the summer and the ferry will carry cyclists across the water for free")
    other = "the orchestra played three new pieces at the festival and the audience asked for more"
    shared_texts = [story, update + " the mayor has asked the government for money to pay for the work "
                                    "and a decision is expected before the end of the year", other]
    # Grouped by the share of the shorter document's 5-grams (a Jaccard threshold of 0.5 left them apart).
    assert duplicate_groups(shared_texts).tolist() == [0, 0, 2]
    # Below the threshold they stay apart: nine words of the story then others (share 0.24).
    half = " ".join(story.split()[:9]) + " and then the weather turned cold and wet for the rest of the week in town"
    assert duplicate_groups([half, update]).tolist() == [0, 1]


def test_empty_titles_group_nothing():
    groups = duplicate_groups(["one article here", "another story there", "a third"], titles=["", "  ", ""],
                              min_overlap=None)
    assert groups.tolist() == [0, 1, 2]


def test_short_versions_are_grouped_and_a_tenth_is_rounded_not_cut():
    # Texts under five words are one n-gram: "Stocks fall" and "stocks FALL" are versions of one article.
    assert duplicate_groups(["Stocks fall", "stocks FALL", "Rain today"]).tolist() == [0, 0, 2]
    parts = split_indices(np.zeros(19, int), valid_fraction=0.1, test_fraction=0.2, seed=0)
    assert [len(parts[name]) for name in ("train", "valid", "test")] == [13, 2, 4]  # 1.9 -> 2, 3.8 -> 4
