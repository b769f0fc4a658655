"""Hindi–English translation with a bidirectional GRU encoder and attention.

The lecture's model (Bahdanau et al.): a bidirectional GRU encoder whose two
final states are bridged into `s_0`, an attentional GRU decoder whose output
layer reads `[s_t; c_t; e(y_{t-1})]`, padding masked throughout. Word-level
vocabularies; English is lower-cased, punctuation split on both sides.

Data: the generated corpus of `course_lib.data.hindi_english` by default, or
Tatoeba/Anki files (`English<TAB>Hindi<TAB>attribution`). Both directions,
`en-hi` and `hi-en`, use the same code.

A trained model lives in a folder:

    model.keras          the Seq2Seq model (with its optimizer state)
    source_vocab.json    the source vocabulary and its text settings
    target_vocab.json
    state.json           direction, configuration, epochs done, history

Training writes the folder after every epoch and, when started again on a
folder that holds one, resumes from its last epoch.
"""

import dataclasses
import json
import os
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.data import hindi_english
from course_lib.tasks.arguments import (
    GENERATED, IMAGE_SUFFIXES, check_generated_test_fits, check_resume_keeps, check_same_training_data,
    claim_run_folder, non_negative_float, output_file, output_folder, positive_float, positive_int,
)
from course_lib.text.vocabulary import STOP, Vocabulary
from course_lib.training.profiles import current_profile, pick

TRAIN_DATA_FILE = "train_data.json"  # written by the CLI: which data a run was trained on
MODEL_FILE, SOURCE_VOCAB, TARGET_VOCAB, STATE_FILE = (
    "model.keras", "source_vocab.json", "target_vocab.json", "state.json",
)
LANGUAGE_SETTINGS = {  # Vocabulary keyword arguments per language
    "en": {"level": "word", "lowercase": True, "split_punctuation": True},
    "hi": {"level": "word", "lowercase": False, "split_punctuation": True},
}


@dataclasses.dataclass
class TranslationConfig:
    """Model size and training budget; `for_profile` picks fast or full values."""

    direction: str = "en-hi"
    embedding_dim: int = 64
    units: int = 128
    attention_units: int = 128
    attention: bool = True
    batch_size: int = 64
    epochs: int = 3
    learning_rate: float = 5e-3
    max_train: int = None  # cap on training pairs (None: all)
    max_output_length: int = 24
    seed: int = 0
    steps_per_execution: int = 25
    conditional: bool = False
    alignment_loss_weight: float = 0.0  # > 0: supervise attention with the gold alignment
    supervised_pairs: int = None  # with supervision: only the first N training pairs carry it (None: all)

    @classmethod
    def for_profile(cls, profile=None, **overrides):
        base = cls(
            embedding_dim=pick(fast=32, full=64, profile=profile),
            units=pick(fast=64, full=128, profile=profile),
            attention_units=pick(fast=64, full=128, profile=profile),
            epochs=pick(fast=4, full=3, profile=profile),
            max_train=pick(fast=3000, full=None, profile=profile),
        )
        for key, value in overrides.items():
            if value is not None:
                setattr(base, key, value)
        hindi_english.check_direction(base.direction)
        return base


# -- data ------------------------------------------------------------------------------


def languages(direction):
    hindi_english.check_direction(direction)
    return direction.split("-")


def source_target_texts(pairs, direction):
    """(sources, targets) string lists from pairs with `.english` and `.hindi`."""
    source_language, _ = languages(direction)
    if source_language == "en":
        return [p.english for p in pairs], [p.hindi for p in pairs]
    return [p.hindi for p in pairs], [p.english for p in pairs]


def build_vocabularies(pairs, direction, max_size=None):
    sources, targets = source_target_texts(pairs, direction)
    source_language, target_language = languages(direction)
    return (
        Vocabulary.from_texts(sources, max_size=max_size, **LANGUAGE_SETTINGS[source_language]),
        Vocabulary.from_texts(targets, max_size=max_size, **LANGUAGE_SETTINGS[target_language]),
    )


