"""Transliteration: Roman letters in, Devanagari letters out, with attention.

A character-level sequence-to-sequence model: a bidirectional GRU encoder
reads the roman word ("hindi"), the bridge `s_0 = tanh(W_bridge [h_fwd_T; h_bwd_1] + b_bridge)`
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

The package, one job per module (each imports only from those above it):

- `config`: `TransliterationConfig` per profile, `DIRECTIONS`;
- `data`: pairs from files or the generated set, vocabularies, id arrays, token noise;
- `runs`: build, train or resume, save and load a run folder, ensembles;
- `reranking`: a channel or right-to-left model that re-scores the beam;
- `decoding`: `transliterate_words`, `evaluate`, heat-map examples;
- `errors`: kinds of spelling mistake, where in the word, accuracy by word length;
- `cli`: the `train transliteration`, `evaluate transliteration` and
  `transliterate` commands.

Everything public is importable from here:
`from course_lib.tasks import transliteration as task; task.train(...)`.
"""

from course_lib.tasks.transliteration.cli import register_cli
from course_lib.tasks.transliteration.config import DIRECTIONS, TransliterationConfig, check_direction
from course_lib.tasks.transliteration.data import (
    build_vocabularies, encode_pairs, generated_splits, load_pairs, noise_transform, sides,
    test_items, token_noise,
)
from course_lib.tasks.transliteration.decoding import evaluate, heatmap_examples, transliterate_words
from course_lib.tasks.transliteration.errors import (
    ERROR_KINDS, accuracy_by_length, error_kinds, error_positions, error_summary, wrong_words,
)
from course_lib.tasks.transliteration.reranking import (
    RERANKER_KINDS, Reranker, equal_votes_weight, load_reranker, rerank, reranker_log_probs,
)
from course_lib.tasks.transliteration.runs import (
    MODEL_FILE, SOURCE_VOCAB_FILE, STATE_FILE, TARGET_VOCAB_FILE, build_model, config_from_state, kind_name,
    load_alike, load_ensemble, load_run, model_seed_of, read_state, save_run, saved_kind, train,
)

__all__ = [
    "DIRECTIONS", "ERROR_KINDS", "MODEL_FILE", "RERANKER_KINDS", "SOURCE_VOCAB_FILE", "STATE_FILE",
    "TARGET_VOCAB_FILE", "accuracy_by_length", "build_model", "build_vocabularies", "check_direction",
    "config_from_state", "encode_pairs", "equal_votes_weight", "error_kinds", "error_positions", "error_summary",
    "evaluate", "generated_splits", "heatmap_examples", "kind_name", "load_alike", "load_ensemble", "load_pairs",
    "load_reranker", "load_run", "model_seed_of", "noise_transform", "read_state",
    "register_cli", "rerank", "Reranker", "reranker_log_probs", "save_run", "saved_kind", "sides", "test_items",
    "token_noise", "train", "transliterate_words", "TransliterationConfig", "wrong_words",
]
