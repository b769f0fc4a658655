"""`course-lib train transliteration`, `evaluate transliteration` and `transliterate`."""

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from course_lib.tasks.arguments import (
    GENERATED, IMAGE_SUFFIXES, check_draws_attention, check_run_of, check_generated_test_fits, check_resume_keeps,
    check_same_training_data, check_file_outside_runs, claim_run_folder, non_negative_float, output_file,
    output_folder, plural, positive_float, positive_int, random_seed, warn_if_training_file,
)
from course_lib.tasks.run_files import write_json_file, write_output_file
from course_lib.tasks.transliteration.config import DIRECTIONS, TransliterationConfig
from course_lib.tasks.transliteration.data import generated_splits, load_pairs
from course_lib.tasks.transliteration.decoding import evaluate, heatmap_examples, transliterate_words
from course_lib.tasks.transliteration.reranking import (
    RERANK_WEIGHT_LIMIT, check_reranker_fits, equal_votes_weight, load_reranker,
)
from course_lib.tasks.transliteration.runs import (
    MODEL_FILE, config_from_state, kind_name, load_ensemble, load_run, model_seed_of, read_state,
    saved_kind, train,
)


def rerank_weight(text):
    """An `argparse` type for `--rerank-weight`: a number from 0 to `RERANK_WEIGHT_LIMIT`.

    Far larger weights overflowed: `--rerank-weight 1e308` made every score -inf.
    """
    value = non_negative_float(text)
    if value > RERANK_WEIGHT_LIMIT:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to {RERANK_WEIGHT_LIMIT:,.0f} (beyond it the "
                                         f"reranker decides alone already), received {text!r}")
    return value


def _resumed_config(args, state):
    """The config of the run being resumed, with the flags given on this command line applied.

    The run's saved config, not the profile, says what the model and its data
    are: sizes, attention, learning rate, batch size and seeds, and the
    generated word set (`train_words`, `valid_words`, `test_words`, `seed`).
    Flags that would change them are refused; `--epochs` (the total to train
    up to) is applied. The kind of model (`direction`, `right_to_left`) is
    the run's too: left out, it is kept; `--direction` or `--right-to-left`
    naming another kind is refused by `train`.
    """
    config = config_from_state(state)
    check_resume_keeps(args.out, dataclasses.asdict(config), {
        "units": args.units, "embedding_dim": args.embedding_dim, "learning_rate": args.learning_rate,
        "attention": False if args.no_attention else None, "batch_size": args.batch_size,
    })
    if args.model_seed is not None and args.model_seed != model_seed_of(config):
        raise ValueError(
            f"{str(args.out)!r} holds a run whose initial weights and batch order came from seed "
            f"{model_seed_of(config)}; resuming it keeps them (leave --model-seed out, or choose another --out). "
            f"Received: --model-seed {args.model_seed}"
        )
    if args.epochs is not None:
        config.epochs = args.epochs
    config.direction = args.direction or config.direction
    config.right_to_left = bool(args.right_to_left) or config.right_to_left
    return config


