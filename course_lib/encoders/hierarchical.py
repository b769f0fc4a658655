"""Hierarchical encoders for sequences of sequences (documents, dialogs).

A document is `(sentences, words)` token ids. Both encoders fold the
sentences into the batch, `(batch * sentences, words)`, run a word-level GRU,
unfold the result to one vector per sentence and run a sentence-level GRU.
The folding is done here by hand (not with `TimeDistributed`) so that the
word mask and the sentence mask are carried explicitly through both levels:
padded words and padded sentences are skipped by the GRUs and get exactly
zero attention, and a sentence (or document) that is all padding yields zeros,
never NaN.

Token id 0 is padding. A sentence is padding when all its words are.
"""

import keras
import numpy as np
from keras import ops

from course_lib.encoders.bidirectional import make_bidirectional
from course_lib.layers.attention_pooling import AttentionPooling
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import (
    check_count, check_flag, check_known_token_range, check_token_ids, run_recurrent,
)


def check_documents(documents, name="documents"):
    """Raises ValueError unless `documents` is an integer `(batch, sentences, words)` tensor."""
    check_token_ids(documents, name, axes=("batch", "sentences", "words"))


def document_masks(documents):
    """Returns `(word_mask, sentence_mask)`: `(batch, sentences, words)` and `(batch, sentences)`."""
    word_mask = ops.not_equal(documents, 0)  # (batch, sentences, words)
    sentence_mask = ops.any(word_mask, axis=-1)  # (batch, sentences)
    return word_mask, sentence_mask


@keras.saving.register_keras_serializable(package="course_lib")
class StateDropoutGRUCell(keras.layers.GRUCell):
    """A GRU cell that, in training, drops units of the previous state `h_{i-1}` afresh at every step.

    Keras's `recurrent_dropout` draws one mask per sequence, so the units it
    keeps carry information through every step unharmed. Dropping the
    state itself with new noise at each step makes what is carried from step
    to step fade with distance, while the current input arrives intact.

    The kept units are not rescaled by `1 / (1 - p)`, unlike standard (inverted)
    dropout: a GRU state is a gated average of values in (-1, 1), which the
    rescaling would push outside that range. The price is a mismatch: in
    training the carried state is `(1 - p) h` on average, at inference `h`
    (docs/documents.md gives the accuracies measured with p = 0.5).

    Run it in a `StateDropoutRNN`, which draws every step's keep mask before
    the loop and hands each step its mask with the inputs, so the loop holds
    no random state (as Keras's own RNN dropout does; JAX refuses a random
    generator's update inside a compiled loop). In a plain `keras.layers.RNN`
    the cell draws the mask itself at each step, which works on TensorFlow
    only. (The hierarchical encoders build their GRUs from their own config,
    so a model saved before 4 Dec 2026, when they used a plain RNN, loads
    with a `StateDropoutRNN`, its weights and predictions unchanged.)

    Args:
        units: state size.
        state_dropout: probability of zeroing each unit of `h_{i-1}` at each step.
        seed: optional seed of the noise: of the state dropout here, and of
            `GRUCell`'s own `dropout` and `recurrent_dropout` (each from its
            own generator).
        **kwargs: the other arguments of `keras.layers.GRUCell`.

    Call arguments:
        inputs: `(batch, features)`, or `(batch, features + units)` with the
            step's keep mask (1 = keep, 0 = drop) as the last `units` columns.
        states: `h_{i-1}`, `(batch, units)` (or a one-element list of it).
        training: whether to drop units.

    Returns:
        `(h_i, new_states)`, as `keras.layers.GRUCell`: `new_states` is
        `[h_i]` when `states` came as a list, `h_i` itself when it came as a
        tensor.
    """

    def __init__(self, units, state_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, seed=seed, **kwargs)
        if not 0.0 <= state_dropout < 1.0:
            raise ValueError(f"`state_dropout` must lie in [0, 1). Received: state_dropout={state_dropout}")
        self.state_dropout = float(state_dropout)
        # A generator of its own, so the state noise does not shift `GRUCell`'s dropout masks, and a seed
        # derived from `seed`: the same seed would draw the same bits as `GRUCell`'s masks.
        noise_seed = None if seed is None else int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
        self.noise_generator = keras.random.SeedGenerator(noise_seed)

    def keep_masks(self, shape, dtype):
        """Draws keep masks of `shape` (1 with probability `1 - state_dropout`, else 0)."""
        return ops.cast(keras.random.uniform(shape, seed=self.noise_generator) >= self.state_dropout, dtype)

    def call(self, inputs, states, training=False):
        listed = isinstance(states, (list, tuple))
        previous = states[0] if listed else states  # h_{i-1}: (batch, units)
        keep = None
        if inputs.shape[-1] == self.kernel.shape[0] + self.units:  # the keep mask came with the inputs
            inputs, keep = inputs[..., : -self.units], inputs[..., -self.units:]  # (batch, features), (batch, units)
        elif training and self.state_dropout > 0.0:  # in a plain keras.layers.RNN
            keep = self.keep_masks(ops.shape(previous), previous.dtype)  # (batch, units)
        if keep is not None:
            previous = previous * ops.cast(keep, previous.dtype)  # zero units, keep the others' scale
            states = [previous] if listed else previous
        return super().call(inputs, states, training=training)

    def get_config(self):
        return {**super().get_config(), "state_dropout": self.state_dropout}