def encode_pairs(pairs, direction, source_vocab, target_vocab):
    """`({"source", "target_in"}, target_out)` int32 arrays."""
    sources, targets = source_target_texts(pairs, direction)
    source = source_vocab.encode(sources)
    target = target_vocab.encode(targets, add_go=True, add_stop=True)
    target_in, target_out = target[:, :-1].copy(), target[:, 1:].copy()
    target_in[target_in == STOP] = 0  # <stop> is never an input
    return {"source": source, "target_in": target_in}, target_out


def oracle_alignments(pairs, direction, inputs):
    """The oracle attention weights of encoded pairs, `(batch, tgt_len, src_len)`,
    for supervised attention; only pairs with a gold alignment qualify."""
    from course_lib.losses import oracle_weights

    missing = [index for index, pair in enumerate(pairs) if not hasattr(pair, "gold_links")]
    if missing:
        raise ValueError(
            "Supervised attention needs a gold word alignment for every pair (the generated corpus has "
            f"one; Tatoeba does not). Received: {len(missing)} of {len(pairs)} pairs without one, "
            f"first at index {missing[0]}"
        )
    links = [pair.gold_links(direction) for pair in pairs]
    return oracle_weights(links, inputs["target_in"].shape[1], inputs["source"].shape[1])


# -- the model and the translator --------------------------------------------------------


def build_model(config, source_vocab_size, target_vocab_size):
    import keras

    from course_lib.models.seq2seq import Seq2Seq

    keras.utils.set_random_seed(config.seed)
    model = Seq2Seq(
        source_vocab_size, target_vocab_size,
        embedding_dim=config.embedding_dim, units=config.units, attention=config.attention,
        bidirectional=True, deep_output=config.attention, attention_units=config.attention_units,
        max_output_length=config.max_output_length,
        conditional=config.conditional and config.attention,
        alignment_loss_weight=config.alignment_loss_weight if config.attention else 0.0,
    )
    model.build()
    model.compile(keras.optimizers.Adam(config.learning_rate, clipnorm=1.0),
                  steps_per_execution=config.steps_per_execution, jit_compile=training_jit_compile())
    return model


class Translator:
    """A trained model with its vocabularies: strings in, strings out."""

    def __init__(self, model, source_vocab, target_vocab, config, epochs_done=0, history=None):
        self.model = model
        self.source_vocab = source_vocab
        self.target_vocab = target_vocab
        self.config = config
        self.epochs_done = epochs_done
        self.history = history or []

    @property
    def direction(self):
        return self.config.direction

    def encode_sources(self, texts):
        return self.source_vocab.encode(texts)  # ValueError on empty text

    def translate(self, texts, beam_width=1, return_details=False):
        """Translates a list of strings (batched); returns a list of strings.

        With `return_details=True` returns `(translations, details)` where
        `details` holds the source/output tokens and attention per sentence.
        """
        source = self.encode_sources(texts)
        outputs = []
        details = []
        for start in range(0, len(source), 256):  # bounded memory on large test sets
            chunk = source[start: start + 256]
            result = self.model.generate(chunk, beam_width=beam_width)
            for row, tokens in enumerate(result["tokens"]):
                output_tokens = self.target_vocab.decode_tokens(tokens)
                outputs.append(self.target_vocab.separator.join(output_tokens))
                if return_details:
                    source_length = int((chunk[row] != 0).sum())
                    source_tokens = [self.source_vocab.tokens[i] for i in chunk[row][:source_length]]
                    labels = output_tokens + (["<stop>"] if STOP in tokens.tolist() else [])
                    details.append({
                        "source_tokens": source_tokens,
                        "output_tokens": labels,
                        "attention": result["alignments"][row][: len(labels), :source_length],
                    })
        return (outputs, details) if return_details else outputs

    def teacher_forced_alignments(self, pairs):
        """Attention `(batch, tgt_len, src_len)` while reading the gold targets."""
        inputs, _ = encode_pairs(pairs, self.direction, self.source_vocab, self.target_vocab)
        return np.asarray(self.model.alignments(inputs["source"], inputs["target_in"]))

    # -- saving ---------------------------------------------------------------

    def save(self, directory):
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        temporary = directory / (MODEL_FILE + ".tmp.keras")
        self.model.save(temporary)
        os.replace(temporary, directory / MODEL_FILE)  # never leave a half-written model
        self.source_vocab.save(directory / SOURCE_VOCAB)
        self.target_vocab.save(directory / TARGET_VOCAB)
        state = {
            "task": "translation",
            "config": dataclasses.asdict(self.config),
            "epochs_done": self.epochs_done,
            "history": self.history,
        }
        (directory / (STATE_FILE + ".tmp")).write_text(json.dumps(state, indent=1))
        os.replace(directory / (STATE_FILE + ".tmp"), directory / STATE_FILE)

    @classmethod
    def load(cls, directory):
        import keras

        directory = Path(directory)
        missing = [name for name in (MODEL_FILE, SOURCE_VOCAB, TARGET_VOCAB, STATE_FILE)
                   if not (directory / name).exists()]
        if missing:
            raise FileNotFoundError(f"{os.fspath(directory)!r} holds no trained translation model (missing {missing}).")
        state = json.loads((directory / STATE_FILE).read_text())
        if state.get("task") != "translation":
            raise ValueError(f"{os.fspath(directory)!r} holds a model for task {state.get('task')!r}, not translation.")
        import course_lib.models.seq2seq  # noqa: F401  (registers the classes)

        model = keras.models.load_model(directory / MODEL_FILE)
        return cls(model, Vocabulary.load(directory / SOURCE_VOCAB), Vocabulary.load(directory / TARGET_VOCAB),
                   TranslationConfig(**state["config"]), state["epochs_done"], state.get("history"))


