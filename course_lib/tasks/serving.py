"""Exporting a trained sequence-to-sequence model as a strings-in, strings-out SavedModel.

The exported `tf.Module` runs the whole pipeline inside one TensorFlow graph:

    raw strings -> tensorflow-text normalisation -> tokens -> ids (`<unk>` for
    unknown tokens) -> encoder -> greedy decoding -> ids -> tokens -> joined string

so the SavedModel can be served without `course_lib` installed
(`tf.saved_model.load(path).translate(tf.constant(["I am going home"]))`).
It works for any `Seq2Seq` with `Vocabulary` objects on both sides: word
level (translation, tokens joined by spaces) or character level
(transliteration, characters joined without a separator). An empty or
white-space-only input string gives an empty output string.
"""

import os
import shutil
from pathlib import Path

from course_lib.tasks.arguments import RUN_MARKER
from course_lib.text.vocabulary import CONTROL_IDS, GO, PAD, STOP, UNK


def _string_module_class():
    # TensorFlow and the decoder load here, on first export, not when the command line imports this module.
    import tensorflow as tf

    from course_lib.decoding.greedy import greedy_decode
    from course_lib.text.tokenize import tokenize_tensor

    class StringSeq2Seq(tf.Module):
        """`translate(texts)`: a 1-D `tf.string` tensor in, a 1-D `tf.string` tensor out."""

        def __init__(self, model, source_vocab, target_vocab, max_length=None):
            super().__init__(name="string_seq2seq")
            self.model = model
            self.max_length = int(model.max_output_length if max_length is None else max_length)
            self.source_settings = (source_vocab.level, source_vocab.lowercase,
                                    source_vocab.split_punctuation, source_vocab.form)
            self.separator = target_vocab.separator
            # As `Vocabulary.lookup`: the control tokens written as text are unknown words.
            first_text_id = len(CONTROL_IDS)
            self.source_table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(source_vocab.tokens[first_text_id:]),
                    tf.range(first_text_id, len(source_vocab), dtype=tf.int64),
                ),
                default_value=UNK,
            )
            self.target_tokens = tf.Variable(tf.constant(target_vocab.tokens), trainable=False)

        def _greedy(self, source):
            model = self.model
            encoder_outputs, initial_state, source_mask = model.encode(source, training=False)
            memory = model.decoder.prepare_memory(encoder_outputs, initial_state, source_mask)
            tokens, _, _ = greedy_decode(
                model.decoder, memory, model.decoder.start_state(initial_state),
                model.start_id, model.stop_id, self.max_length, pad_id=model.pad_id,
            )
            return tokens

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def translate(self, texts):
            level, lowercase, split_punctuation, form = self.source_settings
            tokens = tokenize_tensor(texts, level, lowercase, split_punctuation, form)  # (batch, None)
            ids = tf.cast(self.source_table.lookup(tokens), tf.int32)  # ragged (batch, None)
            source = ids.to_tensor(default_value=PAD)  # (batch, src_len)
            source = tf.pad(source, [[0, 0], [0, 1]])  # at least one column, even for empty input
            output_ids = self._greedy(source)  # (batch, max_length)
            before_stop = tf.equal(tf.cumsum(tf.cast(tf.equal(output_ids, STOP), tf.int32), axis=1), 0)
            keep = before_stop & tf.not_equal(output_ids, PAD) & tf.not_equal(output_ids, GO)
            words = tf.ragged.boolean_mask(tf.gather(self.target_tokens, output_ids), keep)
            joined = tf.strings.reduce_join(words, axis=1, separator=self.separator)  # (batch,)
            empty_input = tf.equal(tokens.row_lengths(), 0)
            return tf.where(empty_input, tf.constant(""), joined)

    return StringSeq2Seq


def string_module(model, source_vocab, target_vocab, max_length=None):
    """The `tf.Module` with a `translate(tf.string[None]) -> tf.string[None]` function.

    `max_length`: the most output tokens (default: the model's `max_output_length`).
    """
    import keras

    from course_lib.layers.masking import check_count

    if max_length is not None:  # 0 used to mean the default, and 2.7 was cut to 2
        check_count(max_length, "max_length")
    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise ValueError(
            "A strings-in, strings-out SavedModel runs the model inside a TensorFlow graph, so it needs "
            f"the TensorFlow backend (KERAS_BACKEND=tensorflow). Received: backend={backend}"
        )
    return _string_module_class()(model, source_vocab, target_vocab, max_length)


