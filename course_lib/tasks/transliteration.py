"""Transliteration: Roman letters in, Devanagari letters out, with attention.

A character-level sequence-to-sequence model: a bidirectional GRU encoder
reads the roman word ("hindi"), the bridge `s_0 = tanh(W [h_fwd; h_bwd])`
starts the attentional GRU decoder, whose output layer reads
`[s_t; c_t; e(y_{t-1})]` (deep output), and the decoder writes Devanagari
code points ("ह", "ि", "ं", "द", "ी") until `<stop>`.

Data: with no file given, the generated word set of
`course_lib.data.transliteration_words` (offline). Real data: Aksharantar
(`roman,native` CSV) or a Dakshina lexicon (`native<TAB>roman<TAB>count`).

Evaluation is per distinct roman word: a prediction is right when it equals
any accepted spelling of that word in the test file (top-1 word accuracy);
top-k accuracy looks at the k beams; the character error rate compares with
the closest accepted spelling.
"""

import dataclasses
import difflib
import json
import math
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.metrics.transliteration import as_reference_lists
from course_lib.tasks.arguments import (
    GENERATED, IMAGE_SUFFIXES, check_generated_test_fits, check_resume_keeps, check_same_training_data,
    claim_run_folder, non_negative_float, output_file, output_folder, positive_float, positive_int,
)
from course_lib.training.profiles import pick

MODEL_FILE = "model.keras"
SOURCE_VOCAB_FILE = "source_vocab.json"
TARGET_VOCAB_FILE = "target_vocab.json"
STATE_FILE = "training_state.json"


@dataclasses.dataclass
class TransliterationConfig:
    epochs: int = 20
    batch_size: int = 128
    embedding_dim: int = 64
    units: int = 256
    attention: bool = True
    bidirectional: bool = True
    deep_output: bool = True
    learning_rate: float = 2e-3
    final_learning_rate_fraction: float = 0.02
    clipnorm: float = 1.0
    source_noise: float = 0.0  # share of source letters replaced by <unk> in training
    target_noise: float = 0.0  # share of decoder inputs replaced by <unk> in training
    label_smoothing: float = 0.0
    beam_width: int = 5
    length_penalty: float = 1.0
    max_output_length: int = 32
    train_words: int = 4000  # generated set only
    drop_vowel_length: float = 0.0  # generated set only: share of long vowels typed short (aa -> a)
    valid_words: int = 500
    test_words: int = 500
    direction: str = "roman-native"  # or "native-roman": the reverse model that scores candidates (reranking)
    right_to_left: bool = False  # the decoder writes each word from its last letter (a second opinion for reranking)
    seed: int = 0  # the generated word sets; also the model's seed unless `model_seed` is set
    model_seed: int = None  # initial weights and batch order (ensemble members differ only here)
    steps_per_execution: int = 20

    @classmethod
    def for_profile(cls, profile=None, **overrides):
        """`full`: the Aksharantar-sized model; `fast`: a CI-sized one on the generated set."""
        config = cls(
            epochs=pick(fast=6, full=40, profile=profile),
            batch_size=pick(fast=64, full=128, profile=profile),
            embedding_dim=pick(fast=24, full=64, profile=profile),
            units=pick(fast=64, full=256, profile=profile),
            learning_rate=pick(fast=1e-2, full=2e-3, profile=profile),
            train_words=pick(fast=2000, full=20000, profile=profile),
            valid_words=pick(fast=300, full=1000, profile=profile),
            test_words=pick(fast=300, full=1000, profile=profile),
            beam_width=pick(fast=4, full=5, profile=profile),
            # The regularisers that took Aksharantar from 42.6 % to 46.6 % (docs/transliteration.md).
            source_noise=pick(fast=0.0, full=0.05, profile=profile),
            target_noise=pick(fast=0.0, full=0.15, profile=profile),
            label_smoothing=pick(fast=0.0, full=0.1, profile=profile),
        )
        for key, value in overrides.items():
            if value is not None:
                setattr(config, key, value)
        return config


# -- data ---------------------------------------------------------------------


def load_pairs(path_or_url, errors="warn"):
    """Reads Aksharantar (`.csv`) or Dakshina (`.tsv`) pairs from a file or URL."""
    name = str(path_or_url).split("?")[0].lower()
    if name.endswith(".tsv"):
        from course_lib.data.dakshina import load_dakshina

        return load_dakshina(path_or_url, errors=errors)
    if name.endswith(".csv"):
        from course_lib.data.aksharantar import load_aksharantar

        return load_aksharantar(path_or_url, errors=errors)
    raise ValueError(
        "Transliteration files must be Aksharantar `.csv` (roman,native) or Dakshina `.tsv` "
        f"(native<TAB>roman<TAB>count). Received: {path_or_url!r}"
    )


def generated_splits(config):
    """The offline default: generated (train, valid, test) pairs."""
    from course_lib.data.transliteration_words import splits

    return splits(config.train_words, config.valid_words, config.test_words, seed=config.seed,
                  drop_vowel_length=config.drop_vowel_length)


DIRECTIONS = ("roman-native", "native-roman")


def check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {DIRECTIONS}. Received: direction={direction!r}")
    return direction