def has_checkpoint(directory):
    return directory is not None and (Path(directory) / STATE_FILE).exists()


# -- training ---------------------------------------------------------------------------


def _checkpoint_callback(translator, out_dir):
    import keras

    class EpochCheckpoint(keras.callbacks.Callback):
        """Saves the whole translator after every epoch (resume point)."""

        def on_epoch_end(self, epoch, logs=None):
            translator.epochs_done = epoch + 1
            translator.history.append({k: float(v) for k, v in (logs or {}).items()} | {"epoch": epoch + 1})
            if out_dir is not None:
                translator.save(out_dir)

    return EpochCheckpoint()


def train(config, train_pairs=None, valid_pairs=None, out_dir=None, verbose=2):
    """Trains (or resumes) a translator.

    Args:
        config: a `TranslationConfig` (`epochs` is the total to reach).
        train_pairs, valid_pairs: objects with `.english`/`.hindi`; default the
            generated corpus split with `config.seed`.
        out_dir: folder written after every epoch; when it already holds a
            checkpoint, training resumes from its last epoch (the saved model,
            optimizer state and vocabularies win over `config`'s sizes).

    Returns:
        `(translator, seconds)`.
    """
    from course_lib.data.tf_data import array_dataset
    from course_lib.training.fit import build_before_fit

    if train_pairs is None:
        parts = hindi_english.load_corpus(seed=config.seed, max_train=config.max_train)
        train_pairs = parts["train"]
        if valid_pairs is None:
            valid_pairs = parts["valid"]
    elif config.max_train is not None:
        train_pairs = list(train_pairs)[: config.max_train]
    if not train_pairs:
        raise ValueError("No training pairs.")
    if has_checkpoint(out_dir):
        translator = Translator.load(out_dir)
        if translator.direction != config.direction:
            raise ValueError(
                f"{os.fspath(out_dir)!r} holds a {translator.direction} model; asked for {config.direction}. "
                "Use another --out folder."
            )
        translator.config.epochs = config.epochs
        if verbose:
            print(f"Resuming from {os.fspath(out_dir)!r} after epoch {translator.epochs_done}.")
    else:
        source_vocab, target_vocab = build_vocabularies(train_pairs, config.direction)
        model = build_model(config, len(source_vocab), len(target_vocab))
        translator = Translator(model, source_vocab, target_vocab, config)
    if translator.epochs_done >= config.epochs:
        if verbose:
            print(f"Already trained for {translator.epochs_done} epochs (asked {config.epochs}); nothing to do.")
        return translator, 0.0
    inputs, target_out = encode_pairs(train_pairs, config.direction, translator.source_vocab, translator.target_vocab)
    if config.supervised_pairs is not None and not translator.model.alignment_loss_weight:
        raise ValueError(
            "`supervised_pairs` limits the supervision of attention, which is off. "
            f"Received: supervised_pairs={config.supervised_pairs}, alignment_loss_weight=0"
        )
    if translator.model.alignment_loss_weight:
        inputs["alignment"] = oracle_alignments(train_pairs, config.direction, inputs)
        if config.supervised_pairs is not None:
            inputs["alignment"][config.supervised_pairs:] = 0.0  # rows of zeros: no supervision
    dataset = array_dataset(inputs, target_out, config.batch_size, shuffle=True, seed=config.seed)
    validation = None
    if valid_pairs:
        valid_inputs, valid_out = encode_pairs(valid_pairs, config.direction, translator.source_vocab, translator.target_vocab)
        validation = (valid_inputs, valid_out)
    start = time.perf_counter()
    build_before_fit(translator.model, dataset)
    translator.model.fit(
        dataset, epochs=config.epochs, initial_epoch=translator.epochs_done, verbose=verbose, shuffle=False,
        validation_data=validation, validation_batch_size=256,
        callbacks=[_checkpoint_callback(translator, out_dir)],
    )
    return translator, time.perf_counter() - start