def _train_command(args):
    claim_run_folder(args.out, "transliteration")
    state = read_state(args.out)
    # Only a saved model is resumed: without one, a left-over progress file binds neither flags nor data.
    resuming = (Path(args.out) / MODEL_FILE).exists() and "config" in state
    if resuming:
        config = _resumed_config(args, state)
        if state.get("train_file") is not None:  # runs started from Python may not say (every CLI checkpoint does)
            check_same_training_data(args.out, state["train_file"], args.train)
    else:
        config = TransliterationConfig.for_profile(
            epochs=args.epochs, batch_size=args.batch_size, units=args.units,
            embedding_dim=args.embedding_dim, learning_rate=args.learning_rate, model_seed=args.model_seed,
            direction=args.direction, right_to_left=args.right_to_left or None,
            drop_vowel_length=args.drop_vowel_length,
        )
        if args.no_attention:
            config.attention = False
    if args.train:
        if args.drop_vowel_length is not None:
            raise ValueError(
                "`--drop-vowel-length` changes the generated words only; a file's roman words are used as "
                f"they are. Received: --train {args.train!r} --drop-vowel-length {args.drop_vowel_length}"
            )
        warn_if_training_file(args.train, args.valid, "--valid", "the validation figures measure memorisation, "
                                                                 "not how the model does on words it has not seen")
        train_pairs = load_pairs(args.train)
        valid_pairs = load_pairs(args.valid) if args.valid else None
        source_name = args.train
    else:
        if args.valid:
            raise ValueError("`--valid` needs `--train` (the generated set has its own validation part).")
        if resuming and args.drop_vowel_length not in (None, config.drop_vowel_length):
            raise ValueError(  # the resumed config keeps training on the same typed words
                f"{str(args.out)!r} was trained with --drop-vowel-length {config.drop_vowel_length}; resuming it "
                f"needs the same words. Received: --drop-vowel-length {args.drop_vowel_length}"
            )
        train_pairs, valid_pairs, _ = generated_splits(config)
        source_name = "generated word set"
    if resuming and state.get("epochs_done", 0) >= config.epochs:
        # As `train translation` does: a smaller --epochs used to re-save the folder with a config of fewer
        # epochs than it was trained for.
        print(f"Already trained for {plural(state['epochs_done'], 'epoch')} (asked {config.epochs}); nothing to do. "
              f"{args.out!r} is unchanged.", flush=True)
        return 0
    if resuming:
        data = "" if args.train else (f", {config.train_words}/{config.valid_words}/{config.test_words} "
                                      f"train/valid/test words (seed {config.seed})")
        print(f"Resuming with the run's saved settings: units={config.units}, embedding_dim={config.embedding_dim}, "
              f"attention={config.attention}, batch_size={config.batch_size}{data}.", flush=True)
    print(f"Training on {len(train_pairs)} pairs from {source_name}; "
          f"{plural(config.epochs, 'epoch')}, checkpoints in {args.out!r}.", flush=True)
    verbose = 1 if sys.stdout.isatty() else 2
    # Every checkpoint records the data source (train_file), from the first epoch on: an interrupted run is
    # checked on resuming, and `evaluate` knows not to score a file-trained model on the generated words.
    result = train(config, train_pairs, valid_pairs, out_dir=args.out, verbose=verbose,
                   train_file=args.train or GENERATED)
    print(f"Trained {plural(result['epochs_done'], 'epoch')} in total ({result['seconds']:.0f} s this run); "
          f"saved to {args.out!r}.", flush=True)
    if valid_pairs:
        metrics = evaluate(result["model"], result["source_vocab"], result["target_vocab"], valid_pairs,
                           beam_width=1, direction=config.direction, right_to_left=config.right_to_left)
        print(f"validation (greedy): word_accuracy={metrics['word_accuracy']:.4f} cer={metrics['cer']:.4f}")
    return 0