def sides(pairs, direction="roman-native"):
    """`(source texts, target texts)` of the pairs: roman -> native, or native -> roman
    for the reverse model that scores candidates when reranking."""
    roman, native = [p.roman for p in pairs], [p.native for p in pairs]
    return (roman, native) if check_direction(direction) == "roman-native" else (native, roman)


def build_vocabularies(train_pairs, direction="roman-native"):
    """Character vocabularies `(source, target)`: lower-cased roman letters and Devanagari code points."""
    from course_lib.text.vocabulary import Vocabulary

    roman, native = sides(train_pairs)
    roman_vocab = Vocabulary.from_texts(roman, level="char", lowercase=True)
    native_vocab = Vocabulary.from_texts(native, level="char")
    return (roman_vocab, native_vocab) if check_direction(direction) == "roman-native" else (native_vocab, roman_vocab)


def encode_pairs(pairs, source_vocab, target_vocab, direction="roman-native", right_to_left=False):
    """Padded `(source, target + <stop>)` id arrays; with `right_to_left` each
    target is written from its last letter (the `<stop>` still comes last)."""
    from course_lib.decoding.sequences import reverse_tokens
    from course_lib.text.vocabulary import STOP

    source_texts, target_texts = sides(pairs, direction)
    target = target_vocab.encode(target_texts, add_stop=True)
    return source_vocab.encode(source_texts), reverse_tokens(target, STOP) if right_to_left else target


def normalize_references(texts, target_vocab):
    """References in the vocabulary's form (Unicode, case), so they compare with decoded output."""
    return [target_vocab.separator.join(tokens) for tokens in target_vocab.tokenize(list(texts))]


def test_items(pairs, target_vocab, direction="roman-native"):
    """Distinct source words and, for each, all accepted (normalised) outputs."""
    from course_lib.data.transliteration_pairs import references_by_source

    grouped = references_by_source(pairs, "roman" if check_direction(direction) == "roman-native" else "native")
    words = list(grouped)
    references = [normalize_references(grouped[word], target_vocab) for word in words]
    return words, references


# -- model and training -------------------------------------------------------


def token_noise(ids, probability, rng, keep_first=False):
    """Replaces real (non-padding) tokens by `<unk>` with the given probability.

    Used on the source letters and on the decoder's teacher-forced inputs
    during training (token dropout): the model must not rely on every single
    letter, which reduces over-fitting on a word list.
    """
    from course_lib.text.vocabulary import PAD, UNK

    if probability <= 0:
        return ids
    hit = (rng.random(ids.shape) < probability) & (ids != PAD)
    if keep_first:
        hit[:, 0] = False  # the <GO> token stays
    return np.where(hit, UNK, ids).astype(ids.dtype)


def noise_transform(config):
    """The batch transform for `course_lib.data.buckets` (None without noise)."""
    if config.source_noise <= 0 and config.target_noise <= 0:
        return None

    def transform(inputs, target_out, rng):
        return {
            "source": token_noise(inputs["source"], config.source_noise, rng),
            "target_in": token_noise(inputs["target_in"], config.target_noise, rng, keep_first=True),
        }, target_out

    return transform


def _model_seed(config):
    return config.seed if config.model_seed is None else config.model_seed


def build_model(config, source_vocab_size, target_vocab_size, total_steps, steps_per_epoch=None):
    """The compiled Seq2Seq model; with `steps_per_epoch`, its steps per execution divide it."""
    import keras

    from course_lib.losses import SmoothedMaskedTokenLoss
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.training.fit import steps_per_execution_for

    keras.utils.set_random_seed(_model_seed(config))
    model = Seq2Seq(
        source_vocab_size,
        target_vocab_size,
        embedding_dim=config.embedding_dim,
        units=config.units,
        attention=config.attention,
        option=1,
        bidirectional=config.bidirectional,
        deep_output=config.deep_output and config.attention,
        max_output_length=config.max_output_length,
    )
    # Adam, cosine decay to a small fraction of the initial rate over the whole
    # run (so resuming continues the same schedule), gradient norm clipped.
    schedule = keras.optimizers.schedules.CosineDecay(
        config.learning_rate, max(1, total_steps), alpha=config.final_learning_rate_fraction
    )
    model.compile(
        optimizer=keras.optimizers.Adam(schedule, clipnorm=config.clipnorm),
        loss=SmoothedMaskedTokenLoss(config.label_smoothing) if config.label_smoothing > 0 else None,
        steps_per_execution=(
            config.steps_per_execution if steps_per_epoch is None
            else steps_per_execution_for(steps_per_epoch, config.steps_per_execution)
        ),
        jit_compile=training_jit_compile(),
    )
    return model


def _checkpoint_callback(out_dir, config, source_vocab, target_vocab, started):
    import keras

    class Checkpoint(keras.callbacks.Callback):
        """Saves model, vocabularies and progress after every epoch (atomically)."""

        def on_epoch_end(self, epoch, logs=None):
            save_run(out_dir, self.model, source_vocab, target_vocab, config,
                     state={"epochs_done": epoch + 1, "seconds": time.perf_counter() - started,
                            "last_logs": {k: float(v) for k, v in (logs or {}).items()}})

    return Checkpoint()


