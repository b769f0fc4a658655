"""Reranking transliteration beams with a second model: top-1 against the reranker's weight.

Decodes the test words once with beam search (one model or an ensemble),
scores every candidate once with the reranker (a native -> roman "channel"
model, or a right-to-left roman -> native model), and then prints top-1 word
accuracy for each weight of

    score(y) = log P(y | x) / (|y| + 1) + weight * log Q / n

(the first term is the beam's score at length penalty 1, `course_lib.decoding.rerank`;
`log Q` = `log P(x | y)` over `n = |x| + 1` tokens for a channel model, the
right-to-left `log P(y | x)` over `n = |y| + 1` for the other kind).

Several `--reranker` runs of one kind (e.g. right-to-left models from
different seeds) are averaged: `log Q` is the mean of their log-probabilities.

Three figures guard against picking the weight on the test words themselves:
`weight = 1`; "equal votes", `weight = R / M` for R reranking and M
decoding models, the weight at which every model counts alike (what
`course-lib evaluate --rerank-with` uses by default); and two-fold
cross-validation (the words are split in two halves by a seeded shuffle; each
half is scored with the weight that was best on the other half).

    course-lib train transliteration --right-to-left --train hin_train.csv \\
        --valid hin_valid.csv --epochs 40 --out runs/backwards      # or --direction native-roman
    python benchmarks/transliteration_rerank.py --model runs/forward [--model runs/forward_seed1] \\
        --reranker runs/backwards [--reranker runs/backwards_seed1] --test hin_valid.csv --beam 5 \\
        [--metrics-json rerank.json]
"""

import argparse
import json
import time

import numpy as np

from course_lib.tasks.arguments import positive_int

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def accuracy_per_weight(decoded, words, references, reranker, weights):
    """`{weight: per-word hit array}`, running the reranker once for all weights."""
    from course_lib.tasks.transliteration import rerank, reranker_log_probs

    scored = reranker_log_probs(decoded, words, reranker)
    hits = {}
    for weight in weights:
        predictions = rerank(decoded, words, reranker, weight, scored=scored)["predictions"]
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
    parser.add_argument("--reranker", action="append", required=True,
                        help="a native-roman or right-to-left run; several of one kind are averaged")
    parser.add_argument("--test", required=True)
    parser.add_argument("--beam", type=positive_int, default=5)
    parser.add_argument("--weights", type=float, nargs="+", default=list(WEIGHTS))
    parser.add_argument("--metrics-json")
    args = parser.parse_args(argv)

    from course_lib.metrics.transliteration import top_k_accuracy
    from course_lib.tasks import transliteration as task

    model, source_vocab, target_vocab, _ = task.load_ensemble(args.model)
    reranker = task.load_reranker(args.reranker, "--reranker")
    words, references = task.test_items(task.load_pairs(args.test), target_vocab)
    started = time.perf_counter()
    decoded = task.transliterate_words(model, source_vocab, target_vocab, words, beam_width=args.beam)
    decode_seconds = time.perf_counter() - started
    started = time.perf_counter()
    equal_votes = task.equal_votes_weight(model, reranker)
    hits = accuracy_per_weight(decoded, words, references, reranker,
                               sorted(set(args.weights) | {0.0, 1.0, equal_votes}))
    rerank_seconds = time.perf_counter() - started
    cv_accuracy, cv_weights = cross_validated(hits)
    result = {
        "models": args.model,
        "reranker": args.reranker,
        "reranker_kind": reranker.kind,
        "words": len(words),
        "beam_width": args.beam,
        "top_k_accuracy": top_k_accuracy(decoded["candidates"], references, k=args.beam),
        "word_accuracy_by_weight": {str(w): float(h.mean()) for w, h in hits.items()},
        "beam_order": float(hits[0.0].mean()),
        "weight_1": float(hits[1.0].mean()),
        "equal_votes_weight": equal_votes,
        "equal_votes": float(hits[equal_votes].mean()),
        "two_fold_cv": cv_accuracy,
        "two_fold_cv_weights": cv_weights,
        "decode_seconds": decode_seconds,
        "rerank_seconds": rerank_seconds,
    }
    print(f"{len(words)} words, beam {args.beam}: top-{args.beam} {result['top_k_accuracy']:.4f}")
    for weight, accuracy in result["word_accuracy_by_weight"].items():
        print(f"  weight {float(weight):4.2f}: top-1 {accuracy:.4f}")
    print(f"beam order {result['beam_order']:.4f}; weight 1 {result['weight_1']:.4f}; "
          f"equal votes (weight {equal_votes:.3g}) {result['equal_votes']:.4f}; "
          f"two-fold CV {cv_accuracy:.4f} (weights {cv_weights})")
    if args.metrics_json:
        with open(args.metrics_json, "w") as handle:
            json.dump(result, handle, indent=1)


if __name__ == "__main__":
    main()
