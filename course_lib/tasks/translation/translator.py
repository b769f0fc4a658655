"""The Seq2Seq model of a configuration, and `Translator`: a model with its vocabularies, saved as a folder."""

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.tasks.arguments import check_run_of
from course_lib.tasks.run_files import committing, finish_commit, load_saved_model, read_json_object
from course_lib.tasks.translation.config import TranslationConfig
from course_lib.tasks.translation.data import encode_pairs
from course_lib.text.vocabulary import STOP, Vocabulary

MODEL_FILE, SOURCE_VOCAB, TARGET_VOCAB, STATE_FILE = (
    "model.keras", "source_vocab.json", "target_vocab.json", "state.json",
)


def build_model(config, source_vocab_size, target_vocab_size):
    import keras

    from course_lib.models.seq2seq import Seq2Seq

    keras.utils.set_random_seed(config.seed)
    model = Seq2Seq(
        source_vocab_size, target_vocab_size,
        embedding_dim=config.embedding_dim, units=config.units, attention=config.attention,
        bidirectional=True, deep_output=config.attention,
        attention_units=config.attention_units if config.attention else None,
        max_output_length=config.max_output_length,
        conditional=config.conditional,  # with attention=False, `TranslationConfig.check` and Seq2Seq refuse
        alignment_loss_weight=config.alignment_loss_weight,  # both rather than drop them
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
        """Writes the model, the vocabularies and `state.json` as one checkpoint (`run_files.committing`).

        Written one by one, an interrupt between them left a model one epoch
        ahead of the state, and the resumed run trained more epochs than it
        recorded.
        """
        with committing(directory) as staging:
            self.model.save(staging / MODEL_FILE)
            self.source_vocab.save(staging / SOURCE_VOCAB)
            self.target_vocab.save(staging / TARGET_VOCAB)
            state = {
                "task": "translation",
                "config": dataclasses.asdict(self.config),
                "epochs_done": self.epochs_done,
                "history": self.history,
            }
            (staging / STATE_FILE).write_text(json.dumps(state, indent=1))

    @classmethod
    def load(cls, directory, flag="--model"):
        """The translator saved in `directory`; `flag` names the option that gave it, for the messages.

        Another task's run (its `course_run.json` says so) is refused by name: it
        used to be reported as a translation model with files missing.
        """
        directory = Path(directory)
        check_run_of(directory, "translation", flag)
        finish_commit(directory)  # a checkpoint committed but not yet in place: its files, not the earlier ones
        missing = [name for name in (MODEL_FILE, SOURCE_VOCAB, TARGET_VOCAB, STATE_FILE)
                   if not (directory / name).exists()]
        if missing:
            raise FileNotFoundError(f"{os.fspath(directory)!r} holds no trained translation model (missing {missing}).")
        state = read_state(directory)
        if state.get("task") != "translation":
            raise ValueError(f"{os.fspath(directory)!r} holds a model for task {state.get('task')!r}, not translation.")
        import course_lib.models.seq2seq  # noqa: F401  (registers the classes)

        model = load_saved_model(directory / MODEL_FILE)
        return cls(model, Vocabulary.load(directory / SOURCE_VOCAB), Vocabulary.load(directory / TARGET_VOCAB),
                   TranslationConfig(**state["config"]), state["epochs_done"], state.get("history"))


def read_state(directory):
    """The run's `state.json` as a dict, refusing a damaged one by name.

    It must be a JSON object with the run's `config` (an object) and
    `epochs_done`; cut short or edited by hand, it used to end in a
    `KeyError` or a bare JSON message that named no file.
    """
    return read_json_object(Path(directory) / STATE_FILE,
                            [("config", dict, "an object"), ("epochs_done", int, "a whole number")])


def has_checkpoint(directory):
    """True when `directory` holds a saved translator (a checkpoint whose saving was interrupted after it
    was committed is completed first, so that it counts)."""
    if directory is None:
        return False
    finish_commit(directory)
    return (Path(directory) / STATE_FILE).exists()