def save_run(out_dir, model, source_vocab, target_vocab, config, state=None):
    """Writes `model.keras`, the two vocabularies, the config and the progress."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    temporary = out_dir / (MODEL_FILE + ".tmp.keras")
    model.save(temporary)
    os.replace(temporary, out_dir / MODEL_FILE)
    source_vocab.save(out_dir / SOURCE_VOCAB_FILE)
    target_vocab.save(out_dir / TARGET_VOCAB_FILE)
    previous = read_state(out_dir)
    previous.update(state or {})
    previous["config"] = dataclasses.asdict(config)
    (out_dir / STATE_FILE).write_text(json.dumps(previous, indent=1))


def read_state(run_dir):
    """The run's `training_state.json` as a dict (empty when the folder has none)."""
    path = Path(run_dir) / STATE_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def load_run(model_dir):
    """Loads `(model, source_vocab, target_vocab, state)` from a training folder."""
    import keras

    import course_lib.models.seq2seq  # noqa: F401  (registers the classes)
    from course_lib.text.vocabulary import Vocabulary

    model_dir = Path(model_dir)
    if not (model_dir / MODEL_FILE).exists():
        raise FileNotFoundError(
            f"No trained transliteration model in {os.fspath(model_dir)!r} (expected {MODEL_FILE}); "
            "train one with `course-lib train transliteration --out DIR`."
        )
    model = keras.saving.load_model(model_dir / MODEL_FILE)
    state = read_state(model_dir)
    return (
        model,
        Vocabulary.load(model_dir / SOURCE_VOCAB_FILE),
        Vocabulary.load(model_dir / TARGET_VOCAB_FILE),
        state,
    )


def _saved_kind(state):
    """`(direction, right_to_left)` of a saved run (runs saved before these options: roman-native, left to right)."""
    config = state.get("config", {})
    return config.get("direction", "roman-native"), bool(config.get("right_to_left", False))


def _kind_name(direction, right_to_left):
    return f"{direction} right-to-left" if right_to_left else direction


def _check_config_fits_model(out_dir, config, model):
    """Refuses to resume the saved `model` under a `config` that describes another architecture.

    The run would continue the saved model while recording `config` as its own.
    """
    wanted = {
        "units": config.units, "embedding_dim": config.embedding_dim, "attention": bool(config.attention),
        "bidirectional": bool(config.bidirectional), "deep_output": bool(config.deep_output and config.attention),
        "max_output_length": config.max_output_length,
    }
    saved = {name: getattr(model, name, wanted[name]) for name in wanted}
    saved = {name: bool(value) if isinstance(wanted[name], bool) else value for name, value in saved.items()}
    differ = [name for name in wanted if saved[name] != wanted[name]]
    if differ:
        raise ValueError(
            f"{os.fspath(out_dir)!r} holds a model with " + ", ".join(f"{name}={saved[name]!r}" for name in differ)
            + "; resuming it needs the same architecture (use the run's saved config, or choose another folder). "
            + "Received: " + ", ".join(f"{name}={wanted[name]!r}" for name in differ)
        )


def train(config, train_pairs, valid_pairs=None, out_dir=None, verbose=2):
    """Trains (or resumes, when `out_dir` holds a checkpoint) a transliteration model.

    Returns:
        A dict with `model`, `source_vocab`, `target_vocab`, `history`
        (per-epoch logs), `seconds` (this call's training time) and
        `epochs_done`.
    """
    from course_lib.data.buckets import as_dataset
    from course_lib.training.fit import build_before_fit

    if not train_pairs:
        raise ValueError("No training pairs. Received: 0 pairs")
    initial_epoch = 0
    if out_dir is not None and (Path(out_dir) / MODEL_FILE).exists():
        model, source_vocab, target_vocab, state = load_run(out_dir)
        initial_epoch = int(state.get("epochs_done", 0))
        saved_kind = _saved_kind(state)
        if saved_kind != (config.direction, config.right_to_left):
            raise ValueError(
                f"{os.fspath(out_dir)!r} holds a {_kind_name(*saved_kind)} model; it cannot be resumed as "
                f"{_kind_name(config.direction, config.right_to_left)}. Received: direction={config.direction!r}, "
                f"right_to_left={config.right_to_left}"
            )
        _check_config_fits_model(out_dir, config, model)
        if verbose:
            print(f"Resuming from {os.fspath(out_dir)!r} after epoch {initial_epoch}.", flush=True)
    else:
        source_vocab, target_vocab = build_vocabularies(train_pairs, config.direction)
    source, target = encode_pairs(train_pairs, source_vocab, target_vocab, config.direction, config.right_to_left)
    steps_per_epoch = math.ceil(len(source) / config.batch_size)
    if initial_epoch == 0:
        model = build_model(config, len(source_vocab), len(target_vocab), steps_per_epoch * config.epochs,
                            steps_per_epoch=steps_per_epoch)
    validation = None
    if valid_pairs:
        valid_source, valid_target = encode_pairs(valid_pairs, source_vocab, target_vocab, config.direction,
                                                  config.right_to_left)
        validation = as_dataset(valid_source, valid_target, 256, bucketed=True, seed=None)
    dataset = as_dataset(
        source, target, config.batch_size, bucketed=True, seed=_model_seed(config) + 1000 * initial_epoch, repeat=True,
        transform=noise_transform(config),
    )
    started = time.perf_counter()
    callbacks = [] if out_dir is None else [
        _checkpoint_callback(out_dir, config, source_vocab, target_vocab, started)
    ]
    history = {}
    if initial_epoch < config.epochs:
        build_before_fit(model, dataset)
        fitted = model.fit(
            dataset, epochs=config.epochs, initial_epoch=initial_epoch, steps_per_epoch=steps_per_epoch,
            validation_data=validation, callbacks=callbacks, verbose=verbose, shuffle=False,
        )
        history = fitted.history
    return {
        "model": model,
        "source_vocab": source_vocab,
        "target_vocab": target_vocab,
        "history": history,
        "seconds": time.perf_counter() - started,
        "epochs_done": max(initial_epoch, config.epochs),
    }


