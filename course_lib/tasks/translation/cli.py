"""The `train translation`, `evaluate translation`, `translate` and `split-translation` commands."""

import sys
import warnings
from pathlib import Path

from course_lib.data import hindi_english
from course_lib.tasks.arguments import (
    GENERATED, IMAGE_SUFFIXES, check_draws_attention, check_generated_test_fits, check_resume_keeps,
    check_same_training_data, check_file_outside_runs, claim_run_folder, non_negative_float, output_file,
    output_folder, plural, positive_float, positive_int, random_seed, warn_if_training_file,
)
from course_lib.tasks.run_files import read_json_object, write_json_file, write_output_file
from course_lib.tasks.translation.config import TranslationConfig, check_supervision
from course_lib.tasks.translation.data import check_gold_alignments
from course_lib.tasks.translation.evaluation import evaluate, heatmap, unknown_source_share
from course_lib.tasks.translation.training import RESUMED_DATA_SETTINGS, check_same_data, train
from course_lib.tasks.translation.translator import Translator, has_checkpoint, read_state
from course_lib.text.coverage import UNLIKE_DATA_SHARE, is_word, unknown_tokens
from course_lib.training.profiles import current_profile

TRAIN_DATA_FILE = "train_data.json"  # written by the CLI: which data a run was trained on


def _read_pairs(path):
    from course_lib.data.tatoeba import load_tatoeba

    return load_tatoeba(path)


SPLIT_FILES = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}


def _split_command(args):
    from course_lib.data.tatoeba import write_tatoeba

    out = Path(args.out)
    # A run folder (its marker says so) is refused as other outputs refuse it: the parts would sit among its
    # files, and a translation run's folder would pass for a data folder.
    check_file_outside_runs(out / SPLIT_FILES["train"], "--out", received=args.out)
    taken = [name for name in SPLIT_FILES.values() if (out / name).exists()]
    if taken:
        raise ValueError(f"{str(out)!r} already holds {', '.join(taken)}; choose another --out. Received: --out {str(out)!r}")
    parts = hindi_english.split_corpus(_read_pairs(args.file), seed=args.seed)
    out.mkdir(parents=True, exist_ok=True)
    for part, name in SPLIT_FILES.items():
        write_tatoeba(parts[part], out / name)
    print(f"{len(parts['train'])} / {len(parts['valid'])} / {len(parts['test'])} pairs -> "
          f"{', '.join(str(out / name) for name in SPLIT_FILES.values())}")
    return 0


def _train_command(args):
    config = TranslationConfig.for_profile(
        direction=args.direction, epochs=args.epochs, seed=args.seed, max_train=args.max_train,
        units=args.units, embedding_dim=args.embedding_dim, batch_size=args.batch_size,
        learning_rate=args.learning_rate, alignment_loss_weight=args.alignment_loss_weight,
        supervised_pairs=args.supervised_pairs,
    )
    if args.no_attention:
        config.attention = False
    config.check()  # before the folder is claimed and train_data.json written: a refused run leaves nothing
    claim_run_folder(args.out, "translation")
    if args.train:
        warn_if_training_file(args.train, args.valid, "--valid", "the validation figures measure how well it learns "
                                                                 "its training pairs, not how it does on new ones")
        train_pairs = _read_pairs(args.train)
        valid_pairs = _read_pairs(args.valid) if args.valid else None
    else:
        if args.valid:
            raise ValueError("--valid needs --train (the generated corpus brings its own validation part).")
        train_pairs = valid_pairs = None
    resuming = has_checkpoint(args.out)
    saved_config = read_state(args.out)["config"] if resuming else {}
    if resuming:
        check_resume_keeps(args.out, saved_config, {
            "units": args.units, "embedding_dim": args.embedding_dim, "learning_rate": args.learning_rate,
            "attention": False if args.no_attention else None, "alignment_loss_weight": args.alignment_loss_weight,
        })
        for name in RESUMED_DATA_SETTINGS:  # left out on this command line: the run's own, not the profile's
            if getattr(args, name) is None and name in saved_config:
                setattr(config, name, saved_config[name])
        check_same_data(args.out, TranslationConfig(**saved_config), config)  # given with other values: refused
    alignment_loss_weight = saved_config.get("alignment_loss_weight", 0.0) if resuming else config.alignment_loss_weight
    check_supervision(config.supervised_pairs, alignment_loss_weight)  # the model's weight: a resumed run keeps its own
    if alignment_loss_weight and train_pairs is not None:  # here, not in `train`: train_data.json is not written yet
        check_gold_alignments(train_pairs)
    source_path = Path(args.out) / TRAIN_DATA_FILE
    record = {"train_file": args.train or GENERATED}
    if source_path.exists() and resuming:
        check_same_training_data(args.out, read_json_object(source_path).get("train_file"), args.train)
    elif not resuming:  # the folder was made by claim_run_folder
        write_json_file(source_path, record)  # whole or not at all
    print(f"Training translation {config.direction} (profile {current_profile()}), "
          f"{plural(config.epochs, 'epoch')} -> {args.out}")
    translator, seconds = train(config, train_pairs, valid_pairs, out_dir=args.out)
    if not source_path.exists():  # a run started from Python, resumed here: recorded once `train` accepted it
        write_json_file(source_path, record)  # whole or not at all
    print(f"Trained for {seconds:.1f} s; model in {args.out}")
    if valid_pairs is None and not args.train:
        valid_pairs = hindi_english.load_corpus(seed=config.seed)["valid"]
    if valid_pairs:
        metrics = evaluate(translator, valid_pairs)
        print(f"validation: BLEU {metrics['bleu']:.2f}  chrF {metrics['chrf']:.2f}")
    return 0


