"""The settings of a transliteration run, per profile, and the two directions a model can write."""

import dataclasses

from course_lib.training.profiles import check_ranges, pick, with_overrides


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
    beam_width: int = 5  # notebook 06 decodes with it (the command line takes --beam)
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
        with_overrides(config, overrides, "TransliterationConfig")
        return config

    def check(self):
        """Raises ValueError for a setting out of its range; `train` calls it before building anything."""
        check_direction(self.direction)
        check_ranges(self, "TransliterationConfig",
                     positive_integers=("epochs", "batch_size", "embedding_dim", "units", "beam_width",
                                        "max_output_length", "train_words", "valid_words", "test_words",
                                        "steps_per_execution"),
                     positive=("learning_rate", "clipnorm"),
                     fractions=("final_learning_rate_fraction", "source_noise", "target_noise", "label_smoothing",
                                "drop_vowel_length"))


DIRECTIONS = ("roman-native", "native-roman")


def check_direction(direction):
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {DIRECTIONS}. Received: direction={direction!r}")
    return direction