# -- evaluation ---------------------------------------------------------------------------


def references_by_source(pairs, direction):
    """Unique sources (first-seen order) and, for each, all its reference targets."""
    sources, targets = source_target_texts(pairs, direction)
    grouped = defaultdict(list)
    for source, target in zip(sources, targets):
        if target not in grouped[source]:
            grouped[source].append(target)
    return list(grouped), [grouped[s] for s in grouped]


def _normalised(vocab, texts):
    return [" ".join(tokens) if vocab.level == "word" else "".join(tokens) for tokens in vocab.tokenize(texts)]


def evaluate(translator, pairs, beam_width=1, with_alignment=None):
    """Corpus BLEU and chrF (all translations of a source are references).

    Hypotheses and references are compared after the target vocabulary's own
    normalisation (English lower-cased, punctuation split), so the score
    measures words, not casing. `alignment_agreement` is added for pairs that
    carry a gold alignment (the generated corpus).
    """
    from course_lib.metrics.bleu import corpus_bleu, corpus_chrf

    sources, references = references_by_source(pairs, translator.direction)
    start = time.perf_counter()
    hypotheses = translator.translate(sources, beam_width=beam_width)
    seconds = time.perf_counter() - start
    references = [_normalised(translator.target_vocab, refs) for refs in references]
    metrics = {
        "bleu": corpus_bleu(hypotheses, references),
        "chrf": corpus_chrf(hypotheses, references),
        "exact_match": float(np.mean([h in refs for h, refs in zip(hypotheses, references)])),
        "sentences": len(sources),
        "beam_width": beam_width,
        "decode_seconds": seconds,
        "direction": translator.direction,
    }
    if with_alignment is None:
        with_alignment = all(hasattr(p, "gold_links") for p in pairs)
    if with_alignment and translator.model.attention:
        metrics["alignment_agreement"] = alignment_agreement(translator, pairs)
    return metrics


def alignment_agreement(translator, pairs):
    """Share of target words whose teacher-forced attention arg-max is a gold-aligned source word."""
    from course_lib.metrics.alignment import attention_agreement

    weights = translator.teacher_forced_alignments(pairs)  # (batch, tgt_len, src_len)
    gold = [pair.gold_links(translator.direction) for pair in pairs]
    return attention_agreement(weights, gold)


def agreement_by_word(translator, pairs):
    """Where attention agrees with the gold alignment, word by word.

    Returns:
        `{target word: {"agree": hits, "count": n, "attended_instead": Counter}}`,
        the counter naming the source words the arg-max fell on when it missed.
    """

    weights = translator.teacher_forced_alignments(pairs)  # (batch, tgt_len, src_len)
    report = defaultdict(lambda: {"agree": 0, "count": 0, "attended_instead": Counter()})
    for example, pair in enumerate(pairs):
        source, target = (text.split() for text in pair.source_target(translator.direction))
        for step, links in enumerate(pair.gold_links(translator.direction)):
            position = int(weights[example, step, : len(source)].argmax())
            entry = report[target[step]]
            entry["count"] += 1
            if position in links:
                entry["agree"] += 1
            else:
                entry["attended_instead"][source[position]] += 1
    return dict(report)