@keras.saving.register_keras_serializable(package="course_lib")
class StateDropoutRNN(keras.layers.RNN):
    """`keras.layers.RNN` over a `StateDropoutGRUCell`, with every step's noise drawn before the loop.

    In training it draws one keep mask per step, `(batch, steps, units)`, and
    joins it to the inputs, so each step of the loop reads its own mask and
    the loop itself holds no random state: it compiles on every backend
    (JAX's `lax.scan` refused the generator's update inside the loop). At
    inference, or with `state_dropout=0`, the inputs pass unchanged.

    Args:
        cell: a `StateDropoutGRUCell`.
        **kwargs: the other arguments of `keras.layers.RNN`.

    Call arguments:
        sequences, initial_state, mask, training: as `keras.layers.RNN`.

    Returns:
        What `keras.layers.RNN` returns.
    """

    def __init__(self, cell, **kwargs):
        if not isinstance(cell, StateDropoutGRUCell):
            raise ValueError(f"StateDropoutRNN runs a StateDropoutGRUCell. Received: cell={cell!r}")
        super().__init__(cell, **kwargs)
        pass_trainable_down(self)  # `trainable=False` also freezes the cell, made before this layer

    def call(self, sequences, initial_state=None, mask=None, training=False):
        if training and self.cell.state_dropout > 0.0:
            # The cell's own input dropout mask, drawn here on the inputs alone: `keras.layers.RNN` would draw it
            # on the first step of the joined sequences, one column per keep mask too wide.
            self.cell.get_dropout_mask(sequences[:, 0, :])  # (batch, features); kept until the call ends
            batch, steps = ops.shape(sequences)[0], ops.shape(sequences)[1]
            keep = self.cell.keep_masks((batch, steps, self.cell.units), sequences.dtype)  # (batch, steps, units)
            sequences = ops.concatenate([sequences, keep], axis=-1)  # (batch, steps, features + units)
        return super().call(sequences, initial_state=initial_state, mask=mask, training=training)


def _make_gru(units, bidirectional, name, return_sequences=True, return_state=False, state_dropout=0.0, dtype=None):
    if state_dropout > 0.0:
        gru = StateDropoutRNN(
            StateDropoutGRUCell(units, state_dropout=state_dropout, dtype=dtype),
            return_sequences=return_sequences, return_state=return_state, dtype=dtype, name=name,
        )
    else:
        gru = keras.layers.GRU(units, return_sequences=return_sequences, return_state=return_state, dtype=dtype,
                               name=name)
    if bidirectional:
        return make_bidirectional(gru, dtype=dtype, name=f"bi{name}")
    return gru