def _evaluate_command(args):
    if args.rerank_weight is not None and not args.rerank_with:
        raise ValueError("--rerank-weight weighs the models of --rerank-with, which were not given. "
                         f"Received: --rerank-weight {args.rerank_weight}")
    # `transliterate_words` refuses this too (check_greedy_length_penalty); here, in the flags' words, before any
    # model is loaded: greedy decoding has no hypotheses to rank, and the penalty used to be ignored.
    if args.length_penalty != 1.0 and args.beam < 2:
        raise ValueError("--length-penalty ranks the hypotheses of beam search; greedy decoding would ignore it. "
                         f"Use --beam 2 or more. Received: --length-penalty {args.length_penalty} --beam {args.beam}")
    if args.metrics_json:
        check_file_outside_runs(args.metrics_json, "--metrics-json", *args.model, *(args.rerank_with or []))
    for flag, folders in (("--model", args.model), ("--rerank-with", args.rerank_with or [])):
        for folder in folders:  # every folder's task before any model is loaded, in the words of its flag
            check_run_of(folder, "transliteration", flag)
    model, source_vocab, target_vocab, state = load_ensemble(args.model)
    if args.test:
        pairs = load_pairs(args.test)
    else:
        check_generated_test_fits(state.get("train_file", GENERATED), "the generated test words")
        _, _, pairs = generated_splits(config_from_state(state))
    reranker, rerank_weight = None, args.rerank_weight
    if args.rerank_with:
        if args.beam < 2:
            raise ValueError(f"Reranking needs beam candidates: use --beam 2 or more. Received: --beam {args.beam}")
        reranker = load_reranker(args.rerank_with, "--rerank-with")
        check_reranker_fits(reranker, source_vocab, target_vocab, saved_kind(state)[0],
                            f"--model {str(args.model[0])!r}", f"--rerank-with {str(args.rerank_with[0])!r}")
        if rerank_weight is None:
            rerank_weight = equal_votes_weight(model, reranker)
    for folder in [*args.model, *(args.rerank_with or [])] if args.test else []:  # one trained on the test file
        warn_if_training_file(read_state(folder).get("train_file"), args.test, "--test",
                              f"the figures measure memorisation by {str(folder)!r}, not how the model does on words "
                              "it has not seen")
    direction, right_to_left = saved_kind(state)
    metrics = evaluate(model, source_vocab, target_vocab, pairs, beam_width=args.beam,
                       length_penalty=args.length_penalty, direction=direction, right_to_left=right_to_left,
                       reranker=reranker, rerank_weight=rerank_weight)
    summary = {k: metrics[k] for k in ("word_accuracy", "top_k_accuracy", "cer", "words", "beam_width",
                                       "length_penalty", "seconds") if k in metrics}  # length_penalty: beam only
    summary["test_file"] = args.test or "generated test set"
    summary["models"] = list(args.model)
    if args.rerank_with:
        summary.update(reranked_with=args.rerank_with, reranker_kind=reranker.kind, rerank_weight=rerank_weight)
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    if args.metrics_json:
        write_json_file(args.metrics_json, summary, indent=1, ensure_ascii=False)
    return 0


def _transliterate_command(args):
    if args.heatmap:  # before the model is loaded: another run's files are never replaced
        check_file_outside_runs(args.heatmap, "--heatmap", args.model)
    model, source_vocab, target_vocab, state = load_run(args.model)
    if args.heatmap:  # `heatmap_examples` refuses a plain model too; here before anything is decoded
        check_draws_attention(model.attention,
                              f"{str(args.model)!r} holds a plain encoder-decoder (trained with --no-attention)",
                              "leave out --heatmap", f"--heatmap {str(args.heatmap)!r}")
    words = list(args.words)
    empty = [index for index, word in enumerate(words) if not word.strip()]
    if empty:  # dropped quietly, the output would have fewer lines than the input
        raise ValueError(f"Every word must hold a letter; words {empty} (counting from 0) are empty or white space. "
                         f"Received: {args.words!r}")
    unknown = {word: sorted({letter for letter in source_vocab.tokenize([word])[0] if letter not in source_vocab.index})
               for word in words}  # letters outside the model's alphabet (another script, digits...)
    unknown = {word: letters for word, letters in unknown.items() if letters}
    if unknown:
        raise ValueError(
            f"These words hold letters that this {kind_name(*saved_kind(state))} model never saw in training; it "
            "would read them as <unk> and guess. Received: "
            + ", ".join(f"{word!r} with {''.join(letters)!r}" for word, letters in unknown.items())
        )
    decoded = transliterate_words(model, source_vocab, target_vocab, words, beam_width=args.beam,
                                  right_to_left=saved_kind(state)[1])
    for word, prediction in zip(words, decoded["predictions"]):
        print(f"{word}\t{prediction}")
    if args.heatmap:
        import matplotlib

        matplotlib.use("Agg")
        from course_lib.plots.grid import attention_grid

        figure = attention_grid(heatmap_examples(words, decoded, target_vocab, count=len(words)))
        write_output_file(args.heatmap, lambda path: figure.savefig(path, dpi=120))
        print(f"heat maps saved to {args.heatmap!r}")
    return 0


