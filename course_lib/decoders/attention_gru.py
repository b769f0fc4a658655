"""The attentional GRU decoder: encode, attend, decode."""

import keras
import numpy as np
from keras import ops

from course_lib.layers.bahdanau_attention import BahdanauAttention
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import (
    check_count, check_decoder_inputs, check_flag, check_initial_state, check_known_token_range, check_mask,
    check_step_inputs,
)
from course_lib.layers.precision import at_least_float32
from course_lib.recurrence import scan


@keras.saving.register_keras_serializable(package="course_lib")
class AttentionGRUDecoder(keras.layers.Layer):
    """A GRU decoder that reads a fresh context vector at every step.

    One step, with the lecture's symbols:

        e_jt  = v_att^T tanh(U_att s_{t-1} + W_att h_j)
        alpha = softmax_j(e_t)            (padding gets exactly 0)
        c_t   = sum_j alpha_jt h_j
        s_t   = GRU(s_{t-1}, [e(y_{t-1}); c_t])
        P(y_t | y_<t, x) = softmax(V s_t + b)
                     or softmax(V [s_t; c_t; e(y_{t-1})] + b) with `deep_output=True`

    `W_att h_j` is computed once per source batch (`prepare_memory`) and reused
    at every step.

    With `conditional=True` the step is the "conditional GRU" of Nematus
    (Sennrich et al., 2017): a first GRU reads the previous word before the
    decoder attends, so the query already knows which word was just emitted,

        s'_t = GRU_1(s_{t-1}, e(y_{t-1}))
        e_jt = v_att^T tanh(U_att s'_t + W_att h_j),  alpha, c_t as above
        s_t  = GRU_2(s'_t, c_t)

    In the lecture's form the query `s_{t-1}` was computed before `y_{t-1}`
    was chosen; where that choice was open (the gender of "I" in Hindi), the
    weights cannot depend on it.

    Args:
        vocab_size: number of target tokens, padding included.
        embedding_dim: size of the target embeddings `e(y)`.
        units: size of the decoder state `s_t`.
        attention_units: hidden size `d_1` of the scoring network (default `units`).
        deep_output: let the output layer read `[s_t; c_t; e(y_{t-1})]`.
        teacher_forcing_ratio: probability of feeding the true previous token
            during training. Below 1, the model's own previous prediction is fed
            otherwise (scheduled sampling). Inference always feeds predictions.
        conditional: use the conditional GRU step above (two GRU cells).
        seed: seed of the coin flips that choose, with `teacher_forcing_ratio`
            below 1, between the true and the predicted previous token.
        never_fed_ids: token ids that scheduled sampling never feeds back as a
            prediction (`Seq2Seq` passes its `<pad>` and `<GO>`): greedy and beam
            decoding never write them, so training should not read them either.

    Call arguments:
        target_inputs: `(batch, tgt_len)` token ids, `<GO>` followed by the
            target shifted right (teacher forcing).
        encoder_outputs: `h_j`, `(batch, src_len, value_dim)`.
        initial_state: `s_0`, `(batch, units)`.
        source_mask: optional boolean `(batch, src_len)`.
        training: Python boolean.

    Returns:
        A tuple `(logits, alignments)`: `(batch, tgt_len, vocab_size)` and the
        attention weights `(batch, tgt_len, src_len)`.
    """

    has_attention = True

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        attention_units=None,
        deep_output=False,
        teacher_forcing_ratio=1.0,
        conditional=False,
        seed=None,
        never_fed_ids=(),
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0.0 <= teacher_forcing_ratio <= 1.0:
            raise ValueError(
                "`teacher_forcing_ratio` must lie in [0, 1]. "
                f"Received: teacher_forcing_ratio={teacher_forcing_ratio}"
            )
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        # 0 is refused, not taken for the default
        self.attention_units = (
            self.units if attention_units is None else check_count(attention_units, "attention_units")
        )
        self.deep_output = check_flag(deep_output, "deep_output")
        self.teacher_forcing_ratio = float(teacher_forcing_ratio)
        self.conditional = check_flag(conditional, "conditional")
        self.seed = seed
        self.never_fed_ids = tuple(int(i) for i in never_fed_ids)
        if any(not 0 <= i < self.vocab_size for i in self.never_fed_ids):
            raise ValueError(f"`never_fed_ids` must be token ids below {self.vocab_size}. "
                             f"Received: never_fed_ids={never_fed_ids}")
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )
        self.attention = BahdanauAttention(self.attention_units, dtype=self.dtype_policy, name="attention")
        self.cell = keras.layers.GRUCell(self.units, dtype=self.dtype_policy, name="gru_cell")
        # GRU_1 of the conditional step: reads e(y_{t-1}) before attending.
        self.input_cell = (
            keras.layers.GRUCell(self.units, dtype=self.dtype_policy, name="input_gru_cell")
            if self.conditional else None
        )
        # Logits in float32 even under a mixed-precision policy (float64 under float64), for the softmax and the loss.
        self.output_layer = keras.layers.Dense(
            self.vocab_size, dtype=at_least_float32(self.dtype_policy), name="output"
        )
        self.seed_generator = keras.random.SeedGenerator(seed)
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, target_inputs_shape, encoder_outputs_shape):
        batch, value_dim = encoder_outputs_shape[0], encoder_outputs_shape[-1]
        self.embedding.build(target_inputs_shape)
        self.attention.build((batch, self.units), encoder_outputs_shape)
        if self.conditional:
            self.input_cell.build((batch, self.embedding_dim))
            self.cell.build((batch, value_dim))
        else:
            self.cell.build((batch, self.embedding_dim + value_dim))
        output_inputs = self.units + (value_dim + self.embedding_dim if self.deep_output else 0)
        self.output_layer.build((batch, output_inputs))

    # -- pieces shared by training and decoding ---------------------------------

    def prepare_memory(self, encoder_outputs, initial_state=None, source_mask=None):
        """Everything a step needs about the source, computed once."""
        if not self.built:  # decoding may start before any teacher-forced call
            self.build((None, None), tuple(encoder_outputs.shape))
        if initial_state is not None:
            check_initial_state(initial_state, self.units)
        if source_mask is None:
            source_mask = ops.ones(ops.shape(encoder_outputs)[:2], dtype="bool")
        else:
            check_mask(source_mask, encoder_outputs.shape[:2], "encoder_outputs")
        return {
            "values": encoder_outputs,  # (batch, src_len, value_dim)
            "keys": self.attention.project_keys(encoder_outputs),  # (batch, src_len, att_units)
            "mask": ops.cast(source_mask, "bool"),  # (batch, src_len)
        }

    def start_state(self, initial_state):
        """`s_0` as handed over by the encoder."""
        return initial_state

    def _recur(self, embedded_previous, state, memory, training=None):
        """One GRU step with attention; returns `(s_t, c_t, alpha_t)`."""
        if self.conditional:
            state, _ = self.input_cell(embedded_previous, state, training=training)  # s'_t: (batch, units)
        context, weights = self.attention(
            state, memory["values"], mask=memory["mask"], projected_keys=memory["keys"]
        )  # (batch, value_dim), (batch, src_len)
        # The conditional step has read e(y_{t-1}) already; the lecture's reads it with c_t.
        cell_input = context if self.conditional else ops.concatenate([embedded_previous, context], axis=-1)
        new_state, _ = self.cell(cell_input, state, training=training)  # (batch, units)
        return new_state, context, weights

    def _logits(self, states, contexts, embedded_previous):
        if self.deep_output:
            states = ops.concatenate([states, contexts, embedded_previous], axis=-1)
        return self.output_layer(states)  # (..., vocab_size)

    def step(self, previous_tokens, state, memory, training=None):
        """One decoding step from `y_{t-1}` and `s_{t-1}`.

        Returns `(logits, s_t, alpha_t)` with shapes `(batch, vocab)`,
        `(batch, units)` and `(batch, src_len)`.
        """
        check_step_inputs(previous_tokens, state, self.units)
        embedded = self.embedding(previous_tokens)  # (batch, embedding_dim)
        new_state, context, weights = self._recur(embedded, state, memory, training)
        return self._logits(new_state, context, embedded), new_state, weights

    # -- teacher forcing --------------------------------------------------------

    def call(self, target_inputs, encoder_outputs, initial_state, source_mask=None, training=None):
        check_decoder_inputs(target_inputs, encoder_outputs, initial_state, self.units)
        check_known_token_range(target_inputs, self.vocab_size, "target_inputs")  # eager calls only
        memory = self.prepare_memory(encoder_outputs, initial_state, source_mask)
        if training and self.teacher_forcing_ratio < 1.0:
            return self._scheduled_sampling(target_inputs, initial_state, memory, training)
        embedded = self.embedding(target_inputs)  # (batch, tgt_len, emb)
        embedded_time_major = ops.transpose(embedded, (1, 0, 2))  # (tgt_len, batch, emb)

        def body(state, embedded_previous):
            new_state, context, weights = self._recur(embedded_previous, state, memory, training)
            return new_state, (new_state, context, weights)

        _, (states, contexts, weights) = scan(body, initial_state, embedded_time_major)
        states = ops.transpose(states, (1, 0, 2))  # (batch, tgt_len, units)
        contexts = ops.transpose(contexts, (1, 0, 2))  # (batch, tgt_len, value_dim)
        alignments = ops.transpose(weights, (1, 0, 2))  # (batch, tgt_len, src_len)
        return self._logits(states, contexts, embedded), alignments

    def _scheduled_sampling(self, target_inputs, initial_state, memory, training):
        coins = keras.random.uniform(ops.shape(target_inputs), seed=self.seed_generator)
        use_truth = ops.less(coins, self.teacher_forcing_ratio)  # (batch, tgt_len)
        use_truth = ops.concatenate(
            [ops.ones_like(use_truth[:, :1]), use_truth[:, 1:]], axis=1
        )  # the first input is always <GO>
        xs = (ops.transpose(target_inputs, (1, 0)), ops.transpose(use_truth, (1, 0)))
        first_prediction = ops.zeros_like(target_inputs[:, 0])
        blocked = None  # (vocab,) True for the ids never fed back
        if self.never_fed_ids:
            # a constant made in NumPy: `ops.isin` branches in Python on TensorFlow, which XLA cannot compile
            blocked = ops.convert_to_tensor(np.isin(np.arange(self.vocab_size), self.never_fed_ids))

        def body(carry, step_inputs):
            state, predicted = carry
            true_token, take_truth = step_inputs
            token = ops.where(take_truth, true_token, predicted)  # (batch,)
            logits, new_state, weights = self.step(token, state, memory, training)
            candidates = logits if blocked is None else ops.where(blocked, ops.cast(-1e9, logits.dtype), logits)
            predicted = ops.cast(ops.argmax(candidates, axis=-1), target_inputs.dtype)
            return (new_state, predicted), (logits, weights)

        _, (logits, weights) = scan(body, (initial_state, first_prediction), xs)
        return ops.transpose(logits, (1, 0, 2)), ops.transpose(weights, (1, 0, 2))

    def compute_output_shape(self, target_inputs_shape, encoder_outputs_shape, initial_state_shape=None,
                             source_mask_shape=None):
        batch, steps = target_inputs_shape[:2]
        return (batch, steps, self.vocab_size), (batch, steps, encoder_outputs_shape[1])  # logits, alignments

    def compute_output_spec(self, target_inputs, encoder_outputs, initial_state, source_mask=None, training=None):
        check_decoder_inputs(target_inputs, encoder_outputs, initial_state, self.units)
        if source_mask is not None:
            check_mask(source_mask, encoder_outputs.shape[:2], "encoder_outputs")
        # Written out, not traced: tracing the loop (`scan` over a symbolic length) loses the number of steps.
        logits, alignments = self.compute_output_shape(target_inputs.shape, encoder_outputs.shape, initial_state.shape)
        return (
            keras.KerasTensor(logits, dtype=self.output_layer.compute_dtype),  # (batch, tgt_len, vocab)
            keras.KerasTensor(alignments, dtype=self.compute_dtype),  # (batch, tgt_len, src_len)
        )

    def compute_mask(self, *args, **kwargs):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "attention_units": self.attention_units,
                "deep_output": self.deep_output,
                "teacher_forcing_ratio": self.teacher_forcing_ratio,
                "conditional": self.conditional,
                "seed": self.seed,
                "never_fed_ids": list(self.never_fed_ids),
            }
        )
        return config