def _sources_with_lengths(translator, pairs):
    """The distinct sources of `pairs`, their references, and each source's length in tokens."""
    sources, references = references_by_source(pairs, translator.direction)
    lengths = [len(tokens) for tokens in translator.source_vocab.tokenize(sources)]
    return sources, references, lengths


def sources_by_length(translator, pairs):
    """`{source length in words: number of distinct sources}`: how many sentences each point of `bleu_by_length` stands for."""
    _, _, lengths = _sources_with_lengths(translator, pairs)
    return dict(sorted(Counter(lengths).items()))


def bleu_by_length(translator, pairs, beam_width=1):
    """`{source length in words: BLEU}` over the test pairs (group sizes: `sources_by_length`).

    A group whose shortest reference has fewer than 4 words is scored with
    BLEU-n for n = that length (BLEU-4 of 3-word sentences is undefined: they
    hold no 4-grams).
    """
    from course_lib.metrics.bleu import corpus_bleu

    sources, references, lengths = _sources_with_lengths(translator, pairs)
    hypotheses = translator.translate(sources, beam_width=beam_width)
    by_length = defaultdict(lambda: ([], []))
    for hypothesis, refs, length in zip(hypotheses, references, lengths):
        by_length[length][0].append(hypothesis)
        by_length[length][1].append(_normalised(translator.target_vocab, refs))
    scores = {}
    for length in sorted(by_length):
        hypotheses, references = by_length[length]
        shortest = min(len(reference.split()) for refs in references for reference in refs)
        scores[length] = corpus_bleu(hypotheses, references, max_order=max(1, min(4, shortest)))
    return scores


def heatmap(translator, text, path=None, beam_width=1, ax=None):
    """Attention heat map of one translation (Devanagari labels shaped)."""
    from course_lib.plots.attention import attention_heatmap
    from course_lib.plots.fonts import devanagari_font

    (output,), (detail,) = translator.translate([text], beam_width=beam_width, return_details=True)
    font = devanagari_font()
    ax = attention_heatmap(
        detail["attention"], detail["source_tokens"], detail["output_tokens"], ax=ax, fontproperties=font,
    )
    ax.set_title(f"{translator.direction}: {output}", pad=28, fontproperties=font)  # Hindi in the title too
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        ax.figure.savefig(path, bbox_inches="tight", dpi=120)
    return ax


# -- command line -------------------------------------------------------------------------


def _read_pairs(path):
    from course_lib.data.tatoeba import load_tatoeba

    return load_tatoeba(path)


SPLIT_FILES = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}


def _split_command(args):
    from course_lib.data.tatoeba import write_tatoeba

    out = Path(args.out)
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
    claim_run_folder(args.out, "translation", STATE_FILE)
    config = TranslationConfig.for_profile(
        direction=args.direction, epochs=args.epochs, seed=args.seed, max_train=args.max_train,
        units=args.units, embedding_dim=args.embedding_dim, batch_size=args.batch_size,
        learning_rate=args.learning_rate, alignment_loss_weight=args.alignment_loss_weight,
        supervised_pairs=args.supervised_pairs,
    )
    if args.no_attention:
        config.attention = False
    if args.train:
        train_pairs = _read_pairs(args.train)
        valid_pairs = _read_pairs(args.valid) if args.valid else None
    else:
        if args.valid:
            raise ValueError("--valid needs --train (the generated corpus brings its own validation part).")
        train_pairs = valid_pairs = None
    resuming = has_checkpoint(args.out)
    if resuming:
        check_resume_keeps(args.out, json.loads((Path(args.out) / STATE_FILE).read_text())["config"], {
            "units": args.units, "embedding_dim": args.embedding_dim, "learning_rate": args.learning_rate,
            "attention": False if args.no_attention else None, "alignment_loss_weight": args.alignment_loss_weight,
        })
    source_path = Path(args.out) / TRAIN_DATA_FILE
    if source_path.exists() and resuming:
        check_same_training_data(args.out, json.loads(source_path.read_text()).get("train_file"), args.train)
    else:  # the folder was made by claim_run_folder
        source_path.write_text(json.dumps({"train_file": args.train or GENERATED}))
    print(f"Training translation {config.direction} (profile {current_profile()}), "
          f"{config.epochs} epochs -> {args.out}")
    translator, seconds = train(config, train_pairs, valid_pairs, out_dir=args.out)
    print(f"Trained for {seconds:.1f} s; model in {args.out}")
    if valid_pairs is None and not args.train:
        valid_pairs = hindi_english.load_corpus(seed=config.seed)["valid"]
    if valid_pairs:
        metrics = evaluate(translator, valid_pairs)
        print(f"validation: BLEU {metrics['bleu']:.2f}  chrF {metrics['chrf']:.2f}")
    return 0