def register_cli(commands):
    train_parser = commands.train.add_parser(
        "transliteration", help="character-level Roman -> Devanagari model (resumable)"
    )
    train_parser.add_argument("--train", help="Aksharantar .csv or Dakshina .tsv (default: generated words)")
    train_parser.add_argument("--valid", help="validation file in the same format")
    train_parser.add_argument("--epochs", type=positive_int, help="total epochs (a resumed run continues up to this)")
    train_parser.add_argument("--batch-size", type=positive_int)
    train_parser.add_argument("--units", type=positive_int)
    train_parser.add_argument("--embedding-dim", type=positive_int)
    train_parser.add_argument("--learning-rate", type=positive_float)
    train_parser.add_argument("--no-attention", action="store_true", help="plain decoder, for comparison")
    train_parser.add_argument("--model-seed", type=random_seed,
                              help="seed of the initial weights and batch order (train ensemble members with different ones)")
    train_parser.add_argument("--direction", choices=DIRECTIONS,
                              help="native-roman trains the reverse model used by `evaluate --rerank-with`")
    train_parser.add_argument("--right-to-left", action="store_true",
                              help="write each word from its last letter (a reranker for `evaluate --rerank-with`)")
    train_parser.add_argument("--drop-vowel-length", type=float, metavar="P",
                              help="generated words only: type each long vowel short with probability P "
                                   "(aa -> a), so one typed word can stand for several Hindi words")
    train_parser.add_argument("--out", required=True, type=output_folder, help="folder for the model, vocabularies and progress")
    train_parser.set_defaults(handler=_train_command)

    evaluate_parser = commands.evaluate.add_parser("transliteration", help="word accuracy, top-k and CER")
    evaluate_parser.add_argument("--model", required=True, action="append",
                                 help="folder written by `train transliteration`; repeat it to decode with an ensemble")
    evaluate_parser.add_argument("--test", help="test file (.csv or .tsv; default: the generated test set)")
    evaluate_parser.add_argument("--beam", type=positive_int, default=1, help="beam width (1 = greedy)")
    evaluate_parser.add_argument("--length-penalty", type=non_negative_float, default=1.0,
                                 help="with --beam 2 or more: beam scores are log P / length ** this "
                                      "(0: raw log-probability; default 1, the mean per token)")
    evaluate_parser.add_argument("--rerank-with", metavar="DIR", action="append",
                                 help="a native-roman or right-to-left model (train --direction native-roman / "
                                      "--right-to-left) that reranks the beam; repeat it to average several")
    evaluate_parser.add_argument("--rerank-weight", type=rerank_weight,
                                 help="weight of the rerankers' mean length-normalised log-probability, at most "
                                      f"{RERANK_WEIGHT_LIMIT:,.0f} (default: number of --rerank-with / number of "
                                      "--model, one member's vote each)")
    evaluate_parser.add_argument("--metrics-json", type=output_file(".json"),
                                 help="write the metrics to this .json file (not inside a run folder; an existing "
                                      "file is replaced, and the command says so)")
    evaluate_parser.set_defaults(handler=_evaluate_command)

    words_parser = commands.root.add_parser("transliterate", help="transliterate roman words")
    words_parser.add_argument("--model", required=True)
    words_parser.add_argument("--beam", type=positive_int, default=1)
    words_parser.add_argument("--heatmap", type=output_file(*IMAGE_SUFFIXES),
                              help=f"save attention heat maps of the words to this image ({', '.join(IMAGE_SUFFIXES)}; not "
                                   "inside a run folder; an existing file is replaced, and the command says so)")
    words_parser.add_argument("words", nargs="+")
    words_parser.set_defaults(handler=_transliterate_command)