# -- decoding and evaluation --------------------------------------------------


def transliterate_words(model, source_vocab, target_vocab, words, beam_width=1, length_penalty=1.0,
                        batch_size=512, max_length=None, right_to_left=False):
    """Transliterates a list of roman words in length-sorted batches.

    `right_to_left`: the model writes words backwards (trained with it); its
    outputs and attention rows are put back in reading order.

    Returns:
        A dict: `predictions` (best strings), `candidates` (per word the
        beam's strings, best first; one with greedy decoding), `alignments`
        (per word `(output steps, source letters)` of the best output, cut to
        its length and `<stop>` included), `sources` (the roman letters).
    """
    from course_lib.data.buckets import batched_generate

    words = list(words)
    if not words:
        raise ValueError("No words to transliterate. Received: 0 words")
    source = source_vocab.encode(words)
    generate_kwargs = {"max_length": max_length or model.max_output_length}
    if beam_width > 1:
        generate_kwargs.update(beam_width=beam_width, length_penalty=length_penalty)
    output = batched_generate(model, source, batch_size=batch_size, **generate_kwargs)
    if right_to_left:
        output = _in_reading_order(output, model.stop_id, model.pad_id)
    predictions = [target_vocab.decode(tokens) for tokens in output["tokens"]]
    if beam_width > 1:
        candidates = [[target_vocab.decode(row) for row in beams] for beams in output["beam_tokens"]]
        scores = [np.asarray(row, "float64") for row in output["beam_scores"]]
    else:
        candidates = [[prediction] for prediction in predictions]
        scores = [np.asarray([score], "float64") for score in output["scores"]]
    letters = source_vocab.tokenize(words)
    alignments = []
    for tokens, weights, word_letters in zip(output["tokens"], output["alignments"], letters):
        stops = np.flatnonzero(np.asarray(tokens) == model.stop_id)
        steps = int(stops[0]) + 1 if len(stops) else len(tokens)
        alignments.append(np.asarray(weights)[:steps, : len(word_letters)])
    return {"predictions": predictions, "candidates": candidates, "scores": scores, "alignments": alignments,
            "sources": letters}


def _in_reading_order(output, stop_id, pad_id):
    """`batched_generate` output of a right-to-left model, turned to reading order."""
    from course_lib.decoding.sequences import content_lengths, reverse_tokens

    output = dict(output)
    written = np.stack(output["tokens"])  # (N, max_length), as the model wrote them
    alignments = []
    for weights, end in zip(output["alignments"], content_lengths(written, stop_id, pad_id)):
        weights = np.array(weights, copy=True)
        weights[:end] = weights[:end][::-1]  # rows follow the letters; the <stop> row stays last
        alignments.append(weights)
    tokens = list(reverse_tokens(written, stop_id, pad_id))
    output.update(tokens=tokens, alignments=alignments)
    if "beam_tokens" in output:
        output["beam_tokens"] = [reverse_tokens(np.asarray(beams), stop_id, pad_id) for beams in output["beam_tokens"]]
    return output


RERANKER_KINDS = ("channel", "right-to-left")


@dataclasses.dataclass
class Reranker:
    """A second opinion that scores the beam's candidates (`course_lib.decoding.rerank`).

    `kind` is `"channel"` for a native -> roman model (scores `log P(x | y)`,
    trained with `--direction native-roman`) or `"right-to-left"` for a
    roman -> native model that writes words backwards (scores `log P(y | x)`,
    trained with `--right-to-left`). `model` is one trained model, or a list
    of models of that kind trained alike (e.g. from different seeds): their
    log-probabilities are averaged. `load_reranker(DIR or [DIR, ...])` reads
    one from training folders.
    """

    kind: str
    model: object
    source_vocab: object
    target_vocab: object

    def __post_init__(self):
        if self.kind not in RERANKER_KINDS:
            raise ValueError(f"`kind` must be one of {RERANKER_KINDS}. Received: kind={self.kind!r}")
        if not self.models:
            raise ValueError("A reranker needs at least one model. Received: model=[]")
        # The roman side is the lower-cased vocabulary: it must be the target of a
        # channel model and the source of a right-to-left one.
        roman_side = self.target_vocab if self.kind == "channel" else self.source_vocab
        native_side = self.source_vocab if self.kind == "channel" else self.target_vocab
        if not roman_side.lowercase or native_side.lowercase:
            wanted = "read Devanagari and write roman letters" if self.kind == "channel" else \
                "read roman letters and write Devanagari"
            raise ValueError(
                f"A {self.kind} reranker must {wanted}. Received: a model whose source vocabulary is "
                f"{self.source_vocab!r} and target vocabulary is {self.target_vocab!r}"
            )

    @property
    def models(self):
        """The reranking models, as a tuple (one or more)."""
        return tuple(self.model) if isinstance(self.model, (list, tuple)) else (self.model,)


