"""Benchmark: the full reversal run (training + evaluation), ours vs a PyTorch reference.

    python benchmarks/reversal.py [--steps 2500] [--short-steps 400] [--no-reference] [--default-threads]
        [--policy mixed_bfloat16]

Prints seconds to train, steps per second and the exact match reached; where
PyTorch is installed it also runs the reference model (see
`reversal_reference_torch.py`) on the same data and prints the wall-time ratio.
Target: our full run under one third of the reference's wall time. It also
times a short run (400 steps by default) and says whether that one still meets
the quality targets: our recipe gets there in far fewer steps than 2,500.

Our clock starts before the model is built, so our totals include building it
and tracing the train step (a few seconds); the reference's clock starts after
its model is built (milliseconds in eager PyTorch). The comparison is
therefore, if anything, unfavourable to us, most visibly at small `--steps`.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

from course_lib.tasks.arguments import positive_int


def run_ours(steps):
    import keras  # noqa: F401  imported before the clock starts, as torch is for the reference

    from course_lib.tasks.reversal import ReversalConfig, run

    start = time.perf_counter()
    config = ReversalConfig.for_profile("full", steps=steps, extrapolation_lengths=())
    _, result = run(config, verbose=0)
    total = time.perf_counter() - start
    return {"train_seconds": result.train_seconds, "total_seconds": total, "eval_seconds": result.eval_seconds,
            "exact_match": {k: result.exact_match[k] for k in (5, 7, 10)}, "alignment": result.alignment}


def run_reference(steps):
    """The PyTorch reference, in a process of its own.

    In one process with TensorFlow, PyTorch 2.14's training crashed (segmentation fault, 1 Dec 2026), and
    the two libraries' thread pools would compete for the same cores anyway.
    """
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reversal_reference_torch.py")
    finished = subprocess.run([sys.executable, script, "--steps", str(steps)], capture_output=True, text=True)
    if finished.returncode != 0:
        raise RuntimeError(f"The PyTorch reference failed (exit {finished.returncode}):\n{finished.stderr[-2000:]}")
    reference = json.loads(finished.stdout.strip().splitlines()[-1])
    reference["exact_match"] = {int(length): score for length, score in reference["exact_match"].items()}
    return reference


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=positive_int, default=2500)
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--short-steps", type=int, default=400,
                        help="also time a run this long (0: skip) and check it still meets the targets")
    parser.add_argument("--default-threads", action="store_true", help="keep TensorFlow's thread defaults")
    parser.add_argument("--policy", default="float32", help="Keras dtype policy of our model, e.g. mixed_bfloat16")
    args = parser.parse_args()

    from course_lib.training.threads import tune_for_small_cpu

    import keras

    backend = {"tensorflow": "TF", "jax": "JAX", "torch": "PyTorch"}.get(keras.backend.backend(), keras.backend.backend())
    tuned = False if args.default_threads else tune_for_small_cpu()
    print(f"TensorFlow threads: {'1 per op, 2 ops at a time' if tuned else 'defaults'}", flush=True)
    keras.config.set_dtype_policy(args.policy)  # a name Keras does not know is refused here, before any run
    print(f"Keras dtype policy: {keras.config.dtype_policy().name}", flush=True)
    runs = {args.steps: run_ours(args.steps)}
    if args.short_steps:
        runs[args.short_steps] = run_ours(args.short_steps)
    for steps, ours in runs.items():
        meets = all(ours["exact_match"][k] >= 0.995 for k in (5, 7, 10)) and ours["alignment"] >= 0.99
        print(f"course_lib (Keras 3 / {backend}), {steps} steps: train {ours['train_seconds']:.1f} s, "
              f"{steps / ours['train_seconds']:.1f} steps/s, evaluation {ours['eval_seconds']:.1f} s, "
              f"total {ours['total_seconds']:.1f} s")
        print("  exact match at 5/7/10: " + " / ".join(f"{ours['exact_match'][k]:.3f}" for k in (5, 7, 10))
              + f", alignment {ours['alignment']:.4f} (targets >= 0.995 and >= 0.99: {'met' if meets else 'NOT met'})")
    if args.no_reference:
        print("PyTorch reference skipped (--no-reference).")
        return
    if importlib.util.find_spec("torch") is None:
        print("PyTorch is not installed: reference skipped (pip install torch to compare).")
        return
    reference = run_reference(args.steps)
    print(f"PyTorch reference (eager): train {reference['train_seconds']:.1f} s, "
          f"{args.steps / reference['train_seconds']:.1f} steps/s, total {reference['total_seconds']:.1f} s")
    print("  exact match at 5/7/10: " + " / ".join(f"{reference['exact_match'][k]:.3f}" for k in (5, 7, 10)))
    for steps, ours in runs.items():
        ratio = ours["total_seconds"] / reference["total_seconds"]
        print(f"Wall-time ratio, ours at {steps} steps / reference at {args.steps}: {ratio:.3f} (target < 0.333)")


if __name__ == "__main__":
    main()
