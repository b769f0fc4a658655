"""Features of a frozen backbone, computed once and kept on disk.

A frozen VGG16 gives the same conv5 map and fc7 vector for an image in every
epoch, so recomputing them is wasted work (a VGG16 forward pass costs about
15 GFLOPs per image). `cached_features` computes them once, stores them in one
`.npz` file named after a hash of everything they depend on (backbone,
weights, image size, the image files with their sizes and modification
times), and reads that file on every later call.
"""

import hashlib
import json
import os
from pathlib import Path

import numpy as np


def cache_key(*parts):
    """A short stable hash of JSON-serialisable `parts`."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def file_fingerprints(paths):
    """`[name, size, mtime]` for each file (missing files get `None`s), for cache keys."""
    prints = []
    for path in paths:
        path = Path(path)
        try:
            stat = path.stat()
            prints.append([path.name, stat.st_size, int(stat.st_mtime)])
        except OSError:
            prints.append([path.name, None, None])
    return prints


def cached_features(cache_dir, name, key_parts, count, compute_batch, batch_size=32, dtype="float16", verbose=True):
    """Returns the features of `count` items, computing them only on a cache miss.

    Args:
        cache_dir: folder for the cache files (created if needed).
        name: readable prefix of the file name, e.g. "vgg16".
        key_parts: everything the features depend on (see `cache_key`).
        count: number of items.
        compute_batch: `compute_batch(start, stop)` -> dict of arrays with
            `stop - start` rows each (e.g. `{"locations": ..., "vector": ...}`).
        batch_size: rows per `compute_batch` call.
        dtype: storage dtype (float16 halves the disk space of a conv5 map).
        verbose: print whether the features were read from the cache or
            computed (an unreadable cache file is reported either way).

    Returns:
        A dict of arrays (float32) with `count` rows each, read from
        `<cache_dir>/<name>-<hash>.npz`.
    """
    if count < 1:
        raise ValueError(f"Nothing to compute features for. Received: count={count}")
    if batch_size < 1:
        raise ValueError(f"`batch_size` must be positive. Received: batch_size={batch_size}")
    cache_dir = Path(cache_dir)
    path = cache_dir / f"{name}-{cache_key(name, count, key_parts)}.npz"
    if path.exists():
        try:
            with np.load(path) as stored:
                arrays = {key: stored[key].astype("float32") for key in stored.files}
            if arrays and all(len(a) == count for a in arrays.values()):
                if verbose:
                    print(f"Read cached {name} features of {count} items from {path}")
                return arrays
        except (OSError, ValueError, EOFError) as error:  # a truncated or foreign file
            print(f"Ignoring unreadable feature cache {path} ({error}); recomputing.")
    parts = {}
    for start in range(0, count, batch_size):
        stop = min(start + batch_size, count)
        batch = compute_batch(start, stop)
        for key, value in batch.items():
            value = np.asarray(value)
            if len(value) != stop - start:
                raise ValueError(
                    f"compute_batch({start}, {stop}) returned {len(value)} rows for {key!r}; expected {stop - start}"
                )
            parts.setdefault(key, []).append(value.astype(dtype))
    arrays = {key: np.concatenate(values) for key, values in parts.items()}
    cache_dir.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".partial.npz")
    np.savez(temporary, **arrays)
    os.replace(temporary, path)  # never leave a half-written cache behind
    if verbose:
        print(f"Computed {name} features of {count} items; cached in {path}")
    return {key: value.astype("float32") for key, value in arrays.items()}