def load_reranker(model_dirs):
    """The `Reranker` in one training folder, or in several of the same kind (averaged).

    Its kind comes from the saved config.
    """
    runs = load_alike(model_dirs)
    models = [run[0] for run in runs]
    _, source_vocab, target_vocab, state = runs[0]
    model = models[0] if len(models) == 1 else models
    kind = _saved_kind(state)
    if kind == ("native-roman", False):
        return Reranker("channel", model, source_vocab, target_vocab)
    if kind == ("roman-native", True):
        return Reranker("right-to-left", model, source_vocab, target_vocab)
    raise ValueError(
        "A reranker is a native-roman model (`train transliteration --direction native-roman`) or a "
        f"right-to-left one (`--right-to-left`). Received: {_kind_name(*kind)} model in {model_dirs!r}"
    )


def equal_votes_weight(model, reranker):
    """The rerank weight at which every model counts alike: R reranking models / M decoding ones.

    The beam's score averages the M decoding models (one `Seq2Seq`, or an
    `Ensemble` of M), so weight `R / M` on the rerankers' mean gives each of
    the M + R models one vote. `evaluate --rerank-with` uses it by default.
    """
    from course_lib.decoding.ensemble import Ensemble

    decoding_models = len(model.models) if isinstance(model, Ensemble) else 1
    return len(reranker.models) / decoding_models


def reranker_log_probs(decoded, words, reranker, batch_size=512):
    """The reranker's log-probability of every beam candidate `y` of every word `x`.

    Args:
        decoded: `transliterate_words` output from beam search (k > 1).
        words: the roman words that were transliterated, in the same order.
        reranker: a `Reranker`.

    Returns:
        `(log_probs, lengths)`, both `(N, k)`: `log P(x | y)` (channel) or the
        right-to-left `log P(y | x)` (the mean over the reranker's models when
        it has several), and the number of tokens each scores (`|x| + 1` or
        `|y| + 1`, the `<stop>` included).
    """
    from course_lib.data.buckets import batched_log_probs
    from course_lib.decoding.sequences import reverse_tokens
    from course_lib.text.vocabulary import STOP

    counts = {len(row) for row in decoded["candidates"]}
    if len(words) != len(decoded["candidates"]) or counts != {max(counts)} or max(counts) < 2:
        raise ValueError(
            "Reranking needs the same number (at least 2) of beam candidates for every word. "
            f"Received: {len(words)} words, candidate counts {sorted(counts)}"
        )
    k = max(counts)
    flat_candidates = [candidate for row in decoded["candidates"] for candidate in row]
    repeated_words = [word for word in words for _ in range(k)]
    # An empty candidate (a beam that stopped at once) explains nothing: -inf.
    log_probs = np.full(len(flat_candidates), -np.inf)
    lengths = np.ones(len(flat_candidates))
    chosen = [i for i, candidate in enumerate(flat_candidates) if candidate]
    if chosen:
        candidates = [flat_candidates[i] for i in chosen]
        roman = [repeated_words[i] for i in chosen]
        if reranker.kind == "channel":
            source = reranker.source_vocab.encode(candidates)
            target = reranker.target_vocab.encode(roman, add_stop=True)
        else:
            source = reranker.source_vocab.encode(roman)
            target = reverse_tokens(reranker.target_vocab.encode(candidates, add_stop=True), STOP)
        log_probs[chosen] = np.mean(
            [batched_log_probs(model, source, target, batch_size=batch_size) for model in reranker.models], axis=0
        )
        lengths[chosen] = np.count_nonzero(target != reranker.models[0].pad_id, axis=1)
    return log_probs.reshape(len(words), k), lengths.reshape(len(words), k)


def rerank(decoded, words, reranker, weight=1.0, batch_size=512, scored=None):
    """Re-sorts each word's beam candidates by
    `log P(y|x)/(|y|+1) + weight * log Q/n` (`course_lib.decoding.rerank`).

    Args:
        decoded, words, reranker: as for `reranker_log_probs`.
        weight: the reranker's weight (0 keeps the beam order).
        scored: `reranker_log_probs(decoded, words, reranker)` when already
            computed (to try several weights without running the model again).

    Returns:
        A copy of `decoded` whose `candidates`, `scores` and `predictions`
        follow the new order (`alignments` are dropped: they belong to the old
        best candidates), with the reranker's `reranker_log_probs` per candidate.
    """
    from course_lib.decoding.rerank import rerank_scores

    log_probs, lengths = scored if scored is not None else reranker_log_probs(decoded, words, reranker, batch_size)
    with np.errstate(invalid="ignore"):  # -inf scores stay -inf
        combined = rerank_scores(np.stack(decoded["scores"]), log_probs, lengths, weight)
    order = np.argsort(-np.nan_to_num(combined, nan=-np.inf), axis=1, kind="stable")  # (N, k)
    candidates = [[row[j] for j in ranks] for row, ranks in zip(decoded["candidates"], order)]
    reranked = {key: value for key, value in decoded.items() if key != "alignments"}
    reranked.update(
        candidates=candidates,
        predictions=[row[0] for row in candidates],
        scores=[row[ranks] for row, ranks in zip(combined, order)],
        reranker_log_probs=[row[ranks] for row, ranks in zip(log_probs, order)],
    )
    return reranked