def _evaluate_command(args):
    if args.metrics_json:
        check_file_outside_runs(args.metrics_json, "--metrics-json", args.model)
    translator = Translator.load(args.model)
    record = Path(args.model) / TRAIN_DATA_FILE
    trained_on = read_json_object(record).get("train_file") if record.exists() else GENERATED  # damaged: named
    if args.test:
        warn_if_training_file(trained_on, args.test, "--test")
        pairs = _read_pairs(args.test)
        unknown = unknown_source_share(translator, pairs)
        if unknown > UNLIKE_DATA_SHARE:
            warnings.warn(f"{unknown:.1%} of the test sources' words are not in the model's vocabulary (each reaches "
                          "it as <unk>): the figures measure it on data unlike its training data.")
    else:
        check_generated_test_fits(trained_on, "the generated test part")
        pairs = hindi_english.load_corpus(seed=translator.config.seed)["test"]
    metrics = evaluate(translator, pairs, beam_width=args.beam)
    for key, digits in (("bleu", 2), ("chrf", 2), ("exact_match", 4), ("alignment_agreement", 4)):
        if key in metrics:
            print(f"{key}: {metrics[key]:.{digits}f}")
    if args.metrics_json:
        write_json_file(args.metrics_json, metrics, indent=1)
    return 0


def _check_known_words(translator, texts):
    """Refuses the command when a text has no word the model knows (naming every such text; the translations
    are printed one line per text, so none is left out quietly); names the unknown words of the others (on stderr).

    Every unknown word reaches the model as `<unk>`, so gibberish, or Hindi given
    to an English-to-Hindi model, used to get a fluent, confident sentence that
    had nothing to do with the input. Punctuation the model knows does not count
    as a known word.
    """
    vocab = translator.source_vocab
    blind, notes = [], []
    for text, tokens in zip(texts, vocab.tokenize(texts)):
        words = [token for token in tokens if is_word(token)]
        unknown = unknown_tokens(vocab, tokens)
        if words and set(words) <= set(unknown):
            blind.append(text)
        elif unknown:
            notes.append(f"note: {', '.join(map(repr, dict.fromkeys(unknown)))} not in the model's vocabulary "
                         f"(read as <unk>) in {text!r}")
    if blind:
        raise ValueError(f"Nothing to translate: no word of these texts is in the model's {translator.direction} "
                         "source vocabulary (another language, or words it never saw in training). "
                         f"Received: {blind!r}")
    for note in notes:
        print(note, file=sys.stderr)


