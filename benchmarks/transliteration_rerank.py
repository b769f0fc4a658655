"""Noisy-channel reranking of transliteration beams: top-1 against the reverse model's weight.

Decodes the test words once with beam search (one model or an ensemble),
scores every candidate with a reverse (native -> roman) model once, and then
prints top-1 word accuracy for each weight of

    score(y) = log P(y | x) / |y| + weight * log P(x | y) / (|x| + 1).

Two figures guard against picking the weight on the test words themselves:
`weight = 1`, fixed before looking, and two-fold cross-validation (the words
are split in two halves by a seeded shuffle; each half is scored with the
weight that was best on the other half).

    course-lib train transliteration --direction native-roman --train hin_train.csv \\
        --valid hin_valid.csv --epochs 20 --out runs/reverse
    python benchmarks/transliteration_rerank.py --model runs/forward [--model runs/forward_seed1] \\
        --channel runs/reverse --test hin_valid.csv --beam 5 [--metrics-json rerank.json]
"""

import argparse
import json
import time

import numpy as np

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def accuracy_per_weight(decoded, words, references, channel, weights):
    """`{weight: per-word hit array}`, running the reverse model once for all weights."""
    from course_lib.tasks.transliteration import channel_log_probs, rerank_with_channel

    log_probs = channel_log_probs(decoded, words, channel)
    hits = {}
    for weight in weights:
        predictions = rerank_with_channel(decoded, words, channel, weight, log_probs=log_probs)["predictions"]
        hits[weight] = np.array([p in r for p, r in zip(predictions, references)])
    return hits


def cross_validated(hits, seed=0):
    """Two-fold: each half scored with the weight best on the other half."""
    count = len(next(iter(hits.values())))
    order = np.random.default_rng(seed).permutation(count)
    halves = (order[: count // 2], order[count // 2:])
    correct, chosen = 0, []
    for scored, tuned in (halves, halves[::-1]):
        weight = max(hits, key=lambda w: (hits[w][tuned].mean(), -w))
        chosen.append(weight)
        correct += int(hits[weight][scored].sum())
    return correct / count, chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", required=True, help="forward run(s); several = ensemble")
    parser.add_argument("--channel", required=True, help="native-roman run (the reverse model)")
    parser.add_argument("--test", required=True)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--weights", type=float, nargs="+", default=list(WEIGHTS))
    parser.add_argument("--metrics-json")
    args = parser.parse_args(argv)

    from course_lib.metrics.transliteration import top_k_accuracy
    from course_lib.tasks import transliteration as task

    model, source_vocab, target_vocab, _ = task.load_ensemble(args.model)
    channel = task.load_run(args.channel)[:3]
    words, references = task.test_items(task.load_pairs(args.test), target_vocab)
    started = time.perf_counter()
    decoded = task.transliterate_words(model, source_vocab, target_vocab, words, beam_width=args.beam)
    decode_seconds = time.perf_counter() - started
    started = time.perf_counter()
    hits = accuracy_per_weight(decoded, words, references, channel, sorted(set(args.weights) | {0.0, 1.0}))
    rerank_seconds = time.perf_counter() - started
    cv_accuracy, cv_weights = cross_validated(hits)
    result = {
        "models": args.model,
        "channel": args.channel,
        "words": len(words),
        "beam_width": args.beam,
        "top_k_accuracy": top_k_accuracy(decoded["candidates"], references, k=args.beam),
        "word_accuracy_by_weight": {str(w): float(h.mean()) for w, h in hits.items()},
        "beam_order": float(hits[0.0].mean()),
        "weight_1": float(hits[1.0].mean()),
        "two_fold_cv": cv_accuracy,
        "two_fold_cv_weights": cv_weights,
        "decode_seconds": decode_seconds,
        "rerank_seconds": rerank_seconds,
    }
    print(f"{len(words)} words, beam {args.beam}: top-{args.beam} {result['top_k_accuracy']:.4f}")
    for weight, accuracy in result["word_accuracy_by_weight"].items():
        print(f"  weight {float(weight):4.2f}: top-1 {accuracy:.4f}")
    print(f"beam order {result['beam_order']:.4f}; weight 1 (fixed in advance) {result['weight_1']:.4f}; "
          f"two-fold CV {cv_accuracy:.4f} (weights {cv_weights})")
    if args.metrics_json:
        with open(args.metrics_json, "w") as handle:
            json.dump(result, handle, indent=1)


if __name__ == "__main__":
    main()