def evaluate(model, source_vocab, target_vocab, pairs, beam_width=1, length_penalty=1.0, batch_size=512,
             direction="roman-native", right_to_left=False, reranker=None, rerank_weight=1.0):
    """Top-1 and top-k word accuracy and CER on test pairs.

    `direction` and `right_to_left` are the model's (`"native-roman"` scores
    a reverse model). With a `reranker` (see `rerank`) the beam's candidates
    are reranked before scoring.

    Returns:
        A dict: `word_accuracy`, `top_k_accuracy` (k = `beam_width`), `cer`,
        `words` (distinct roman words scored), `beam_width`, `seconds`, and
        the per-word `predictions`, `candidates`, `references`, `test_words`.
    """
    from course_lib.metrics.transliteration import character_error_rate, top_k_accuracy, word_accuracy

    words, references = test_items(pairs, target_vocab, direction)
    started = time.perf_counter()
    decoded = transliterate_words(model, source_vocab, target_vocab, words, beam_width, length_penalty, batch_size,
                                  right_to_left=right_to_left)
    if reranker is not None:
        decoded = rerank(decoded, words, reranker, rerank_weight, batch_size)
    seconds = time.perf_counter() - started
    return {
        "word_accuracy": word_accuracy(decoded["predictions"], references),
        "top_k_accuracy": top_k_accuracy(decoded["candidates"], references, k=beam_width),
        "cer": character_error_rate(decoded["predictions"], references),
        "words": len(words),
        "beam_width": int(beam_width),
        "seconds": seconds,
        "predictions": decoded["predictions"],
        "candidates": decoded["candidates"],
        "references": references,
        "test_words": words,
    }


# -- what goes wrong ----------------------------------------------------------

_VOWEL_LENGTH = {frozenset(p) for p in [("ि", "ी"), ("ु", "ू"), ("इ", "ई"), ("उ", "ऊ"), ("अ", "आ"), ("े", "ै"), ("ो", "ौ")]}
_NASAL_SIGNS = frozenset("ंँ")  # anusvara, chandrabindu
_NASAL_HALF = re.compile("[ङञणनम]्")  # a nasal consonant + virama, the anusvara's other spelling
ERROR_KINDS = ("vowel length", "virama / conjunct", "nasal", "word end", "other")


def _is_nasal_swap(removed, added):
    """An anusvara written as a nasal consonant + virama, or back (हिंदी / हिन्दी)."""
    return removed != added and _NASAL_HALF.sub("ं", removed) == _NASAL_HALF.sub("ं", added)


def error_kinds(prediction, reference):
    """Which kinds of mistake turn `reference` into `prediction` (a set; empty if equal).

    - "vowel length": a short vowel sign for a long one or back (ि/ी, ु/ू,
      an extra or missing ा);
    - "virama / conjunct": a virama (्) gained or lost, i.e. a conjunct split or made;
    - "nasal": the anusvara rule: an anusvara (ं) or chandrabindu (ँ) gained,
      lost or replaced, or an anusvara spelt as a nasal consonant + virama
      (ं ↔ न्, म्, ण्...; this swap is not also a "virama / conjunct"). A
      nasal *consonant* replaced by another letter (म for व) is not "nasal";
    - "word end": any change in the last two letters of the reference;
    - "other": anything else (a wrong consonant, a missing letter...).
    """
    kinds = set()
    if prediction == reference:
        return kinds
    matcher = difflib.SequenceMatcher(a=reference, b=prediction, autojunk=False)
    for operation, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if operation == "equal":
            continue
        removed, added = reference[a_start:a_end], prediction[b_start:b_end]
        changed = set(removed) | set(added)
        found = False
        if _is_nasal_swap(removed, added):
            kinds.add("nasal")
            found = True
        else:
            if operation == "replace" and len(removed) == len(added) and all(
                frozenset((x, y)) in _VOWEL_LENGTH for x, y in zip(removed, added)
            ) or (operation != "replace" and changed == {"ा"}):
                kinds.add("vowel length")
                found = True
            if "्" in changed:
                kinds.add("virama / conjunct")
                found = True
            if changed & _NASAL_SIGNS:
                kinds.add("nasal")
                found = True
        if a_end >= len(reference) - 1:
            kinds.add("word end")
            found = True
        if not found:
            kinds.add("other")
    return kinds


def wrong_words(predictions, references):
    """The `(prediction, first accepted spelling)` pairs of the words a model got wrong."""
    accepted_lists = as_reference_lists(references, len(predictions))
    return [(prediction, accepted[0]) for prediction, accepted in zip(predictions, accepted_lists)
            if prediction not in accepted]


