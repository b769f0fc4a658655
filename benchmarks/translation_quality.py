"""Translation quality on the generated Hindi–English corpus (the issue's targets).

Trains (or resumes) one model per run and prints held-out test BLEU/chrF
(greedy and beam), attention/gold alignment agreement and BLEU by sentence
length, and writes them to OUT/NAME/summary.json.

    # full profile (targets: BLEU >= 95 both directions, agreement >= 0.90)
    python benchmarks/translation_quality.py --direction en-hi --out runs/translation
    python benchmarks/translation_quality.py --direction hi-en --out runs/translation
    python benchmarks/translation_quality.py --direction hi-en --no-attention --out runs/translation

`--conditional` and `--alignment-loss-weight` need attention: with `--no-attention` the run is
refused (a plain model has no attention to condition or supervise); `--supervised-pairs` needs
`--alignment-loss-weight`.

`COURSE_PROFILE=fast` runs the short CI budget instead.
"""

import argparse
import json
import time
from pathlib import Path

from course_lib.data import hindi_english
from course_lib.tasks import translation as task
from course_lib.tasks.arguments import positive_int
from course_lib.tasks.translation.config import check_supervision
from course_lib.training.profiles import current_profile


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--direction", choices=hindi_english.DIRECTIONS, default="en-hi")
    parser.add_argument("--no-attention", action="store_true")
    parser.add_argument("--epochs", type=positive_int, default=None)
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument("--conditional", action="store_true", default=None,
                        help="conditional GRU decoder step (the query reads the previous word first); attention only")
    parser.add_argument("--alignment-loss-weight", type=float, default=None,
                        help="supervise attention with the gold alignment (squared error, this weight); attention only")
    parser.add_argument("--supervised-pairs", type=int, default=None,
                        help="with --alignment-loss-weight: only this many training pairs carry the gold alignment")
    parser.add_argument("--beam", type=positive_int, default=4)
    parser.add_argument("--out", default="runs/translation")
    args = parser.parse_args(argv)

    try:  # options that do not go together are refused here, as usage errors, before any data is made
        config = task.TranslationConfig.for_profile(
            direction=args.direction, epochs=args.epochs, learning_rate=args.learning_rate,
            conditional=args.conditional, alignment_loss_weight=args.alignment_loss_weight,
            supervised_pairs=args.supervised_pairs, attention=not args.no_attention)
        config.check()
        check_supervision(config.supervised_pairs, config.alignment_loss_weight)
    except ValueError as error:
        parser.error(str(error))
    name = args.direction + ("-plain" if args.no_attention else "") + ("-conditional" if args.conditional else "")
    name += f"-supervised{args.alignment_loss_weight:g}" if args.alignment_loss_weight else ""
    name += f"-on{args.supervised_pairs}" if args.supervised_pairs is not None else ""
    out_dir = Path(args.out) / name
    parts = hindi_english.load_corpus(seed=config.seed, max_train=config.max_train)
    print(f"{name}: profile {current_profile()}, {len(parts['train'])} training pairs, "
          f"{len(parts['test'])} test pairs, config {config}", flush=True)
    translator, seconds = task.train(config, parts["train"], parts["valid"], out_dir=out_dir)
    start = time.perf_counter()
    greedy = task.evaluate(translator, parts["test"])
    beam = task.evaluate(translator, parts["test"], beam_width=args.beam, with_alignment=False)
    by_length = task.bleu_by_length(translator, parts["test"])
    summary = {
        "name": name,
        "profile": current_profile(),
        "train_seconds_this_run": seconds,
        "epochs": translator.epochs_done,
        "greedy": greedy,
        f"beam{args.beam}": beam,
        "bleu_by_source_length": by_length,
        "eval_seconds": time.perf_counter() - start,
        "example": translator.translate(["I am going home" if args.direction == "en-hi" else "मैं घर जा रहा हूँ"]),
    }
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    print(json.dumps(summary, indent=1, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