def _translate_command(args):
    if args.heatmap:  # before the model is loaded: another run's files are never replaced
        check_file_outside_runs(args.heatmap, "--heatmap", args.model)
    translator = Translator.load(args.model)
    if args.heatmap:  # `heatmap` refuses a plain model too; here before anything is translated
        check_draws_attention(translator.model.attention,
                              f"{str(args.model)!r} holds a plain encoder-decoder (trained with --no-attention)",
                              "leave out --heatmap", f"--heatmap {str(args.heatmap)!r}")
    texts = args.text
    if not texts or not any(t.strip() for t in texts):
        raise ValueError("Nothing to translate: give the text as an argument, e.g. \"I am going home\".")
    _check_known_words(translator, texts)
    for output in translator.translate(texts, beam_width=args.beam):
        print(output)
    if args.heatmap:
        import matplotlib

        matplotlib.use("Agg")
        write_output_file(args.heatmap, lambda path: heatmap(translator, texts[0], path=path, beam_width=args.beam))
        print(f"heat map saved to {args.heatmap}")
    return 0


def register_cli(commands):
    parser = commands.train.add_parser(
        "translation", help="train an English<->Hindi translator (generated corpus unless --train)")
    parser.add_argument("--train", help="Tatoeba/Anki file (English<TAB>Hindi<TAB>attribution), path or URL")
    parser.add_argument("--valid", help="validation file in the same format")
    parser.add_argument("--direction", choices=hindi_english.DIRECTIONS, default="en-hi")
    parser.add_argument("--epochs", type=positive_int, default=None, help="total epochs (default: 3 on all 14,562 pairs; fast profile 4 on 3,000)")
    parser.add_argument("--max-train", type=positive_int, default=None, help="use at most this many training pairs")
    parser.add_argument("--units", type=positive_int, default=None)
    parser.add_argument("--embedding-dim", type=positive_int, default=None)
    parser.add_argument("--batch-size", type=positive_int, default=None)
    parser.add_argument("--learning-rate", type=positive_float, default=None, help="Adam step size (default 5e-3)")
    parser.add_argument("--no-attention", action="store_true", help="plain encoder-decoder (no attention)")
    parser.add_argument("--alignment-loss-weight", type=non_negative_float, default=None,
                        help="supervise attention with the generated corpus's gold alignment (squared error, this weight)")
    parser.add_argument("--supervised-pairs", type=positive_int, default=None,
                        help="with --alignment-loss-weight: only the first N training pairs carry the alignment")
    parser.add_argument("--seed", type=random_seed, default=None,
                        help="seed of the generated corpus's split, the initial weights and the batch order "
                             "(default 0; a resumed run keeps its own)")
    parser.add_argument("--out", required=True, type=output_folder, help="model folder (resumes when it holds a checkpoint)")
    parser.set_defaults(handler=_train_command)

    parser = commands.root.add_parser(
        "split-translation", help="split a Tatoeba/Anki file into train.txt, valid.txt and test.txt",
        description="Splits the pairs by English sentence (split_corpus: no English or Hindi sentence in two parts), "
                    "80 / 10 / 10 %, and writes them in the file's own format.")
    parser.add_argument("file", help="Tatoeba/Anki file (English<TAB>Hindi<TAB>attribution), path, zip or URL")
    parser.add_argument("--out", required=True, type=output_folder, help="folder for train.txt, valid.txt and test.txt")
    parser.add_argument("--seed", type=random_seed, default=0, help="shuffling seed (the docs' figures use 0)")
    parser.set_defaults(handler=_split_command)

    parser = commands.evaluate.add_parser("translation", help="BLEU/chrF of a trained translator")
    parser.add_argument("--model", required=True, help="folder written by `course-lib train translation`")
    parser.add_argument("--test", help="Tatoeba-format test file (default: the generated corpus's test part)")
    parser.add_argument("--beam", type=positive_int, default=1, help="beam width (1 = greedy)")
    parser.add_argument("--metrics-json", type=output_file(".json"),
                        help="write the metrics (bleu, chrf, ...) to this .json file (not inside a run folder; "
                             "an existing file is replaced, and the command says so)")
    parser.set_defaults(handler=_evaluate_command)

    parser = commands.root.add_parser("translate", help="translate text with a trained model")
    parser.add_argument("--model", required=True)
    parser.add_argument("--beam", type=positive_int, default=1)
    parser.add_argument("--heatmap", type=output_file(*IMAGE_SUFFIXES),
                        help=f"save the attention heat map of the first text to this image ({', '.join(IMAGE_SUFFIXES)}; "
                             "not inside a run folder; an existing file is replaced, and the command says so)")
    parser.add_argument("text", nargs="+", help="sentences to translate (one argument each)")
    parser.set_defaults(handler=_translate_command)