class _HierarchyBase(keras.layers.Layer):
    """Embedding, the word-level fold/unfold and the shared config."""

    def __init__(self, vocab_size, embedding_dim, word_units, sentence_units, bidirectional, **kwargs):
        super().__init__(**kwargs)
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.word_units = check_count(word_units, "word_units")
        self.sentence_units = check_count(sentence_units, "sentence_units")
        self.bidirectional = check_flag(bidirectional, "bidirectional")
        self.directions = 2 if self.bidirectional else 1
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )

    @property
    def output_dim(self):
        """Size of the document vector `s` (and of each sentence state)."""
        return self.directions * self.sentence_units

    def _check_shape(self, documents_shape):
        if len(documents_shape) != 3:
            raise ValueError(
                f"{type(self).__name__} expects documents of rank 3 (batch, sentences, words). "
                f"Received: documents.shape={tuple(documents_shape)}"
            )

    def _fold(self, documents):
        """`(batch, S, W)` ids -> embedded `(batch*S, W, emb)` and masks."""
        check_documents(documents)
        check_known_token_range(documents, self.vocab_size, "documents")  # eager calls: -1 would read the last row
        word_mask, sentence_mask = document_masks(documents)
        words = ops.shape(documents)[2]
        flat_ids = ops.reshape(documents, (-1, words))  # (batch*S, W)
        flat_mask = ops.reshape(word_mask, (-1, words))  # (batch*S, W)
        embedded = self.embedding(flat_ids)  # (batch*S, W, emb)
        return embedded, flat_mask, word_mask, sentence_mask

    @staticmethod
    def _unfold(flat, documents):
        """`(batch*S, ...)` -> `(batch, S, ...)`."""
        shape = ops.shape(documents)
        return ops.reshape(flat, (shape[0], shape[1], *ops.shape(flat)[1:]))

    def compute_mask(self, *args, **kwargs):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "word_units": self.word_units,
                "sentence_units": self.sentence_units,
                "bidirectional": self.bidirectional,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="course_lib")
