"""The plain encoder-decoder's decoder: one encoding for the whole output."""

import keras
from keras import ops

from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import (
    check_count, check_decoder_inputs, check_initial_state, check_known_token_range, check_step_inputs,
)
from course_lib.layers.precision import at_least_float32


@keras.saving.register_keras_serializable(package="course_lib")
class PlainGRUDecoder(keras.layers.Layer):
    """A GRU decoder conditioned on a single encoding `h_T` (no attention).

    Option 1 (`option=1`): the encoding is the first state, `s_0 = h_T`, and
    reaches later steps only through the recurrence.
    Option 2 (`option=2`): the encoding is joined to every input,
    `s_t = GRU(s_{t-1}, [e(y_{t-1}); h_T])`, and the state starts from zeros.

    Output: `P(y_t | y_<t, x) = softmax(V s_t + b)`.

    Args:
        vocab_size: number of target tokens, padding included.
        embedding_dim: size of the target embeddings.
        units: size of the decoder state.
        option: 1 or 2, as above.

    Call arguments:
        target_inputs: `(batch, tgt_len)` token ids starting with `<GO>`.
        encoder_outputs: `(batch, src_len, value_dim)`; only its shape is used
            (for the zero alignments), kept so both decoders share one signature.
        initial_state: the encoding `h_T`, `(batch, units)` for option 1 or
            `(batch, encoding_dim)` for option 2.
        source_mask: ignored (the encoder already skipped padding).
        training: Python boolean.

    Returns:
        A tuple `(logits, alignments)`; the plain decoder attends to nothing, so
        `alignments` is all zeros `(batch, tgt_len, src_len)`.
    """

    has_attention = False

    def __init__(self, vocab_size, embedding_dim, units, option=1, **kwargs):
        super().__init__(**kwargs)
        if option not in (1, 2):
            raise ValueError(f"`option` must be 1 or 2. Received: option={option}")
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        self.option = option
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )
        self.gru = keras.layers.GRU(self.units, return_sequences=True, dtype=self.dtype_policy, name="gru")
        # Logits in float32 even under a mixed-precision policy (float64 under float64), for the softmax and the loss.
        self.output_layer = keras.layers.Dense(
            self.vocab_size, dtype=at_least_float32(self.dtype_policy), name="output"
        )
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, target_inputs_shape, encoder_outputs_shape, initial_state_shape):
        if len(target_inputs_shape) != 2:  # before any weight: `call`'s checks come after `build`
            raise ValueError(
                "`target_inputs` must have rank 2 (batch, length). "
                f"Received: target_inputs.shape={tuple(target_inputs_shape)}"
            )
        batch, length = target_inputs_shape[0], target_inputs_shape[1]
        # Option 2 joins the encoding `h_T` (what arrives as `initial_state`,
        # after any bridge) to every input.
        extra = initial_state_shape[-1] if self.option == 2 else 0
        self.embedding.build(target_inputs_shape)
        self.gru.build((batch, length, self.embedding_dim + extra))
        self.output_layer.build((batch, self.units))

    def prepare_memory(self, encoder_outputs, initial_state, source_mask=None):
        """What a step needs: the encoding (option 2) and the source length.

        Decoding can start here, before any teacher-forced call: the weights are
        made now, in `build`, as `AttentionGRUDecoder.prepare_memory` does.
        """
        check_initial_state(initial_state, self._initial_state_size())
        if not self.built:
            self.build((None, None), encoder_outputs.shape, initial_state.shape)
        return {
            "encoding": initial_state,  # (batch, encoding_dim)
            "no_weights": ops.zeros_like(encoder_outputs[:, :, 0]),  # (batch, src_len)
        }

    def _initial_state_size(self):
        """The size `initial_state` must have: `units` for option 1 (it is `s_0`); for option 2 the
        encoding the GRU was built for, any before that."""
        if self.option == 1:
            return self.units
        return self.gru.cell.kernel.shape[0] - self.embedding_dim if self.gru.built else None

    def start_state(self, initial_state):
        if self.option == 1:
            return initial_state
        return ops.zeros((ops.shape(initial_state)[0], self.units), dtype=initial_state.dtype)

    def _inputs(self, embedded, encoding):
        if self.option == 1:
            return embedded
        if len(embedded.shape) == 3:
            repeated = ops.repeat(encoding[:, None, :], ops.shape(embedded)[1], axis=1)
            return ops.concatenate([embedded, repeated], axis=-1)  # (batch, tgt_len, emb+enc)
        return ops.concatenate([embedded, encoding], axis=-1)  # (batch, emb+enc)

    def step(self, previous_tokens, state, memory, training=None):
        """Returns `(logits, s_t, zeros)` for one step."""
        check_step_inputs(previous_tokens, state, self.units)
        embedded = self.embedding(previous_tokens)  # (batch, emb)
        new_state, _ = self.gru.cell(self._inputs(embedded, memory["encoding"]), state, training=training)
        return self.output_layer(new_state), new_state, memory["no_weights"]

    def call(self, target_inputs, encoder_outputs, initial_state, source_mask=None, training=None):
        check_decoder_inputs(target_inputs, encoder_outputs, initial_state, self._initial_state_size())
        check_known_token_range(target_inputs, self.vocab_size, "target_inputs")  # eager calls only
        embedded = self.embedding(target_inputs)  # (batch, tgt_len, emb)
        states = self.gru(
            self._inputs(embedded, initial_state),
            initial_state=self.start_state(initial_state),
            training=training,
        )  # (batch, tgt_len, units)
        logits = self.output_layer(states)  # (batch, tgt_len, vocab)
        alignments = ops.zeros(
            (ops.shape(target_inputs)[0], ops.shape(target_inputs)[1], ops.shape(encoder_outputs)[1]),
            dtype=logits.dtype,
        )
        return logits, alignments

    def logits_from_state(self, target_inputs, initial_state, training=None):
        """Teacher-forced logits from the encoding alone, with no encoder outputs.

        The plain decoder reads the encoder's outputs only for their length
        (the all-zero alignments), so a model whose encoder gives one vector
        (captioning's `s_0 = W_proj fc7(I)`) can call this instead of `call`.

        Args:
            target_inputs: `(batch, tgt_len)` token ids starting with `<GO>`.
            initial_state: the encoding, `(batch, units)` for option 1 (it is
                `s_0`) or `(batch, encoding_dim)` for option 2.
            training: Python boolean.

        Returns:
            The logits, `(batch, tgt_len, vocab_size)`.
        """
        initial_state = ops.convert_to_tensor(initial_state)
        check_initial_state(initial_state, self._initial_state_size())
        one_location = ops.expand_dims(initial_state, 1)  # (batch, 1, size): stands in for the encoder's outputs
        logits, _ = self(target_inputs, one_location, initial_state, training=training)
        return logits

    def compute_output_shape(self, target_inputs_shape, encoder_outputs_shape, initial_state_shape,
                             source_mask_shape=None):
        batch, steps = target_inputs_shape[:2]
        return (batch, steps, self.vocab_size), (batch, steps, encoder_outputs_shape[1])  # logits, alignments

    def compute_output_spec(self, target_inputs, encoder_outputs, initial_state, source_mask=None, training=None):
        check_decoder_inputs(target_inputs, encoder_outputs, initial_state, self._initial_state_size())
        logits, alignments = self.compute_output_shape(target_inputs.shape, encoder_outputs.shape, initial_state.shape)
        # Both in the output layer's dtype (float32 under a mixed policy), as `call` returns them.
        dtype = self.output_layer.compute_dtype
        return keras.KerasTensor(logits, dtype=dtype), keras.KerasTensor(alignments, dtype=dtype)

    def compute_mask(self, *args, **kwargs):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "option": self.option,
            }
        )
        return config
