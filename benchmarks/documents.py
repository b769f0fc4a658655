"""Document classification figures: generated documents and BBC News.

    python benchmarks/documents.py generated [--encoder han|plain|flat] [--epochs N] [--seed S] [--out DIR]
    python benchmarks/documents.py bbc --data ../shared/data/bbc_news [--encoder han] [--epochs N] [--out DIR]

Prints held-out accuracy, macro-F1, planted-sentence top-1 (generated data),
training time and the exact settings (seed, epochs asked and run, batch
size, the model's configuration), as one JSON line at the end. Targets
(full profile): generated accuracy >= 0.98 and planted top-1 >= 0.90; BBC
accuracy >= 0.95 with the attention network. The BBC data is not part of
the project: point --data at your copy (real data is for benchmarks only).
"""

import argparse
import json
import os
import platform
import time

from course_lib.tasks.arguments import positive_int


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=["generated", "bbc"])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "bbc_news"))
    parser.add_argument("--encoder", default="han", choices=["han", "plain", "flat"])
    parser.add_argument("--epochs", type=positive_int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also save the trained model here")
    args = parser.parse_args(argv)

    import tensorflow as tf

    from course_lib.tasks.documents import train_documents, trained_config
    from course_lib.training.profiles import current_profile

    start = time.perf_counter()
    trained = train_documents(
        data=None if args.dataset == "generated" else args.data,
        encoder=args.encoder, epochs=args.epochs, seed=args.seed, out=args.out,
    )
    metrics = trained.metrics
    result = {
        "dataset": args.dataset,
        "encoder": args.encoder,
        "profile": current_profile(),
        "train_documents": len(trained.splits["train"]),
        "test_documents": metrics["documents"],
        "accuracy": round(metrics["accuracy"], 4),
        "macro_f1": round(metrics["macro_f1"], 4),
        "planted_sentence_top1": (round(metrics["planted_sentence_top1"], 4)
                                  if metrics.get("planted_sentence_top1") is not None else None),
        "planted_documents": metrics.get("planted_documents"),  # how many test documents that top-1 is over
        "seed": args.seed,
        "epochs": trained.settings["epochs"],
        "epochs_run": trained.settings["epochs_run"],
        "batch_size": trained.settings["batch_size"],
        "model": {key: value for key, value in trained_config(trained.model.get_config()).items()
                  if key not in ("name", "trainable")},
        "train_seconds": round(trained.seconds, 1),
        "total_seconds": round(time.perf_counter() - start, 1),
        "device": "GPU" if tf.config.list_logical_devices("GPU") else f"CPU ({os.cpu_count()} cores, {platform.machine()})",
        "confusion_matrix": metrics["confusion_matrix"],
        "class_names": metrics["class_names"],
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
