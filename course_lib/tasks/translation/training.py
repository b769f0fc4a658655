"""Training a translator, or resuming one from its folder, with a checkpoint after every epoch."""

import os
import time

from course_lib.data import hindi_english
from course_lib.tasks.arguments import check_resume_keeps, plural
from course_lib.tasks.translation.config import check_supervision
from course_lib.tasks.translation.data import build_vocabularies, encode_pairs, oracle_alignments
from course_lib.tasks.translation.translator import Translator, build_model, has_checkpoint


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


RESUMED_DATA_SETTINGS = ("seed", "max_train", "batch_size", "supervised_pairs")  # what the epochs to come read


def check_same_data(out_dir, saved, config):
    """Refuses to resume a run with settings that change its data: `seed` re-splits the generated corpus (the
    run would train on its own test pairs) and orders the batches, `max_train` and `supervised_pairs` choose the
    pairs, `batch_size` the steps."""
    check_resume_keeps(os.fspath(out_dir), {name: getattr(saved, name) for name in RESUMED_DATA_SETTINGS},
                       {name: getattr(config, name) for name in RESUMED_DATA_SETTINGS},
                       because="needs the same data and batches (keep these, or use another --out folder)",
                       none_is_left_out=False)  # max_train=None: every pair, supervised_pairs=None: all of them


def train(config, train_pairs=None, valid_pairs=None, out_dir=None, verbose=2):
    """Trains (or resumes) a translator.

    Args:
        config: a `TranslationConfig` (`epochs` is the total to reach).
        train_pairs, valid_pairs: objects with `.english`/`.hindi`; default the
            generated corpus split with `config.seed`.
        out_dir: folder written after every epoch; when it already holds a
            checkpoint, training resumes from its last epoch (the saved model,
            optimizer state and vocabularies win over `config`'s sizes;
            `config` must keep the run's `seed`, `max_train`, `batch_size`
            and `supervised_pairs`, which choose its data).
        verbose: Keras `fit` verbosity (0, 1 or 2); 0 also silences the
            lines about resuming or having nothing left to do.

    Returns:
        `(translator, seconds)`.
    """
    from course_lib.data.tf_data import array_dataset
    from course_lib.training.fit import build_before_fit

    config.check()
    translator = None
    if has_checkpoint(out_dir):  # checked before the corpus is read: the `translation` CLI relies on this check
        translator = Translator.load(out_dir)
        if translator.direction != config.direction:
            raise ValueError(
                f"{os.fspath(out_dir)!r} holds a {translator.direction} model; asked for {config.direction}. "
                "Use another --out folder."
            )
        check_same_data(out_dir, translator.config, config)
        translator.config.epochs = config.epochs
    if train_pairs is None:
        parts = hindi_english.load_corpus(seed=config.seed, max_train=config.max_train)
        train_pairs = parts["train"]
        if valid_pairs is None:
            valid_pairs = parts["valid"]
    elif config.max_train is not None:
        train_pairs = list(train_pairs)[: config.max_train]
    if not train_pairs:
        raise ValueError(f"No training pairs. Received: len(train_pairs)=0, max_train={config.max_train}")
    if translator is not None:
        if verbose:
            print(f"Resuming from {os.fspath(out_dir)!r} after epoch {translator.epochs_done}.")
    else:
        source_vocab, target_vocab = build_vocabularies(train_pairs, config.direction)
        model = build_model(config, len(source_vocab), len(target_vocab))
        translator = Translator(model, source_vocab, target_vocab, config)
    if translator.epochs_done >= config.epochs:
        if verbose:
            print(f"Already trained for {plural(translator.epochs_done, 'epoch')} (asked {config.epochs}); "
                  "nothing to do.")
        return translator, 0.0
    inputs, target_out = encode_pairs(train_pairs, config.direction, translator.source_vocab, translator.target_vocab)
    check_supervision(config.supervised_pairs, translator.model.alignment_loss_weight)
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
