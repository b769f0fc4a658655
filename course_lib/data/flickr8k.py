"""Flickr8k-style captioning data: an image folder and a captions file.

Two caption formats are read:

* `captions.txt`, the common download: a CSV with the header `image,caption`
  and one `name.jpg,caption text` line per caption (the caption may itself
  contain commas, so only the first comma separates the fields; a caption in
  double quotes is unquoted);
* `Flickr8k.token.txt`, the original release: `name.jpg#k<TAB>caption`.

Images are opened with Pillow, converted to RGB whatever their mode
(greyscale, RGBA, palette, CMYK...) and resized to a square of the encoder's
size, whatever their own size. An image that is missing or cannot be decoded
is reported by name and skipped; it never stops the run.

Splits are made by image, so the (usually five) captions of one photo always
stay together in one part.
"""

import numbers
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course_lib.data.splitting import check_no_empty_part


@dataclass
class CaptionedImages:
    """One part of an image-caption data set.

    Attributes:
        names: image file names, `n` of them.
        images: uint8 `(n, size, size, 3)`.
        captions: `n` lists of reference captions (all captions of each image).
        skipped: `(name, reason)` for images that could not be read.
    """

    names: list
    images: np.ndarray
    captions: list
    skipped: list = field(default_factory=list)

    def __len__(self):
        return len(self.names)

    def pairs(self):
        """`(image_index, caption)` for every caption: one training example each."""
        return [(index, caption) for index, refs in enumerate(self.captions) for caption in refs]


def _unquote(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    return text.strip()


def read_captions(path):
    """Reads `captions.txt` (CSV with `image,caption` header) or `Flickr8k.token.txt`.

    Returns:
        A dict `{image name: [captions...]}` in file order.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No captions file at {path}")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path} is not UTF-8 text. Received: byte {error.object[error.start:error.start + 1]!r} "
            f"at offset {error.start}"
        ) from None
    captions = {}
    header_seen = False
    skipped = []  # line numbers with an empty image name or caption
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if "\t" in line:  # Flickr8k.token.txt: name.jpg#k<TAB>caption
            name, caption = line.split("\t", 1)
            name = name.split("#", 1)[0].strip()
        elif "," in line:
            name, caption = line.split(",", 1)
            name = _unquote(name)
            if not header_seen and name.lower() == "image" and _unquote(caption).lower() == "caption":
                header_seen = True
                continue
        else:
            raise ValueError(
                f"{path}:{number}: expected 'image,caption' or 'image#k<TAB>caption'. Received: {line[:80]!r}"
            )
        caption = _unquote(caption)
        if name and caption:
            captions.setdefault(name, []).append(caption)
        else:
            skipped.append(number)
    if not captions:
        raise ValueError(f"{path} holds no captions.")
    if skipped:
        warnings.warn(f"{path}: skipped {len(skipped)} line(s) with an empty image name or caption "
                      f"(line {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''}).")
    return captions


def load_image(path, image_size):
    """One image as uint8 `(image_size, image_size, 3)`, any mode or size.

    Raises:
        OSError / ValueError with the file name when it is missing or corrupt.
    """
    from PIL import Image

    with Image.open(path) as image:
        image.draft("RGB", (image_size, image_size))  # JPEG: decode big photos at a reduced scale
        if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
            image = image.convert("RGBA")
            background = Image.new("RGBA", image.size, (255, 255, 255, 255))
            image = Image.alpha_composite(background, image)
        image = image.convert("RGB").resize((image_size, image_size), Image.Resampling.BILINEAR)
        return np.asarray(image, dtype="uint8")


def load_images(folder, names, image_size, verbose=True):
    """Loads the named images; unreadable ones are reported and skipped.

    Returns:
        `(kept_names, images (n, size, size, 3) uint8, skipped [(name, reason)])`.
    """
    folder = Path(folder)
    kept, arrays, skipped = [], [], []
    for name in names:
        try:
            arrays.append(load_image(folder / name, image_size))
            kept.append(name)
        except Exception as error:  # Pillow raises many kinds; none may end the run
            reason = f"{type(error).__name__}: {error}"
            skipped.append((name, reason))
            if verbose:
                warnings.warn(f"Skipping image {name}: {reason}", stacklevel=2)
    images = np.stack(arrays) if arrays else np.zeros((0, image_size, image_size, 3), "uint8")
    return kept, images, skipped


def split_names(names, fractions=(0.8, 0.1, 0.1), seed=0):
    """Shuffles image names with `seed` and cuts them into train/valid/test.

    Raises `ValueError` when a part with a fraction above 0 would get no image
    (too few images for the fractions: 5 images at 0.8/0.1/0.1 left the
    validation part empty, and training then failed far from the cause).
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or not 0.999 <= sum(fractions) <= 1.001:
        raise ValueError(f"`fractions` must be three non-negative numbers summing to 1. Received: {fractions}")
    names = sorted(names)
    order = np.random.default_rng(seed).permutation(len(names))
    shuffled = [names[i] for i in order]
    train_end = int(round(fractions[0] * len(names)))
    valid_end = train_end + int(round(fractions[1] * len(names)))
    parts = {"train": shuffled[:train_end], "valid": shuffled[train_end:valid_end], "test": shuffled[valid_end:]}
    check_no_empty_part({name: len(part) for name, part in parts.items()}, dict(zip(parts, fractions)), "images",
                        f"{len(names)} images, fractions={tuple(fractions)}")
    return parts


def _count_of_at_least_one(name, value, also=""):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not float(value).is_integer() or value < 1:
        raise ValueError(f"`{name}` must be {also}an integer of at least 1. Received: {name}={value!r}")
    return int(value)


def load_flickr8k(images_dir, captions_file, image_size=48, fractions=(0.8, 0.1, 0.1), seed=0, limit=None, verbose=True):
    """Loads an image folder with its captions, split by image.

    Args:
        images_dir: the `Images/` folder.
        captions_file: `captions.txt` or `Flickr8k.token.txt`.
        image_size: side of the square the images are resized to.
        fractions: train/valid/test shares of the images.
        seed: the split's random seed.
        limit: use only the first `limit` images (sorted by name), for quick
            runs: None (all) or an integer of at least 1.
        verbose: warn about each unreadable image and print how many were
            skipped (they are listed in each part's `skipped` either way).

    Returns:
        A dict `{"train", "valid", "test"}` of `CaptionedImages`; every part
        lists the images it had to skip.
    """
    image_size = _count_of_at_least_one("image_size", image_size)
    limit = None if limit is None else _count_of_at_least_one("limit", limit, "None or ")
    images_dir = Path(images_dir)
    if not images_dir.is_dir():
        raise FileNotFoundError(f"No image folder at {images_dir}")
    captions = read_captions(captions_file)
    names = sorted(captions)
    if limit is not None:
        names = names[:limit]
    parts = {}
    for part, part_names in split_names(names, fractions, seed).items():
        kept, images, skipped = load_images(images_dir, part_names, image_size, verbose=verbose)
        parts[part] = CaptionedImages(kept, images, [captions[n] for n in kept], skipped)
    total_skipped = sum(len(p.skipped) for p in parts.values())
    if verbose and total_skipped:
        print(f"Skipped {total_skipped} unreadable image(s) of {len(names)}.")
    if sum(len(p) for p in parts.values()) == 0:
        raise ValueError(f"None of the {len(names)} images named in {captions_file} could be read from {images_dir}.")
    return parts
