"""GPU check under the JAX backend (for a machine with a GPU and no TensorFlow).

    KERAS_BACKEND=jax python benchmarks/gpu_jax_check.py [--aksharantar DIR] [--skip-reversal]

1. BahdanauAttention against the NumPy formula, masking and Q6's 98,432 on JAX.
2. The full-profile reversal run (2,500 steps) with attention: wall time,
   exact match at 5/7/10 and the alignment share.
3. With --aksharantar: seconds per epoch of the transliteration-sized Seq2Seq
   (bidirectional GRU 256, deep output) on Aksharantar Hindi, and greedy
   top-1 word accuracy on the validation part after each epoch.
"""

import argparse
import csv
import importlib.util
import json
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402

from course_lib.tasks.arguments import positive_int  # noqa: E402

# Keras (and with it JAX) is imported by `main` once the arguments are read: `--help` needs neither, and a
# machine without JAX gets a one-line error naming it instead of a ModuleNotFoundError traceback.
keras = None
BACKEND_PACKAGES = {"jax": "jax", "tensorflow": "tensorflow", "torch": "torch"}  # Keras backend -> package


def check_attention():
    from course_lib.layers import BahdanauAttention

    rng = np.random.default_rng(0)
    query = rng.normal(size=(4, 512)).astype("float32")
    values = rng.normal(size=(4, 9, 256)).astype("float32")
    mask = np.ones((4, 9), bool)
    mask[1, 5:] = False
    mask[2, :] = False
    layer = BahdanauAttention(128)
    context, weights = layer(query, values, mask=mask)
    U, W, v = (np.asarray(w) for w in (layer.query_kernel, layer.key_kernel, layer.score_vector))
    scores = np.tanh((query @ U)[:, None] + values @ W) @ v
    scores = np.where(mask, scores, -np.inf)
    expected = np.exp(scores - scores.max(1, keepdims=True, where=mask, initial=-1e30))
    expected = np.where(mask, expected, 0)
    sums = expected.sum(1, keepdims=True)
    expected = np.divide(expected, sums, out=np.zeros_like(expected), where=sums > 0)
    error = float(np.abs(np.asarray(weights) - expected).max())
    return {
        "backend": keras.backend.backend(),
        "devices": [str(d) for d in __import__("jax").devices()] if keras.backend.backend() == "jax" else [],
        "params": layer.count_params(),
        "max_abs_error_vs_numpy": error,
        "all_masked_row_zero": bool(np.all(np.asarray(weights)[2] == 0) and np.all(np.isfinite(np.asarray(context)))),
    }


def run_reversal(steps=2500):
    from course_lib.tasks.reversal import ReversalConfig, run

    start = time.perf_counter()
    config = ReversalConfig.for_profile("full", steps=steps, extrapolation_lengths=(11, 12, 13, 14))
    _, result = run(config, verbose=0)
    metrics = result.metrics()
    metrics["total_seconds"] = round(time.perf_counter() - start, 1)
    return metrics


def read_pairs(path):
    with open(path, encoding="utf-8") as handle:
        return [(row[0], row[1]) for row in csv.reader(handle) if len(row) == 2]


def run_aksharantar(folder, epochs=3, batch_size=256, limit=None):
    from course_lib.models import Seq2Seq

    train = read_pairs(os.path.join(folder, "hin_train.csv"))
    valid = read_pairs(os.path.join(folder, "hin_valid.csv"))
    if limit:
        train, valid = train[:limit], valid[: max(1, limit // 10)]
    source_chars = sorted({c for r, _ in train for c in r})
    target_chars = sorted({c for _, n in train for c in n})
    source_index = {c: i + 4 for i, c in enumerate(source_chars)}
    target_index = {c: i + 4 for i, c in enumerate(target_chars)}

    def encode(words, index, add_go=False, add_stop=False, width=None):
        rows = [([1] if add_go else []) + [index.get(c, 3) for c in w] + ([2] if add_stop else []) for w in words]
        width = width or max(map(len, rows))
        width = -(-width // 8) * 8  # lengths padded to multiples of 8: few compiled shapes
        out = np.zeros((len(rows), width), "int32")
        for i, r in enumerate(rows):
            out[i, : len(r)] = r
        return out

    order = np.argsort([len(r) for r, _ in train], kind="stable")
    batches = []
    for start in range(0, len(order), batch_size):
        chunk = [train[i] for i in order[start : start + batch_size]]
        target_in = encode([n for _, n in chunk], target_index, add_go=True)
        target_out = encode([n for _, n in chunk], target_index, add_stop=True, width=target_in.shape[1])
        batches.append(({"source": encode([r for r, _ in chunk], source_index), "target_in": target_in}, target_out))

    keras.utils.set_random_seed(0)
    model = Seq2Seq(len(source_chars) + 4, len(target_chars) + 4, embedding_dim=64, units=256,
                    bidirectional=True, deep_output=True, max_output_length=32)
    model.compile(optimizer=keras.optimizers.Adam(2e-3, clipnorm=1.0))
    rng = np.random.default_rng(0)
    valid_source = encode([r for r, _ in valid], source_index)
    inverse = {i: c for c, i in target_index.items()}
    report = []
    for epoch in range(epochs):
        start = time.perf_counter()
        for index in rng.permutation(len(batches)):
            model.train_on_batch(*batches[index])
        seconds = time.perf_counter() - start
        tokens = []
        for start_row in range(0, len(valid_source), 1024):
            tokens.append(model.generate(valid_source[start_row : start_row + 1024], max_length=32)["tokens"])
        tokens = np.concatenate(tokens)
        words = ["".join(inverse.get(t, "") for t in row[: list(row).index(2)] if t >= 4) if 2 in row else None for row in tokens]
        accuracy = float(np.mean([w == n for w, (_, n) in zip(words, valid)]))
        report.append({"epoch": epoch + 1, "train_seconds": round(seconds, 1), "valid_top1_greedy": round(accuracy, 4)})
        print(json.dumps(report[-1]), flush=True)
    return {"train_pairs": len(train), "valid_pairs": len(valid), "batch_size": batch_size, "epochs": report}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aksharantar", default=None)
    parser.add_argument("--epochs", type=positive_int, default=3)
    parser.add_argument("--skip-reversal", action="store_true")
    parser.add_argument("--reversal-steps", type=positive_int, default=2500)
    parser.add_argument("--limit", type=positive_int, default=None,
                        help="use only this many training pairs (smoke test)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args()
    backend = os.environ["KERAS_BACKEND"]
    package = BACKEND_PACKAGES.get(backend)
    if package and importlib.util.find_spec(package) is None:
        parser.exit(2, f"{parser.prog}: error: the {backend} backend (KERAS_BACKEND={backend}) needs the package "
                       f"{package!r}, which is not installed\n")
    global keras
    import keras

    results = {"attention": check_attention()}
    print(json.dumps(results["attention"]), flush=True)
    if not args.skip_reversal:
        results["reversal"] = run_reversal(args.reversal_steps)
        print(json.dumps(results["reversal"]), flush=True)
    if args.aksharantar:
        results["aksharantar"] = run_aksharantar(args.aksharantar, epochs=args.epochs, limit=args.limit)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(results, handle, indent=2)


if __name__ == "__main__":
    main()