def error_summary(predictions, references):
    """Counts of each error kind over the wrong words (a word may count in several)."""
    counts = dict.fromkeys(ERROR_KINDS, 0)
    for prediction, accepted in zip(predictions, references):
        if prediction in accepted:
            continue
        closest = min(accepted, key=lambda r: -difflib.SequenceMatcher(a=r, b=prediction).ratio())
        for kind in error_kinds(prediction, closest):
            counts[kind] += 1
    return counts


def accuracy_by_length(words, predictions, references, bins=((1, 6), (7, 9), (10, 12), (13, 99))):
    """Top-1 accuracy per range of roman word length: `{"7-9": (accuracy, count)}`."""
    table = {}
    for low, high in bins:
        hits = [p in r for w, p, r in zip(words, predictions, references) if low <= len(w) <= high]
        if hits:
            label = f"{low}-{high}" if high < 99 else f"{low}+"
            table[label] = (float(np.mean(hits)), len(hits))
    return table


def heatmap_examples(words, decoded, target_vocab, count=9, references=None):
    """Examples for `course_lib.plots.grid.attention_grid` from `transliterate_words` output.

    Each title reads `word → output`; with `references` (per word a string or
    a list of accepted spellings, e.g. `evaluate(...)["references"]`) it also
    says whether the output is right: `✓`, or `✗` and the expected spelling
    on a second line.
    """
    count = min(count, len(words))
    if references is not None:
        references = list(references)
        if len(references) < count:
            raise ValueError(
                f"Need references for the first {count} words. Received: {len(references)} references"
            )
        references = as_reference_lists(references[:count], count)
    examples = []
    for index in range(count):
        weights = decoded["alignments"][index]
        prediction = decoded["predictions"][index]
        output_letters = list(prediction) + ["<stop>"]
        steps = min(len(output_letters), len(weights))
        title = f"{words[index]} → {prediction}"
        if references is not None:
            accepted = references[index]
            title += " ✓" if prediction in accepted else f" ✗\nreference {accepted[0]}"
        examples.append({
            "weights": weights[:steps],
            "input_labels": decoded["sources"][index],
            "output_labels": output_letters[:steps],
            "title": title,
        })
    return examples


# -- command line ---------------------------------------------------------------


def config_from_state(state):
    """The `TransliterationConfig` saved in a run's state (fields it lacks: the dataclass defaults)."""
    return TransliterationConfig(**{
        k: v for k, v in state.get("config", {}).items() if k in TransliterationConfig.__dataclass_fields__
    })


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
    if args.model_seed is not None and args.model_seed != _model_seed(config):
        raise ValueError(
            f"{str(args.out)!r} holds a run whose initial weights and batch order came from seed "
            f"{_model_seed(config)}; resuming it keeps them (leave --model-seed out, or choose another --out). "
            f"Received: --model-seed {args.model_seed}"
        )
    if args.epochs is not None:
        config.epochs = args.epochs
    config.direction = args.direction or config.direction
    config.right_to_left = bool(args.right_to_left) or config.right_to_left
    return config


def _train_command(args):
    claim_run_folder(args.out, "transliteration", STATE_FILE)
    state = read_state(args.out)
    # Only a saved model is resumed: without one, a left-over progress file binds neither flags nor data.
    resuming = (Path(args.out) / MODEL_FILE).exists() and "config" in state
    if resuming:
        config = _resumed_config(args, state)
        if state.get("train_file") is not None:
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
    if resuming:
        data = "" if args.train else (f", {config.train_words}/{config.valid_words}/{config.test_words} "
                                      f"train/valid/test words (seed {config.seed})")
        print(f"Resuming with the run's saved settings: units={config.units}, embedding_dim={config.embedding_dim}, "
              f"attention={config.attention}, batch_size={config.batch_size}{data}.", flush=True)
    print(f"Training on {len(train_pairs)} pairs from {source_name}; "
          f"{config.epochs} epochs, checkpoints in {args.out!r}.", flush=True)
    verbose = 1 if sys.stdout.isatty() else 2
    result = train(config, train_pairs, valid_pairs, out_dir=args.out, verbose=verbose)
    save_run(args.out, result["model"], result["source_vocab"], result["target_vocab"], config,
             state={"epochs_done": result["epochs_done"], "train_file": args.train or GENERATED})
    print(f"Trained {result['epochs_done']} epochs in total ({result['seconds']:.0f} s this run); "
          f"saved to {args.out!r}.", flush=True)
    if valid_pairs:
        metrics = evaluate(result["model"], result["source_vocab"], result["target_vocab"], valid_pairs,
                           beam_width=1, direction=config.direction, right_to_left=config.right_to_left)
        print(f"validation (greedy): word_accuracy={metrics['word_accuracy']:.4f} cer={metrics['cer']:.4f}")
    return 0


