"""A transliteration run's folder: build, train (or resume), save and load its model.

A run folder holds `model.keras`, the two vocabularies and
`training_state.json` (the config, the progress and the training data's
source), written after every epoch as one checkpoint (`run_files.committing`)
so that training resumes from the last finished one.
"""

import dataclasses
import json
import math
import os
import time
from pathlib import Path

from course_lib.compiling import training_jit_compile
from course_lib.tasks.arguments import check_run_of, same_file
from course_lib.tasks.run_files import committing, finish_commit, load_saved_model, read_json_object
from course_lib.tasks.transliteration.config import TransliterationConfig
from course_lib.tasks.transliteration.data import build_vocabularies, encode_pairs, noise_transform


MODEL_FILE = "model.keras"
SOURCE_VOCAB_FILE = "source_vocab.json"
TARGET_VOCAB_FILE = "target_vocab.json"
STATE_FILE = "training_state.json"


def model_seed_of(config):
    return config.seed if config.model_seed is None else config.model_seed


def build_model(config, source_vocab_size, target_vocab_size, total_steps, steps_per_epoch=None):
    """The compiled Seq2Seq model; with `steps_per_epoch`, its steps per execution divide it."""
    import keras

    from course_lib.losses import SmoothedMaskedTokenLoss
    from course_lib.models.seq2seq import Seq2Seq
    from course_lib.training.fit import steps_per_execution_for

    keras.utils.set_random_seed(model_seed_of(config))
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


def _checkpoint_callback(out_dir, config, source_vocab, target_vocab, started, recorded):
    import keras

    class Checkpoint(keras.callbacks.Callback):
        """Saves model, vocabularies and progress after every epoch, as one checkpoint (`save_run`)."""

        def on_epoch_end(self, epoch, logs=None):
            save_run(out_dir, self.model, source_vocab, target_vocab, config,
                     state={**recorded, "epochs_done": epoch + 1, "seconds": time.perf_counter() - started,
                            "last_logs": {k: float(v) for k, v in (logs or {}).items()}})

    return Checkpoint()


def save_run(out_dir, model, source_vocab, target_vocab, config, state=None):
    """Writes `model.keras`, the two vocabularies and `training_state.json` (the config, and `state` over the
    saved progress) as one checkpoint: an interrupt leaves the earlier checkpoint whole, never a model of one
    epoch beside the state of another."""
    recorded = read_state(out_dir)
    recorded.update(state or {})
    recorded["config"] = dataclasses.asdict(config)
    with committing(out_dir) as staging:
        model.save(staging / MODEL_FILE)
        source_vocab.save(staging / SOURCE_VOCAB_FILE)
        target_vocab.save(staging / TARGET_VOCAB_FILE)
        (staging / STATE_FILE).write_text(json.dumps(recorded, indent=1))


def read_state(run_dir):
    """The run's `training_state.json` as a dict (empty when the folder has none).

    A checkpoint whose saving was interrupted after it was committed is
    completed first; a damaged file is refused with its path.
    """
    finish_commit(run_dir)
    path = Path(run_dir) / STATE_FILE
    return read_json_object(path) if path.exists() else {}


def load_run(model_dir, flag="--model"):
    """Loads `(model, source_vocab, target_vocab, state)` from a training folder.

    `flag` names the option that gave the folder, for the message that refuses another task's run.
    """
    import course_lib.models.seq2seq  # noqa: F401  (registers the classes)
    from course_lib.text.vocabulary import Vocabulary

    model_dir = Path(model_dir)
    check_run_of(model_dir, "transliteration", flag)
    state = read_state(model_dir)  # first: it completes an interrupted checkpoint's commit
    if not (model_dir / MODEL_FILE).exists():
        raise FileNotFoundError(
            f"No trained transliteration model in {os.fspath(model_dir)!r} (expected {MODEL_FILE}); "
            "train one with `course-lib train transliteration --out DIR`."
        )
    model = load_saved_model(model_dir / MODEL_FILE)
    return (
        model,
        Vocabulary.load(model_dir / SOURCE_VOCAB_FILE),
        Vocabulary.load(model_dir / TARGET_VOCAB_FILE),
        state,
    )


def config_from_state(state):
    """The `TransliterationConfig` saved in a run's state (fields it lacks: the dataclass defaults)."""
    return TransliterationConfig(**{
        k: v for k, v in state.get("config", {}).items() if k in TransliterationConfig.__dataclass_fields__
    })


def saved_kind(state):
    """`(direction, right_to_left)` of a saved run (runs saved before these options: roman-native, left to right)."""
    config = state.get("config", {})
    return config.get("direction", "roman-native"), bool(config.get("right_to_left", False))


def kind_name(direction, right_to_left):
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