def check_export_folder(path, overwrite=False):
    """Refuses an export folder whose files the SavedModel would mix with or replace.

    A folder that holds a course run (its `course_run.json` marker, or a
    `.keras` model: runs saved before the marker existed have none) is always
    refused: the SavedModel's `saved_model.pb` and `variables/` would sit among
    the run's `model.keras` and `state.json`. An earlier export (a folder with
    `saved_model.pb`) is refused unless `overwrite`, since the export replaces
    the folder whole. Any other non-empty folder is refused even with
    `overwrite`: replacing it would delete files that are not an export. A new
    or empty folder is fine.

    Raises:
        ValueError: naming the path and what it holds.
    """
    folder = os.fspath(path)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"The export path must be a folder, and {folder!r} is a file. Received: path={folder!r}")
    found = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    if not found:
        return  # a new or empty folder
    run_files = [name for name in found if name == RUN_MARKER or name.endswith(".keras")]
    if run_files:
        raise ValueError(
            f"{folder!r} holds a course run ({', '.join(run_files)}); a SavedModel written there would mix with "
            f"the run's files. Export to a folder of its own, e.g. {folder.rstrip(os.sep) + '-savedmodel'!r}. "
            f"Received: path={folder!r}"
        )
    listing = f"{', '.join(found[:5])}{', ...' if len(found) > 5 else ''}"
    if "saved_model.pb" not in found:
        raise ValueError(
            f"{folder!r} is not empty ({listing}) and holds no earlier export (no saved_model.pb); exporting there "
            f"would delete its files. Choose a new or empty folder. Received: path={folder!r}"
        )
    if not overwrite:
        raise ValueError(
            f"{folder!r} is not empty ({listing}); exporting would replace the earlier export it holds. Choose a "
            f"new or empty folder, or pass overwrite=True. Received: path={folder!r}"
        )


def export_serving(model, source_vocab, target_vocab, path, max_length=None, overwrite=False):
    """Writes a SavedModel at `path` whose `translate` maps raw strings to strings.

    `path` must be a new or empty folder, or, with `overwrite=True`, an
    earlier export, which it replaces; see `check_export_folder`. It is checked
    before anything is built or written. The SavedModel is written into a
    hidden folder beside `path` and then renamed into place, so a failed or
    interrupted export leaves an earlier one as it was (an interrupt between
    the two renames, a moment long, leaves it beside `path` as
    `.<name>.replaced-<pid>`).

    Returns:
        The exported module (usable directly, too).
    """
    import tensorflow as tf

    check_export_folder(path, overwrite)
    module = string_module(model, source_vocab, target_vocab, max_length)
    module.translate.get_concrete_function()
    target = Path(os.path.abspath(path))
    staging, earlier = (target.with_name(f".{target.name}.{what}-{os.getpid()}") for what in ("export", "replaced"))
    shutil.rmtree(staging, ignore_errors=True)  # left by an interrupted export of an earlier process
    try:
        tf.saved_model.save(module, os.fspath(staging), signatures={"serving_default": module.translate})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():  # empty, or an earlier export (checked above)
        os.replace(target, earlier)
    os.replace(staging, target)
    shutil.rmtree(earlier, ignore_errors=True)
    return module


def load_serving(path):
    """Loads an exported SavedModel; returns a function `list[str] -> list[str]`."""
    import tensorflow as tf

    if not os.path.isdir(os.fspath(path)):
        raise FileNotFoundError(f"No SavedModel folder at {os.fspath(path)!r}")
    loaded = tf.saved_model.load(os.fspath(path))

    def translate(texts):
        if isinstance(texts, str):
            raise ValueError(f"`texts` must be a list of strings. Received: {texts!r:.80}")
        outputs = loaded.translate(tf.constant(list(texts), dtype=tf.string))
        return [value.decode("utf-8") for value in outputs.numpy().tolist()]

    translate.module = loaded
    return translate
