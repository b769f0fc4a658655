"""Recurrent encoders for token sequences: `h_j = GRU(h_{j-1}, e(x_j))`."""

import keras
from keras import ops

from course_lib.encoders.bidirectional import make_bidirectional
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import check_count, check_flag, check_known_token_range, check_token_ids, run_recurrent


@keras.saving.register_keras_serializable(package="course_lib")
class GRUEncoder(keras.layers.Layer):
    """Embeds source tokens and runs a (bi)directional GRU over them.

    The unidirectional encoder hands its last state over unchanged
    (`s_0 = h_T`, the lecture's option 1). The bidirectional encoder reads the
    sentence both ways, returns `h_j = [h_fwd_j; h_bwd_j]` and bridges the two
    final states into the decoder's first state,
    `s_0 = tanh(W_bridge [h_fwd_T; h_bwd_1] + b_bridge)` (adapted from Bahdanau
    et al., whose bridge reads the backward state alone: `s_0 = tanh(W_s h_bwd_1)`).

    Token id `pad_id` (0 by default) is padding: it is masked in the GRU, so
    padded positions neither change the final state nor receive attention
    downstream. A source made only of padding runs the GRU over one padding
    step (cuDNN fails on a row with no step at all); its mask stays all False,
    so it receives no attention.

    Args:
        vocab_size: number of source tokens, padding included.
        embedding_dim: size of the token embeddings `e(x_j)`.
        units: GRU size per direction.
        bidirectional: read the sequence in both directions.
        decoder_units: size of the decoder state `s_0`; defaults to `units`.
            A unidirectional encoder with `decoder_units != units` also gets
            the bridge.
        pad_id: the padding token id.

    Call arguments:
        source: integer token ids `(batch, src_len)`.
        training: Python boolean, passed to the GRUs.

    Returns:
        A tuple `(encoder_outputs, initial_state, source_mask)`:
        `(batch, src_len, units * directions)`, `(batch, decoder_units)` and a
        boolean `(batch, src_len)`. `encoder_outputs` also carries
        `source_mask` as its Keras mask, on every device.
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        bidirectional=False,
        decoder_units=None,
        pad_id=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        self.pad_id = check_count(pad_id, "pad_id", least=0)  # an id: 1.5 is refused
        if pad_id >= vocab_size:
            raise ValueError(f"`pad_id` must be a token id in [0, vocab_size). Received: pad_id={pad_id}, "
                             f"vocab_size={vocab_size}")
        # 0 is refused, not taken for the default
        self.decoder_units = self.units if decoder_units is None else check_count(decoder_units, "decoder_units")
        self.bidirectional = check_flag(bidirectional, "bidirectional")
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )
        gru = keras.layers.GRU(
            self.units, return_sequences=True, return_state=True, dtype=self.dtype_policy, name="gru"
        )
        self.rnn = make_bidirectional(gru, dtype=self.dtype_policy, name="bigru") if bidirectional else gru
        self.uses_bridge = bidirectional or self.decoder_units != units
        self.bridge = (
            keras.layers.Dense(self.decoder_units, activation="tanh", dtype=self.dtype_policy, name="bridge")
            if self.uses_bridge
            else None
        )
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, source_shape):
        self.embedding.build(source_shape)
        self.rnn.build(tuple(source_shape) + (self.embedding_dim,))
        if self.bridge is not None:
            directions = 2 if self.bidirectional else 1
            self.bridge.build((source_shape[0], directions * self.units))

    def call(self, source, training=None):
        check_token_ids(source, "source")
        check_known_token_range(source, self.vocab_size, "source")  # eager calls; -1 would read the last row
        source_mask = ops.not_equal(source, self.pad_id)  # (batch, src_len)
        embedded = self.embedding(source)  # (batch, src_len, embedding_dim)
        # Any padding pattern (left padding too) is run right-padded, as cuDNN needs.
        results = run_recurrent(self.rnn, embedded, source_mask, training=training)
        if self.bidirectional:
            outputs, forward_state, backward_state = results
            final = ops.concatenate([forward_state, backward_state], axis=-1)  # (batch, 2*units)
        else:
            outputs, final = results
        initial_state = self.bridge(final) if self.bridge is not None else final  # (batch, dec_units)
        return outputs, initial_state, source_mask

    def compute_output_shape(self, source_shape):
        batch, length = source_shape
        directions = 2 if self.bidirectional else 1
        return (batch, length, directions * self.units), (batch, self.decoder_units), (batch, length)

    def compute_output_spec(self, source, training=None):
        check_token_ids(source, "source")
        outputs, initial_state, source_mask = self.compute_output_shape(source.shape)
        return (
            keras.KerasTensor(outputs, dtype=self.compute_dtype),  # (batch, src_len, units * directions)
            keras.KerasTensor(initial_state, dtype=self.compute_dtype),  # (batch, decoder_units)
            keras.KerasTensor(source_mask, dtype="bool"),  # (batch, src_len)
        )

    def compute_mask(self, source, mask=None):
        # The per-step outputs carry the source mask, as a Keras recurrent layer's would, so a layer called on them
        # without an explicit mask still skips the padding; the final state and the mask itself carry none.
        return ops.not_equal(source, self.pad_id), None, None

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "bidirectional": self.bidirectional,
                "decoder_units": self.decoder_units,
                "pad_id": self.pad_id,
            }
        )
        return config
