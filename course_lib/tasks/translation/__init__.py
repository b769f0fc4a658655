"""Hindi–English translation with a bidirectional GRU encoder and attention.

The lecture's attention model with three changes from Bahdanau et al.: a
bidirectional GRU encoder, a bridge `s_0 = tanh(W_bridge [h_fwd_T; h_bwd_1] + b)`
in place of the lecture's `s_0 = h_T`, and an output layer that reads
`[s_t; c_t; e(y_{t-1})]` (the deep output) instead of `s_t` alone. Padding is
masked throughout. Word-level vocabularies; English is lower-cased,
punctuation split on both sides.

Data: the generated corpus of `course_lib.data.hindi_english` by default, or
Tatoeba/Anki files (`English<TAB>Hindi<TAB>attribution`). Both directions,
`en-hi` and `hi-en`, use the same code.

A trained model lives in a folder:

    model.keras          the Seq2Seq model (with its optimizer state)
    source_vocab.json    the source vocabulary and its text settings
    target_vocab.json
    state.json           direction, configuration, epochs done, history
    train_data.json      (from the command line) the file it was trained on, or the generated corpus

Training writes the folder after every epoch and, when started again on a
folder that holds one, resumes from its last epoch.

The package, one job per module (each imports only from those above it):

- `config`: `TranslationConfig` per profile, the languages of a direction;
- `data`: texts, vocabularies and id arrays of pairs; oracle weights; references;
- `translator`: the model of a configuration, and `Translator` (strings in,
  strings out; saved as the folder above);
- `training`: `train`, which also resumes;
- `evaluation`: BLEU, chrF, exact match, alignment agreement (overall, by
  word, share over a set of words), BLEU by source length, heat maps;
- `cli`: the `train translation`, `evaluate translation`, `translate` and
  `split-translation` commands.

Everything public is importable from here:
`from course_lib.tasks import translation as task; task.train(...)`.
"""

from course_lib.tasks.translation.cli import TRAIN_DATA_FILE, register_cli
from course_lib.tasks.translation.config import LANGUAGE_SETTINGS, TranslationConfig, languages
from course_lib.tasks.translation.data import (
    build_vocabularies, encode_pairs, oracle_alignments, references_by_source, source_target_texts,
)
from course_lib.tasks.translation.evaluation import (
    agreement_by_word, agreement_share, alignment_agreement, bleu_by_length, evaluate, heatmap, sources_by_length,
)
from course_lib.tasks.translation.training import train
from course_lib.tasks.translation.translator import (
    MODEL_FILE, SOURCE_VOCAB, STATE_FILE, TARGET_VOCAB, Translator, build_model, has_checkpoint,
)

__all__ = [
    "LANGUAGE_SETTINGS", "MODEL_FILE", "SOURCE_VOCAB", "STATE_FILE", "TARGET_VOCAB", "TRAIN_DATA_FILE",
    "TranslationConfig", "Translator", "agreement_by_word", "agreement_share", "alignment_agreement", "bleu_by_length",
    "build_model", "build_vocabularies", "encode_pairs", "evaluate", "has_checkpoint", "heatmap", "languages",
    "oracle_alignments", "references_by_source", "register_cli", "source_target_texts", "sources_by_length",
    "train",
]
