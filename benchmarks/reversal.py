"""Benchmark: the full reversal run (training + evaluation), ours vs a PyTorch reference.

    python benchmarks/reversal.py [--steps 2500] [--no-reference]

Prints seconds to train, steps per second and the exact match reached; where
PyTorch is installed it also runs the reference model (see
`reversal_reference_torch.py`) on the same data and prints the wall-time ratio.
Target: our full run under one third of the reference's wall time.
"""

import argparse
import importlib.util
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def run_ours(steps):
    from course_lib.tasks.reversal import ReversalConfig, run

    start = time.perf_counter()
    config = ReversalConfig.for_profile("full", steps=steps, extrapolation_lengths=())
    _, result = run(config, verbose=0)
    total = time.perf_counter() - start
    return {"train_seconds": result.train_seconds, "total_seconds": total,
            "exact_match": {k: result.exact_match[k] for k in (5, 7, 10)}, "alignment": result.alignment}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2500)
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()

    ours = run_ours(args.steps)
    print(f"course_lib (Keras 3 / TF): train {ours['train_seconds']:.1f} s, "
          f"{args.steps / ours['train_seconds']:.1f} steps/s, total (train + eval) {ours['total_seconds']:.1f} s")
    print("  exact match at 5/7/10: " + " / ".join(f"{ours['exact_match'][k]:.3f}" for k in (5, 7, 10))
          + f", alignment {ours['alignment']:.4f}")
    if args.no_reference or importlib.util.find_spec("torch") is None:
        print("PyTorch is not installed: reference skipped (pip install torch to compare).")
        return
    from reversal_reference_torch import train_and_evaluate

    reference = train_and_evaluate(args.steps)
    print(f"PyTorch reference (eager): train {reference['train_seconds']:.1f} s, "
          f"{args.steps / reference['train_seconds']:.1f} steps/s, total {reference['total_seconds']:.1f} s")
    print("  exact match at 5/7/10: " + " / ".join(f"{reference['exact_match'][k]:.3f}" for k in (5, 7, 10)))
    ratio = ours["total_seconds"] / reference["total_seconds"]
    print(f"Wall-time ratio ours / reference: {ratio:.3f} (target < 0.333)")


if __name__ == "__main__":
    main()
