"""The Flickr8k-style loader, on small fixture images made here with PIL."""

import numpy as np
import pytest
from PIL import Image

from course_lib.data.flickr8k import load_flickr8k, load_image, read_captions, split_names


def _make_folder(tmp_path):
    images = tmp_path / "Images"
    images.mkdir()
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 255, (40, 60, 3), dtype=np.uint8)).save(images / "rgb.jpg")
    Image.fromarray(rng.integers(0, 255, (50, 30), dtype=np.uint8), mode="L").save(images / "grey.png")
    rgba = np.zeros((20, 20, 4), np.uint8)
    rgba[..., 0] = 200
    rgba[:, :10, 3] = 255  # left half opaque red, right half transparent
    Image.fromarray(rgba, mode="RGBA").save(images / "alpha.png")
    Image.fromarray(np.full((2, 3, 3), 90, np.uint8)).save(images / "tiny.png")
    Image.new("RGB", (3000, 2000), (10, 200, 30)).save(images / "huge.jpg", quality=60)
    Image.fromarray(rng.integers(0, 4, (16, 16), dtype=np.uint8), mode="P").save(images / "palette.png")
    (images / "corrupt.jpg").write_bytes(b"\xff\xd8 this is not a JPEG at all")
    return images


NAMES = ["rgb.jpg", "grey.png", "alpha.png", "tiny.png", "huge.jpg", "palette.png", "corrupt.jpg", "missing.jpg"]


def _write_captions_csv(path):
    lines = ["image,caption"]
    for name in NAMES:
        for k in range(5):
            lines.append(f"{name},A thing , number {k} in {name} .")
    lines.append('rgb.jpg,"A caption, in quotes, with ""inner"" quotes ."')
    path.write_text("\n".join(lines) + "\n")


def test_reads_the_csv_format(tmp_path):
    path = tmp_path / "captions.txt"
    _write_captions_csv(path)
    captions = read_captions(path)
    assert sorted(captions) == sorted(NAMES)
    assert len(captions["grey.png"]) == 5
    assert captions["grey.png"][0] == "A thing , number 0 in grey.png ."
    assert captions["rgb.jpg"][-1] == 'A caption, in quotes, with "inner" quotes .'


def test_reads_the_original_token_format(tmp_path):
    path = tmp_path / "Flickr8k.token.txt"
    path.write_text("1000268201_693b08cb0e.jpg#0\tA child in a pink dress .\n"
                    "1000268201_693b08cb0e.jpg#1\tA girl going into a wooden building .\n"
                    "1001773457_577c3a7d70.jpg#0\tA black dog and a spotted dog are fighting\n")
    captions = read_captions(path)
    assert captions == {
        "1000268201_693b08cb0e.jpg": ["A child in a pink dress .", "A girl going into a wooden building ."],
        "1001773457_577c3a7d70.jpg": ["A black dog and a spotted dog are fighting"],
    }


def test_bad_caption_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_captions(tmp_path / "nothing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("image,caption\njust-a-name-without-caption\n")
    with pytest.raises(ValueError, match="bad.txt:2"):
        read_captions(bad)


def test_any_mode_and_size_becomes_a_square_rgb(tmp_path):
    images = _make_folder(tmp_path)
    for name in ["rgb.jpg", "grey.png", "alpha.png", "tiny.png", "huge.jpg", "palette.png"]:
        array = load_image(images / name, 32)
        assert array.shape == (32, 32, 3) and array.dtype == np.uint8, name
    alpha = load_image(images / "alpha.png", 20)
    assert alpha[10, 2, 0] > 180 and alpha[10, 2, 1] < 40  # opaque red stays red
    assert alpha[10, 17].min() > 240  # transparent becomes white, not black
    huge = load_image(images / "huge.jpg", 16)
    assert abs(int(huge[8, 8, 1]) - 200) < 20


def test_corrupt_and_missing_images_are_skipped_by_name(tmp_path):
    images = _make_folder(tmp_path)
    path = tmp_path / "captions.txt"
    _write_captions_csv(path)
    with pytest.warns(UserWarning, match="corrupt.jpg|missing.jpg"):
        parts = load_flickr8k(images, path, image_size=24, fractions=(0.5, 0.25, 0.25), seed=1)
    skipped = {name for part in parts.values() for name, _ in part.skipped}
    assert skipped == {"corrupt.jpg", "missing.jpg"}
    kept = [name for part in parts.values() for name in part.names]
    assert sorted(kept) == sorted(set(NAMES) - skipped)
    for part in parts.values():
        assert part.images.shape == (len(part), 24, 24, 3)
        assert len(part.captions) == len(part)
        assert len(part.pairs()) == sum(len(c) for c in part.captions)


def test_the_five_captions_of_an_image_stay_in_one_part():
    names = [f"img{i:03d}.jpg" for i in range(200)]
    parts = split_names(names, (0.8, 0.1, 0.1), seed=3)
    assert [len(parts[p]) for p in ("train", "valid", "test")] == [160, 20, 20]
    assert set(parts["train"]).isdisjoint(parts["test"]) and set(parts["valid"]).isdisjoint(parts["test"])
    assert split_names(names, seed=3) == parts and split_names(names, seed=4) != parts
    with pytest.raises(ValueError, match="fractions"):
        split_names(names, (0.5, 0.5, 0.5))


def test_missing_folder_and_no_readable_image(tmp_path):
    path = tmp_path / "captions.txt"
    path.write_text("image,caption\nnone.jpg,A caption .\n")
    with pytest.raises(FileNotFoundError):
        load_flickr8k(tmp_path / "nope", path)
    (tmp_path / "Images").mkdir()
    with pytest.warns(UserWarning, match="none.jpg"):
        with pytest.raises(ValueError, match="None of the 1 images"):
            load_flickr8k(tmp_path / "Images", path, fractions=(1.0, 0.0, 0.0))


def test_undecodable_bytes_and_empty_captions_are_not_passed_over_silently(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("image,caption\na.jpg,a caf\xe9 by the sea\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"not UTF-8 text. Received: byte b'\\xe9' at offset 25"):
        read_captions(latin)
    gaps = tmp_path / "gaps.txt"
    gaps.write_text("image,caption\na.jpg,a dog runs\na.jpg,\n,a cat sits\nb.jpg,two birds\n")
    with pytest.warns(UserWarning, match=r"skipped 2 line\(s\) .* \(line 3, 4\)"):
        captions = read_captions(gaps)
    assert captions == {"a.jpg": ["a dog runs"], "b.jpg": ["two birds"]}


def test_too_few_images_for_a_part_are_refused_not_split_into_an_empty_part():
    names = [f"img{i}.jpg" for i in range(5)]
    with pytest.raises(ValueError, match=r"the valid part would be empty. Received: 5 images"):
        split_names(names)  # 0.8 / 0.1 / 0.1 of 5: 4, 0 (was returned as is), 1
    assert [len(part) for part in split_names(names, (0.6, 0.2, 0.2)).values()] == [3, 1, 1]
    assert split_names(names, (1.0, 0.0, 0.0))["valid"] == []  # a fraction of 0 asks for an empty part