def train(config, train_pairs, valid_pairs=None, out_dir=None, verbose=2, train_file=None):
    """Trains (or resumes, when `out_dir` holds a checkpoint) a transliteration model.

    With `train_file` (the `--train` file, or `GENERATED`), every checkpoint
    records where the pairs came from, so resuming the run on other data, and
    scoring it on the generated test words, are refused even when the run is
    interrupted.

    Returns:
        A dict with `model`, `source_vocab`, `target_vocab`, `history`
        (per-epoch logs), `seconds` (this call's training time) and
        `epochs_done`.
    """
    from course_lib.data.buckets import as_dataset
    from course_lib.training.fit import build_before_fit

    config.check()
    if not train_pairs:
        raise ValueError("No training pairs. Received: 0 pairs")
    initial_epoch = 0
    if out_dir is not None:
        finish_commit(out_dir)  # an interrupted checkpoint, committed: resumed from it
    if out_dir is not None and (Path(out_dir) / MODEL_FILE).exists():
        model, source_vocab, target_vocab, state = load_run(out_dir)
        initial_epoch = int(state.get("epochs_done", 0))
        kind = saved_kind(state)
        if kind != (config.direction, config.right_to_left):
            raise ValueError(
                f"{os.fspath(out_dir)!r} holds a {kind_name(*kind)} model; it cannot be resumed as "
                f"{kind_name(config.direction, config.right_to_left)}. Received: direction={config.direction!r}, "
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
        source, target, config.batch_size, bucketed=True, seed=model_seed_of(config) + 1000 * initial_epoch, repeat=True,
        transform=noise_transform(config),
    )
    started = time.perf_counter()
    callbacks = [] if out_dir is None else [
        _checkpoint_callback(out_dir, config, source_vocab, target_vocab, started,
                             {} if train_file is None else {"train_file": os.fspath(train_file)})
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


def tokens_lacking(tokens, other_tokens):
    """`(count, shown)`: how many of `tokens` are not among `other_tokens`, and the first 20 of them joined (with
    "..." after them when there are more), for a message."""
    others = set(other_tokens)
    lacking = [token for token in tokens if token not in others]
    return len(lacking), "".join(lacking[:20]) + ("..." if len(lacking) > 20 else "")


def vocabulary_difference(side, tokens, other_tokens, name, other_name):
    """What differs between two vocabularies' token lists, for a message; None when they are the same.

    `side` names the tokens ("source letters"), `name` and `other_name` where
    each list comes from (a folder, a flag).
    """
    if list(tokens) == list(other_tokens):
        return None
    only = []
    for where, these, those in ((name, tokens, other_tokens), (other_name, other_tokens, tokens)):
        count, shown = tokens_lacking(these, those)
        if count:
            only.append(f"{count} only in {where} ({shown!r})")
    return f"{side}: " + (", ".join(only) if only else "the same ones in another order (other ids)")


def load_alike(model_dirs, flag="--model"):
    """Loads one training folder, or several whose models must be interchangeable.

    Several must write in the same direction and order, and share vocabularies
    (be trained on the same file): an ensemble's members, or the models of one
    `Reranker`. A folder given twice is refused: it would count twice. Returns
    the list of `load_run` results. `flag` names the option that gave the
    folders (`--model`, `--rerank-with`), for the messages.
    """
    model_dirs = [model_dirs] if isinstance(model_dirs, (str, os.PathLike)) else list(model_dirs)
    if not model_dirs:
        raise ValueError("Need at least one model folder. Received: []")
    for later, directory in enumerate(model_dirs):
        repeated = next((earlier for earlier in model_dirs[:later] if same_file(earlier, directory)), None)
        if repeated is not None:
            same = "" if os.fspath(repeated) == os.fspath(directory) else \
                f" (the same folder as {os.fspath(repeated)!r})"
            raise ValueError(
                f"{os.fspath(directory)!r} is given twice{same}; each model counts once, a repeat would weigh it "
                "double. Received: "
                + " ".join(f"{flag} {os.fspath(folder)!r}" for folder in model_dirs)
            )
    runs = [load_run(directory, flag) for directory in model_dirs]
    _, source_vocab, target_vocab, state = runs[0]
    for directory, (_, other_source, other_target, other_state) in zip(model_dirs[1:], runs[1:]):
        if saved_kind(other_state) != saved_kind(state):
            raise ValueError(
                "These models must write in the same direction. Received: "
                f"{os.fspath(directory)!r} is {kind_name(*saved_kind(other_state))}, "
                f"{os.fspath(model_dirs[0])!r} is {kind_name(*saved_kind(state))}"
            )
        differ = [difference for difference in (
            vocabulary_difference(side, vocab.tokens, other.tokens, repr(os.fspath(model_dirs[0])),
                                  repr(os.fspath(directory)))
            for side, vocab, other in (("source letters", source_vocab, other_source),
                                       ("target letters", target_vocab, other_target))
        ) if difference]
        if differ:
            raise ValueError(
                "These models must be trained on the same vocabularies (the same training file). "
                f"Received: {os.fspath(directory)!r} differs from {os.fspath(model_dirs[0])!r} in its "
                + "; ".join(differ)
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
