"""The `train documents`, `evaluate documents` and `classify` commands.

    course-lib train documents [--data DIR|CSV] [--encoder han|plain|flat] [--epochs N] --out DIR
    course-lib evaluate documents --model DIR [--data DIR|CSV] [--metrics-json PATH]
    course-lib classify --model DIR FILE...
"""

import json
import os

import numpy as np

from course_lib.tasks.arguments import (
    ChoicesFrom, check_file_outside_runs, claim_run_folder, earlier_run_note, output_file, output_folder,
    positive_int, random_seed,
)
from course_lib.tasks.documents.data import check_parts_not_empty, load_splits
from course_lib.tasks.documents.evaluation import classify_texts, evaluate_documents
from course_lib.tasks.documents.runs import load_trained
from course_lib.tasks.documents.training import train_documents
from course_lib.tasks.run_files import write_json_file
from course_lib.text.vocabulary import UNK


# Printed after training and evaluating; planted top-1 with the count of documents it was scored on.
SUMMARY_KEYS = ("accuracy", "macro_f1", "planted_sentence_top1", "planted_documents")


def _parse_sizes(text):
    if text is None:
        return None
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if len(sizes) != 3 or min(sizes) < 1:
        raise ValueError(f"--sizes must be three positive integers TRAIN,VALID,TEST. Received: {text!r}")
    return sizes


def _train_command(args):
    claim_run_folder(args.out, "documents")
    replaced = earlier_run_note(args.out, "documents")
    if replaced:  # said before the training starts, not only after it
        print(replaced, flush=True)
    trained = train_documents(
        data=args.data, encoder=args.encoder, epochs=args.epochs, out=args.out, seed=args.seed,
        batch_size=args.batch_size, sizes=_parse_sizes(args.sizes),
    )
    metrics = {k: v for k, v in trained.metrics.items() if k in SUMMARY_KEYS}
    print(f"trained {args.encoder} in {trained.seconds:.1f} s; test: {json.dumps(metrics)}; saved to {args.out}")
    return 0


def _evaluate_command(args):
    if args.metrics_json:
        check_file_outside_runs(args.metrics_json, "--metrics-json", args.model)
    model, pipeline, settings = load_trained(args.model)
    data = args.data if args.data is not None else settings["data"]
    sizes = tuple(settings["sizes"]) if settings.get("sizes") else None
    splits = load_splits(data, seed=settings["seed"], sizes=sizes, class_names=settings["class_names"])
    if args.split not in splits:
        raise ValueError(f"--split must be one of {sorted(splits)} for this data. Received: {args.split!r}")
    check_parts_not_empty(splits, [args.split], data)
    metrics = evaluate_documents(model, pipeline, splits[args.split])
    summary = {k: metrics[k] for k in SUMMARY_KEYS if k in metrics}
    print(json.dumps({"split": args.split, "documents": metrics["documents"], **summary}))
    if args.metrics_json:
        write_json_file(args.metrics_json, {"split": args.split, **metrics}, indent=1)
    return 0


def _classify_command(args):
    from course_lib.data.bbc import FALLBACK_NOTE, read_text

    model, pipeline, settings = load_trained(args.model)
    texts = []
    for name in args.files:
        if not os.path.isfile(name):
            raise FileNotFoundError(f"No such file to classify. Received: {name!r}")
        text, used_fallback = read_text(name)
        if not text.strip():
            raise ValueError(f"Nothing to classify: the file is empty. Received: {name!r}")
        if "\x00" in text:  # an executable or an image read as Windows-1252 would still get a class
            raise ValueError(f"Nothing to classify: the file holds NUL bytes, so it is not text. Received: {name!r}")
        if used_fallback:
            print(f"{name}: not valid UTF-8, read as {FALLBACK_NOTE}")
        texts.append(text)
    results, _ = classify_texts(model, pipeline, settings["class_names"], texts)
    wordless = [name for name, result in zip(args.files, results) if not np.any(result["ids"] > UNK)]
    if wordless:  # all padding or unknown words: the "class" would be the model's answer to nothing it knows
        raise ValueError("Nothing to classify: no word of these files is in the model's vocabulary (another language, "
                         f"or no words at all). Received: {wordless}")
    for name, result in zip(args.files, results):
        weights = result["sentence_weights"]
        top = int(np.argmax(weights)) if len(weights) else "none (this encoder has no sentence attention)"
        print(f"{name}\t{result['label']}\t{result['probability']:.3f}\tmost attended sentence: {top}")
    return 0


def register_cli(commands):
    train = commands.train.add_parser("documents", help="train a document classifier (hierarchical attention)")
    train.add_argument("--data", default=None, help="BBC folder or label,text CSV (default: generated documents)")
    train.add_argument("--encoder", choices=ChoicesFrom("course_lib.models.document_classifier", "ENCODERS"),
                       default="han", metavar="ENCODER", help="one of: %(choices)s (default: %(default)s)")
    train.add_argument("--epochs", type=positive_int, default=None)
    train.add_argument("--batch-size", type=positive_int, default=32)
    train.add_argument("--seed", type=random_seed, default=0)
    train.add_argument("--sizes", default=None, metavar="TRAIN,VALID,TEST",
                       help="generated data only: documents per part (default by profile)")
    train.add_argument("--out", required=True, type=output_folder, help="folder for the trained model")
    train.set_defaults(handler=_train_command)

    evaluate = commands.evaluate.add_parser("documents", help="evaluate a trained document classifier")
    evaluate.add_argument("--model", required=True, help="folder written by `train documents`")
    evaluate.add_argument("--data", default=None, help="BBC folder, CSV or 'generated' (default: the training data)")
    evaluate.add_argument("--split", default="test", help="test (default), valid, train, or all (real data only)")
    evaluate.add_argument("--metrics-json", default=None, type=output_file(".json"),
                          help="write the metrics to this .json file (not inside a run folder; an existing file "
                               "is replaced, and the command says so)")
    evaluate.set_defaults(handler=_evaluate_command)

    classify = commands.root.add_parser("classify", help="classify text files with a trained document model")
    classify.add_argument("--model", required=True)
    classify.add_argument("files", nargs="+", metavar="FILE")
    classify.set_defaults(handler=_classify_command)