class HierarchicalAttentionEncoder(_HierarchyBase):
    """The hierarchical attention network's encoder (Yang et al.).

    Word level, for word `j` of sentence `i`:

        h_ij     = BiGRU_w(h_i,j-1, e(w_ij))
        u_ij     = tanh(W_w h_ij + b_w)
        alpha_ij = softmax_j(u_ij^T u_w)          (padding: exactly 0)
        s_i      = sum_j alpha_ij h_ij

    Sentence level:

        h_i     = BiGRU_s(h_i-1, s_i)
        u_i     = tanh(W_s h_i + b_s)
        alpha_i = softmax_i(u_i^T u_s)            (padding: exactly 0)
        s       = sum_i alpha_i h_i

    Args:
        vocab_size: number of word ids, padding (0) included.
        embedding_dim: size of the word embeddings `e(w_ij)`.
        word_units: word-level GRU size per direction.
        sentence_units: sentence-level GRU size per direction.
        attention_units: size of `u_ij`/`u_i` and of `u_w`/`u_s`
            (default: the size of the states they score, `directions *
            word_units` and `directions * sentence_units`).
        bidirectional: bidirectional GRUs at both levels (Yang et al.); set
            `False` for the lecture's one-directional drawing.
        sentence_state_dropout: in training, zero each unit of the sentence
            GRU's previous state with this probability at every step
            (`StateDropoutGRUCell`). Carrying information from sentence to
            sentence then becomes unreliable, which pushes the sentence
            attention towards the sentence that holds the evidence
            (`docs/documents.md`). Default 0: the plain equations.

    Call arguments:
        documents: integer ids `(batch, sentences, words)`; 0 is padding.
        training: Python boolean.

    Returns:
        A tuple `(document_vector, sentence_weights, word_weights)`:
        `(batch, directions * sentence_units)`, `(batch, sentences)` and
        `(batch, sentences, words)`. Use `encode()` for the sentence states
        too (the memory of a dialog decoder).
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        word_units,
        sentence_units,
        attention_units=None,
        bidirectional=True,
        sentence_state_dropout=0.0,
        **kwargs,
    ):
        super().__init__(vocab_size, embedding_dim, word_units, sentence_units, bidirectional, **kwargs)
        if not 0.0 <= sentence_state_dropout < 1.0:
            raise ValueError(
                "`sentence_state_dropout` must lie in [0, 1). "
                f"Received: sentence_state_dropout={sentence_state_dropout}"
            )
        # 0 is refused, not taken for the default
        self.attention_units = None if attention_units is None else check_count(attention_units, "attention_units")
        self.sentence_state_dropout = float(sentence_state_dropout)
        directions = self.directions
        self.word_rnn = _make_gru(self.word_units, self.bidirectional, "word_gru", dtype=self.dtype_policy)
        self.word_attention = AttentionPooling(
            directions * self.word_units if attention_units is None else self.attention_units,
            context_name="u_w", dtype=self.dtype_policy, name="word_attention",
        )
        self.sentence_rnn = _make_gru(
            self.sentence_units, self.bidirectional, "sentence_gru", state_dropout=self.sentence_state_dropout,
            dtype=self.dtype_policy,
        )
        self.sentence_attention = AttentionPooling(
            directions * self.sentence_units if attention_units is None else self.attention_units,
            context_name="u_s", dtype=self.dtype_policy, name="sentence_attention",
        )
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, documents_shape):
        self._check_shape(documents_shape)
        batch, sentences, words = documents_shape
        self.embedding.build((None, words))
        self.word_rnn.build((None, words, self.embedding_dim))
        word_dim = self.directions * self.word_units
        self.word_attention.build((None, words, word_dim))
        self.sentence_rnn.build((batch, sentences, word_dim))
        self.sentence_attention.build((batch, sentences, self.output_dim))

    def encode(self, documents, training=None):
        """All the intermediate results, as a dict.

        Keys: `document` `(batch, D)`, `sentence_states` `(batch, S, D)`,
        `sentence_vectors` `(batch, S, directions*word_units)`,
        `sentence_mask` `(batch, S)`, `sentence_weights` `(batch, S)`,
        `word_weights` `(batch, S, W)`, `word_mask` `(batch, S, W)`.
        """
        embedded, flat_mask, word_mask, sentence_mask = self._fold(documents)
        word_states = run_recurrent(
            self.word_rnn, embedded, flat_mask, training=training
        )  # (batch*S, W, dirs*word_units)
        sentence_vectors, flat_word_weights = self.word_attention(
            word_states, mask=flat_mask
        )  # (batch*S, dirs*word_units), (batch*S, W)
        sentence_vectors = self._unfold(sentence_vectors, documents)  # (batch, S, dirs*word_units)
        word_weights = self._unfold(flat_word_weights, documents)  # (batch, S, W)
        sentence_states = run_recurrent(
            self.sentence_rnn, sentence_vectors, sentence_mask, training=training
        )  # (batch, S, dirs*sentence_units)
        # Padded sentences: zero states, so nothing downstream can read them.
        sentence_states = sentence_states * ops.cast(sentence_mask[:, :, None], sentence_states.dtype)
        document, sentence_weights = self.sentence_attention(
            sentence_states, mask=sentence_mask
        )  # (batch, dirs*sentence_units), (batch, S)
        return {
            "document": document,
            "sentence_states": sentence_states,
            "sentence_vectors": sentence_vectors,
            "sentence_mask": sentence_mask,
            "sentence_weights": sentence_weights,
            "word_weights": word_weights,
            "word_mask": word_mask,
        }

    def call(self, documents, training=None):
        encoded = self.encode(documents, training=training)
        return encoded["document"], encoded["sentence_weights"], encoded["word_weights"]

    def compute_output_shape(self, documents_shape):
        batch, sentences, words = documents_shape
        return (batch, self.output_dim), (batch, sentences), (batch, sentences, words)

    def get_config(self):
        config = super().get_config()
        config["attention_units"] = self.attention_units
        config["sentence_state_dropout"] = self.sentence_state_dropout
        return config


@keras.saving.register_keras_serializable(package="course_lib")
class HierarchicalEncoder(_HierarchyBase):
    """The lecture's plain hierarchical encoder (no attention).

        h^1_ij = GRU_1(h^1_i,j-1, e(w_ij)),   s_i = h^1_iT_i   (last real word)
        h^2_i  = GRU_2(h^2_i-1, s_i),         s   = h^2_K      (last real sentence)

    With `bidirectional=True` each "last state" is the concatenation of the
    forward GRU's last state and the backward GRU's state at the first word.

    Args:
        vocab_size: number of word ids, padding (0) included.
        embedding_dim: size of the word embeddings.
        word_units: word-level GRU size per direction.
        sentence_units: sentence-level GRU size per direction.
        bidirectional: read both levels in both directions (default `False`,
            as in the lecture).

    Call arguments:
        documents: integer ids `(batch, sentences, words)`; 0 is padding.
        training: Python boolean.

    Returns:
        A tuple `(document_vector, sentence_states)`:
        `(batch, directions * sentence_units)` and
        `(batch, sentences, directions * sentence_units)` (zeros at padded
        sentences).
    """

    def __init__(self, vocab_size, embedding_dim, word_units, sentence_units, bidirectional=False, **kwargs):
        super().__init__(vocab_size, embedding_dim, word_units, sentence_units, bidirectional, **kwargs)
        self.word_rnn = _make_gru(
            self.word_units, self.bidirectional, "word_gru", return_state=True, dtype=self.dtype_policy
        )
        self.sentence_rnn = _make_gru(
            self.sentence_units, self.bidirectional, "sentence_gru", return_state=True, dtype=self.dtype_policy
        )
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, documents_shape):
        self._check_shape(documents_shape)
        batch, sentences, words = documents_shape
        self.embedding.build((None, words))
        self.word_rnn.build((None, words, self.embedding_dim))
        self.sentence_rnn.build((batch, sentences, self.directions * self.word_units))

    def _last_state(self, rnn, inputs, mask, training):
        results = run_recurrent(rnn, inputs, mask, training=training)
        if self.bidirectional:
            states, forward_last, backward_last = results
            return states, ops.concatenate([forward_last, backward_last], axis=-1)
        states, last = results
        return states, last

    def encode(self, documents, training=None):
        """A dict with `document`, `sentence_states`, `sentence_vectors`, `sentence_mask`, `word_mask`."""
        embedded, flat_mask, word_mask, sentence_mask = self._fold(documents)
        _, flat_last = self._last_state(
            self.word_rnn, embedded, flat_mask, training
        )  # (batch*S, dirs*word_units): s_i = h^1_{iT_i}
        sentence_vectors = self._unfold(flat_last, documents)  # (batch, S, dirs*word_units)
        sentence_vectors = sentence_vectors * ops.cast(sentence_mask[:, :, None], sentence_vectors.dtype)
        sentence_states, document = self._last_state(
            self.sentence_rnn, sentence_vectors, sentence_mask, training
        )  # (batch, S, D), (batch, D): s = h^2_K
        sentence_states = sentence_states * ops.cast(sentence_mask[:, :, None], sentence_states.dtype)
        # A document with no real sentence at all encodes to zeros.
        has_sentence = ops.any(sentence_mask, axis=-1, keepdims=True)  # (batch, 1)
        document = document * ops.cast(has_sentence, document.dtype)
        return {
            "document": document,
            "sentence_states": sentence_states,
            "sentence_vectors": sentence_vectors,
            "sentence_mask": sentence_mask,
            "word_mask": word_mask,
        }

    def call(self, documents, training=None):
        encoded = self.encode(documents, training=training)
        return encoded["document"], encoded["sentence_states"]

    def compute_output_shape(self, documents_shape):
        batch, sentences, _ = documents_shape
        return (batch, self.output_dim), (batch, sentences, self.output_dim)


__all__ = ["HierarchicalAttentionEncoder", "HierarchicalEncoder", "check_documents", "document_masks"]
