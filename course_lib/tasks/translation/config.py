"""The translation model's size and training budget per profile, and the two directions' languages."""

import dataclasses

from course_lib.data import hindi_english
from course_lib.training.profiles import check_ranges, pick, with_overrides

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
        with_overrides(base, overrides, "TranslationConfig")
        hindi_english.check_direction(base.direction)
        return base

    def check(self):
        """Raises ValueError for a setting out of its range; `train` calls it before building anything."""
        hindi_english.check_direction(self.direction)
        check_ranges(self, "TranslationConfig",
                     positive_integers=("epochs", "batch_size", "embedding_dim", "units", "attention_units",
                                        "max_output_length", "steps_per_execution", "max_train", "supervised_pairs"),
                     positive=("learning_rate",), non_negative=("alignment_loss_weight",))
        if not self.attention:  # both used to be dropped for a plain model while state.json recorded them
            # Seq2Seq refuses them too; checked here so that the command line refuses before claiming a folder.
            from course_lib.layers.masking import check_unread_options  # imports Keras: not at `course-lib --help`

            check_unread_options(
                {"alignment_loss_weight": self.alignment_loss_weight, "conditional": self.conditional},
                {"alignment_loss_weight": 0.0, "conditional": False},
                "`alignment_loss_weight` and `conditional` of TranslationConfig apply to the attentional decoder "
                "only (a plain model has no attention to supervise or condition)", attention=False,
            )


def check_supervision(supervised_pairs, alignment_loss_weight):
    """Refuses `supervised_pairs` for a model whose attention is not supervised (`alignment_loss_weight` 0)."""
    if supervised_pairs is not None and not alignment_loss_weight:
        raise ValueError(
            "`supervised_pairs` limits the supervision of attention, which is off. "
            f"Received: supervised_pairs={supervised_pairs}, alignment_loss_weight=0"
        )


def languages(direction):
    hindi_english.check_direction(direction)
    return direction.split("-")