def load_alike(model_dirs):
    """Loads one training folder, or several whose models must be interchangeable.

    Several must write in the same direction and order, and share vocabularies
    (be trained on the same file): an ensemble's members, or the models of one
    `Reranker`. Returns the list of `load_run` results.
    """
    model_dirs = [model_dirs] if isinstance(model_dirs, (str, os.PathLike)) else list(model_dirs)
    if not model_dirs:
        raise ValueError("Need at least one model folder. Received: []")
    runs = [load_run(directory) for directory in model_dirs]
    _, source_vocab, target_vocab, state = runs[0]
    for directory, (_, other_source, other_target, other_state) in zip(model_dirs[1:], runs[1:]):
        if _saved_kind(other_state) != _saved_kind(state):
            raise ValueError(
                "These models must write in the same direction. Received: "
                f"{os.fspath(directory)!r} is {_kind_name(*_saved_kind(other_state))}, "
                f"{os.fspath(model_dirs[0])!r} is {_kind_name(*_saved_kind(state))}"
            )
        if other_source.tokens != source_vocab.tokens or other_target.tokens != target_vocab.tokens:
            raise ValueError(
                "These models must be trained on the same vocabularies (the same training file). "
                f"Received: {os.fspath(directory)!r} differs from {os.fspath(model_dirs[0])!r}"
            )
    return runs


def load_ensemble(model_dirs):
    """Loads one run, or several trained on the same vocabularies as an `Ensemble`.

    Returns `(model or Ensemble, source_vocab, target_vocab, state of the first run)`.
    """
    from course_lib.decoding.ensemble import Ensemble

    runs = load_alike(model_dirs)
    model, source_vocab, target_vocab, state = runs[0]
    if len(runs) == 1:
        return model, source_vocab, target_vocab, state
    return Ensemble([run[0] for run in runs]), source_vocab, target_vocab, state


def _evaluate_command(args):
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
        reranker = load_reranker(args.rerank_with)
        if rerank_weight is None:
            rerank_weight = equal_votes_weight(model, reranker)
    direction, right_to_left = _saved_kind(state)
    metrics = evaluate(model, source_vocab, target_vocab, pairs, beam_width=args.beam,
                       length_penalty=args.length_penalty, direction=direction, right_to_left=right_to_left,
                       reranker=reranker, rerank_weight=rerank_weight)
    summary = {k: metrics[k] for k in ("word_accuracy", "top_k_accuracy", "cer", "words", "beam_width", "seconds")}
    summary["test_file"] = args.test or "generated test set"
    summary["models"] = list(args.model)
    if args.rerank_with:
        summary.update(reranked_with=args.rerank_with, reranker_kind=reranker.kind, rerank_weight=rerank_weight)
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    if args.metrics_json:
        Path(args.metrics_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics_json).write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    return 0


def _transliterate_command(args):
    model, source_vocab, target_vocab, state = load_run(args.model)
    words = [w for w in args.words if w.strip()]
    if not words:
        raise ValueError(f"Give at least one non-empty word. Received: {args.words!r}")
    unknown = {word: sorted({letter for letter in source_vocab.tokenize([word])[0] if letter not in source_vocab.index})
               for word in words}  # letters outside the model's alphabet (another script, digits...)
    unknown = {word: letters for word, letters in unknown.items() if letters}
    if unknown:
        raise ValueError(
            f"These words hold letters that this {_kind_name(*_saved_kind(state))} model never saw in training; it "
            "would read them as <unk> and guess. Received: "
            + ", ".join(f"{word!r} with {''.join(letters)!r}" for word, letters in unknown.items())
        )
    decoded = transliterate_words(model, source_vocab, target_vocab, words, beam_width=args.beam,
                                  right_to_left=_saved_kind(state)[1])
    for word, prediction in zip(words, decoded["predictions"]):
        print(f"{word}\t{prediction}")
    if args.heatmap:
        import matplotlib

        matplotlib.use("Agg")
        from course_lib.plots.grid import attention_grid

        figure = attention_grid(heatmap_examples(words, decoded, target_vocab, count=len(words)))
        Path(args.heatmap).parent.mkdir(parents=True, exist_ok=True)  # as `translate --heatmap` does
        figure.savefig(args.heatmap, dpi=120)
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
    train_parser.add_argument("--model-seed", type=int,
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
    evaluate_parser.add_argument("--length-penalty", type=float, default=1.0)
    evaluate_parser.add_argument("--rerank-with", metavar="DIR", action="append",
                                 help="a native-roman or right-to-left model (train --direction native-roman / "
                                      "--right-to-left) that reranks the beam; repeat it to average several")
    evaluate_parser.add_argument("--rerank-weight", type=non_negative_float,
                                 help="weight of the rerankers' mean length-normalised log-probability (default: "
                                      "number of --rerank-with / number of --model, one member's vote each)")
    evaluate_parser.add_argument("--metrics-json", type=output_file(), help="write the metrics to this JSON file")
    evaluate_parser.set_defaults(handler=_evaluate_command)

    words_parser = commands.root.add_parser("transliterate", help="transliterate roman words")
    words_parser.add_argument("--model", required=True)
    words_parser.add_argument("--beam", type=positive_int, default=1)
    words_parser.add_argument("--heatmap", type=output_file(*IMAGE_SUFFIXES),
                              help="save attention heat maps of the words to this image (.png, .pdf, .svg, .jpg)")
    words_parser.add_argument("words", nargs="+")
    words_parser.set_defaults(handler=_transliterate_command)
