"""A response generator whose context encoder is the hierarchical encoder.

The same `HierarchicalAttentionEncoder` that classifies documents reads a
dialog context (utterances of words). Its outputs condition a GRU decoder:

* `attention=False`: `PlainGRUDecoder`, `s_0 = tanh(W_bridge s + b_bridge)`
  from the document (context) vector `s` and nothing else;
* `attention=True`: `AttentionGRUDecoder` with the same `s_0`, and at every
  step Bahdanau attention over the utterance-level states `h_i` (one per
  utterance), so the decoder can go back to the utterance it needs.
"""

import keras
import numpy as np
from keras import ops

from course_lib.compiling import compile_once
from course_lib.decoders.attention_gru import AttentionGRUDecoder
from course_lib.decoders.plain_gru import PlainGRUDecoder
from course_lib.decoding.greedy import greedy_decode
from course_lib.encoders.hierarchical import HierarchicalAttentionEncoder
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import check_count, check_flag, check_special_ids, check_token_range
from course_lib.models.checking_ids import ChecksTokenIds
from course_lib.models.building import BuildsSublayers
from course_lib.models.keeping_weights import KeepsWeightsOnError
from course_lib.models.token_compile import CompilesWithTokenDefaults


@keras.saving.register_keras_serializable(package="course_lib")
class HierarchicalDialogModel(ChecksTokenIds, BuildsSublayers, KeepsWeightsOnError, CompilesWithTokenDefaults, keras.Model):
    """Context (utterances x words) -> response, with a hierarchical encoder.

    Args:
        vocab_size: word ids shared by contexts and responses (0 = padding).
        embedding_dim: embedding size (encoder and decoder).
        word_units, sentence_units: GRU sizes per direction of the encoder.
        units: decoder state size.
        attention: attend over utterance states (see the module docstring).
        start_id, stop_id, pad_id: special ids.
        max_output_length: default decoding length limit.

    Call arguments:
        inputs: `{"context": (batch, utterances, words), "target_in": (batch, tgt_len)}`.
        training: Python boolean, passed to the encoder and the decoder.

    Returns:
        Logits `(batch, tgt_len, vocab_size)`.
    """

    def __init__(self, vocab_size, embedding_dim=32, word_units=32, sentence_units=32, units=64,
                 attention=True, start_id=1, stop_id=2, pad_id=0, max_output_length=12, **kwargs):
        super().__init__(**kwargs)
        # Plain ints: a NumPy integer (`len` of an array's unique ids) is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.word_units = check_count(word_units, "word_units")
        self.sentence_units = check_count(sentence_units, "sentence_units")
        self.units = check_count(units, "units")
        self.attention = check_flag(attention, "attention")
        self.start_id, self.stop_id, self.pad_id = check_special_ids(self.vocab_size, start_id, stop_id, pad_id)
        self.max_output_length = check_count(max_output_length, "max_output_length")
        self.encoder = HierarchicalAttentionEncoder(
            self.vocab_size, self.embedding_dim, self.word_units, self.sentence_units, dtype=self.dtype_policy,
            name="context_encoder",
        )
        self.bridge = keras.layers.Dense(self.units, activation="tanh", dtype=self.dtype_policy, name="bridge")
        if attention:
            self.decoder = AttentionGRUDecoder(
                self.vocab_size, self.embedding_dim, self.units, dtype=self.dtype_policy, name="decoder"
            )
        else:
            self.decoder = PlainGRUDecoder(
                self.vocab_size, self.embedding_dim, self.units, option=1, dtype=self.dtype_policy, name="decoder"
            )
        self._greedy_functions = {}  # max_length -> compiled greedy decoder
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def encode(self, context, training=None):
        """Returns `(utterance_states, s_0, utterance_mask, encoded)`."""
        if not self.built:  # `encode` bypasses the encoder's `__call__`; building the model builds it, once
            self.build()
        encoded = self.encoder.encode(context, training=training)
        initial_state = self.bridge(encoded["document"])  # (batch, units)
        return encoded["sentence_states"], initial_state, encoded["sentence_mask"], encoded

    def forward(self, context, target_in, training=None):
        """Teacher-forced pass: `(logits, alignments over utterances)`."""
        states, initial_state, mask, _ = self.encode(context, training)
        return self.mark_built(self.decoder(target_in, states, initial_state, source_mask=mask, training=training))

    def call(self, inputs, training=None):
        if not isinstance(inputs, dict) or "context" not in inputs or "target_in" not in inputs:
            received = sorted(inputs) if isinstance(inputs, dict) else type(inputs).__name__
            raise ValueError(
                f"HierarchicalDialogModel expects {{'context', 'target_in'}}. Received: {received}"
            )
        return self.forward(inputs["context"], inputs["target_in"], training)[0]

    def _greedy(self, context, max_length):
        states, initial_state, mask, encoded = self.encode(context, training=False)
        memory = self.decoder.prepare_memory(states, initial_state, mask)
        tokens, alignments, _ = greedy_decode(
            self.decoder, memory, self.decoder.start_state(initial_state),
            self.start_id, self.stop_id, max_length, pad_id=self.pad_id,
        )
        # The encoder's weights in the alignments' dtype: float32 under a mixed policy, float64 under float64.
        return tokens, alignments, ops.cast(encoded["sentence_weights"], alignments.dtype)

    def generate(self, context, max_length=None):
        """Greedy responses for a `(batch, utterances, words)` int array.

        Returns:
            A dict of NumPy arrays: `tokens (batch, max_length)`, `alignments`
            `(batch, max_length, utterances)` (decoder attention; zeros for the
            plain decoder) and `utterance_weights` `(batch, utterances)` (the
            encoder's own sentence-level attention).
        """
        context = np.asarray(context)
        if context.ndim != 3 or not np.issubdtype(context.dtype, np.integer):
            raise ValueError(
                "`context` must be an integer array (batch, utterances, words). "
                f"Received: context.shape={context.shape}, dtype={context.dtype}"
            )
        check_token_range(context, self.vocab_size, "context")
        if 0 in context.shape[1:]:
            raise ValueError(
                f"`context` needs at least one utterance of one word. Received: context.shape={context.shape}"
            )
        max_length = check_count(self.max_output_length if max_length is None else max_length, "max_length")
        if not self.built:  # eagerly, before the compiled pass (and so that a later call does not build again)
            self.build()
        if max_length not in self._greedy_functions:
            self._greedy_functions[max_length] = compile_once(
                lambda batch: self._greedy(batch, max_length), [((None, None, None), "int32")]
            )
        tokens, alignments, weights = self._greedy_functions[max_length](context.astype("int32"))
        return {"tokens": np.asarray(tokens), "alignments": np.asarray(alignments),
                "utterance_weights": np.asarray(weights)}

    def token_id_sizes(self):
        return {"context": self.vocab_size, "target_in": self.vocab_size, "targets": self.vocab_size}

    def build_sublayers(self):
        """Builds the context encoder, the bridge and the decoder, for any number of dialogs, utterances and words."""
        self.encoder.build((None, None, None))  # (batch, utterances, words)
        self.bridge.build((None, self.encoder.output_dim))
        states_shape = (None, None, self.encoder.output_dim)  # (batch, utterances, D)
        if self.attention:
            self.decoder.build((None, None), states_shape)
        else:
            self.decoder.build((None, None), states_shape, (None, self.units))

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "word_units": self.word_units,
            "sentence_units": self.sentence_units,
            "units": self.units,
            "attention": self.attention,
            "start_id": self.start_id,
            "stop_id": self.stop_id,
            "pad_id": self.pad_id,
            "max_output_length": self.max_output_length,
        }


__all__ = ["HierarchicalDialogModel"]