def _evaluate_command(args):
    translator = Translator.load(args.model)
    if args.test:
        pairs = _read_pairs(args.test)
    else:
        record = Path(args.model) / TRAIN_DATA_FILE
        trained_on = json.loads(record.read_text()).get("train_file") if record.exists() else GENERATED
        check_generated_test_fits(trained_on, "the generated test part")
        pairs = hindi_english.load_corpus(seed=translator.config.seed)["test"]
    metrics = evaluate(translator, pairs, beam_width=args.beam)
    for key, digits in (("bleu", 2), ("chrf", 2), ("exact_match", 4), ("alignment_agreement", 4)):
        if key in metrics:
            print(f"{key}: {metrics[key]:.{digits}f}")
    if args.metrics_json:
        Path(args.metrics_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics_json).write_text(json.dumps(metrics, indent=1))
    return 0


def _translate_command(args):
    translator = Translator.load(args.model)
    texts = args.text
    if not texts or not any(t.strip() for t in texts):
        raise ValueError("Nothing to translate: give the text as an argument, e.g. \"I am going home\".")
    for output in translator.translate(texts, beam_width=args.beam):
        print(output)
    if args.heatmap:
        import matplotlib

        matplotlib.use("Agg")
        heatmap(translator, texts[0], path=args.heatmap, beam_width=args.beam)
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, type=output_folder, help="model folder (resumes when it holds a checkpoint)")
    parser.set_defaults(handler=_train_command)

    parser = commands.root.add_parser(
        "split-translation", help="split a Tatoeba/Anki file into train.txt, valid.txt and test.txt",
        description="Splits the pairs by English sentence (split_corpus: no English or Hindi sentence in two parts), "
                    "80 / 10 / 10 %, and writes them in the file's own format.")
    parser.add_argument("file", help="Tatoeba/Anki file (English<TAB>Hindi<TAB>attribution), path, zip or URL")
    parser.add_argument("--out", required=True, type=output_folder, help="folder for train.txt, valid.txt and test.txt")
    parser.add_argument("--seed", type=int, default=0, help="shuffling seed (the docs' figures use 0)")
    parser.set_defaults(handler=_split_command)

    parser = commands.evaluate.add_parser("translation", help="BLEU/chrF of a trained translator")
    parser.add_argument("--model", required=True, help="folder written by `course-lib train translation`")
    parser.add_argument("--test", help="Tatoeba-format test file (default: the generated corpus's test part)")
    parser.add_argument("--beam", type=positive_int, default=1, help="beam width (1 = greedy)")
    parser.add_argument("--metrics-json", type=output_file(), help="write the metrics (bleu, chrf, ...) to this JSON file")
    parser.set_defaults(handler=_evaluate_command)

    parser = commands.root.add_parser("translate", help="translate text with a trained model")
    parser.add_argument("--model", required=True)
    parser.add_argument("--beam", type=positive_int, default=1)
    parser.add_argument("--heatmap", type=output_file(*IMAGE_SUFFIXES),
                        help="save the attention heat map of the first text to this image (.png, .pdf, .svg, .jpg)")
    parser.add_argument("text", nargs="+", help="sentences to translate (one argument each)")
    parser.set_defaults(handler=_translate_command)
