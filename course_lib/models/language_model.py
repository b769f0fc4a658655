"""The RNN language model: `P(y_t | y_<t) = softmax(V s_t + c)`.

    s_t = tanh(W s_{t-1} + U x_t + b)         (cell = "rnn"; or a GRU / LSTM)
    P(y_t = j | y_1 ... y_{t-1}) = softmax(V s_t + c)_j

`s_0` is not computed from anything: it is a trainable weight, initialised
at random and learned with `U`, `W`, `V`, `b` and `c`.
"""

import keras
import numpy as np
from keras import ops

from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import check_count, check_special_ids, check_token_ids, check_token_range
from course_lib.layers.precision import at_least_float32
from course_lib.recurrence import scan

CELLS = {"rnn": keras.layers.SimpleRNN, "gru": keras.layers.GRU, "lstm": keras.layers.LSTM}


@keras.saving.register_keras_serializable(package="course_lib")
class RNNLanguageModel(keras.layers.Layer):
    """A character- or word-level language model with a learned `s_0`.

    Training uses teacher forcing: the input at step `t` is the true token
    `y_{t-1}` (the sequence starts with `<GO>`), and the layer returns the
    logits `V s_t + c` for every step at once. Generation feeds the model its
    own prediction instead, from `<GO>` until it emits `<stop>`.

    Args:
        vocab_size: number of tokens, padding (id 0) included.
        embedding_dim: size of the input vector `x_t = e(y_{t-1})` (a learned
            embedding; a one-hot `x_t` times `U` is the same thing).
        units: size of the state `s_t`.
        cell: "rnn" (`s_t = tanh(W s_{t-1} + U x_t + b)`), "gru" or "lstm".
            The LSTM carries two states `(h_t, s_t)`; both start from learned
            vectors.
        start_id, stop_id, pad_id: the special token ids.

    Call arguments:
        tokens: int `(batch, length)`: `<GO>` followed by the sentence, padded
            on the right with `pad_id` (padding comes after every real token,
            so it cannot change the logits of a real position).
        training: Python boolean.

    Returns:
        Logits `(batch, length, vocab_size)`; step `t` scores the next token.
    """

    def __init__(self, vocab_size, embedding_dim=32, units=128, cell="gru", start_id=1, stop_id=2, pad_id=0, **kwargs):
        super().__init__(**kwargs)
        if cell not in CELLS:
            raise ValueError(f"`cell` must be one of {sorted(CELLS)}. Received: cell={cell!r}")
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        self.cell_kind = cell
        self.start_id, self.stop_id, self.pad_id = check_special_ids(self.vocab_size, start_id, stop_id, pad_id)
        self.state_count = 2 if cell == "lstm" else 1
        # x_t, the character read at step t
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )
        self.rnn = CELLS[cell](self.units, return_sequences=True, dtype=self.dtype_policy, name=cell)  # W, U, b
        self.output_layer = keras.layers.Dense(
            self.vocab_size, dtype=at_least_float32(self.dtype_policy), name="output"
        )  # V, c
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def build(self, tokens_shape):
        batch = tokens_shape[0]
        self.embedding.build(tokens_shape)
        self.rnn.build((batch, tokens_shape[1], self.embedding_dim))
        self.output_layer.build((batch, self.units))
        # s_0 (and h_0 for the LSTM): learned, not computed from any input.
        self.initial_state = self.add_weight(
            name="s_0",
            shape=(self.state_count, self.units),
            initializer=keras.initializers.RandomNormal(stddev=0.1),
        )

    def start_states(self, batch_reference):
        """`s_0` repeated for every row of `batch_reference` (any `(batch, ...)` tensor)."""
        ones = ops.ones_like(ops.cast(batch_reference[:, :1], self.compute_dtype))  # (batch, 1)
        # The cast: `generate` runs outside `__call__`, where no mixed-precision autocast applies.
        initial = ops.cast(self.initial_state, self.compute_dtype)  # (states, units)
        return [ones * initial[index][None, :] for index in range(self.state_count)]  # (batch, units)

    def call(self, tokens, training=None):
        check_token_ids(tokens, "tokens")
        embedded = self.embedding(tokens)  # (batch, length, embedding_dim)
        states = self.rnn(embedded, initial_state=self.start_states(tokens), training=training)  # (batch, length, units)
        return self.output_layer(states)  # (batch, length, vocab)

    def compute_output_shape(self, tokens_shape):
        return (*tokens_shape, self.vocab_size)

    def compute_output_spec(self, tokens, training=None):
        check_token_ids(tokens, "tokens")
        # The output layer's dtype: float32 under a mixed policy.
        return keras.KerasTensor(self.compute_output_shape(tokens.shape), dtype=self.output_layer.compute_dtype)

    def step(self, previous_tokens, states):
        """One generation step: returns `(logits (batch, vocab), new_states)`."""
        embedded = self.embedding(previous_tokens)  # (batch, embedding_dim)
        output, new_states = self.rnn.cell(embedded, list(states), training=False)
        if not isinstance(new_states, (list, tuple)):
            new_states = [new_states]
        return self.output_layer(output), list(new_states)  # logits: (batch, vocab)

    def compute_mask(self, tokens, mask=None):
        return None

    # -- using the model ----------------------------------------------------------

    def token_log_probs(self, inputs, targets):
        """`log P(y_t = l_t | y_<t)` for every target token; 0 at padding.

        Returns a NumPy array `(batch, length)`.
        """
        inputs, targets = np.asarray(inputs), np.asarray(targets)
        if inputs.shape != targets.shape:
            raise ValueError(
                "`inputs` and `targets` must have the same shape. "
                f"Received: inputs.shape={inputs.shape}, targets.shape={targets.shape}"
            )
        check_token_range(inputs, self.vocab_size, "inputs")
        check_token_range(targets, self.vocab_size, "targets")
        logits = ops.convert_to_numpy(self(inputs.astype("int32"), training=False)).astype("float64")
        logits -= logits.max(axis=-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
        chosen = np.take_along_axis(log_probs, targets[..., None].astype("int64"), axis=-1)[..., 0]
        return np.where(targets != self.pad_id, chosen, 0.0)

    def generate(self, num_samples=1, max_length=60, temperature=0.0, seed=0):
        """Writes sentences from `<GO>` until `<stop>` (or `max_length` tokens).

        Args:
            num_samples: how many sequences.
            max_length: the most tokens per sequence, `<stop>` included.
            temperature: 0 for greedy decoding (the most probable token every
                step); above 0 samples from `softmax(logits / temperature)`:
                below 1 sharpens the distribution, above 1 flattens it.
            seed: seed of the sampling noise (same seed, same samples).

        Returns:
            `(tokens, log_probs)`: int32 `(num_samples, max_length)` with
            padding after `<stop>`, and the log-probability of each sequence
            under the model (not the tempered distribution).
        """
        if (isinstance(temperature, (bool, np.bool_)) or not isinstance(temperature, (int, float, np.number))
                or not np.isfinite(temperature) or temperature < 0):
            raise ValueError(f"`temperature` must be a finite number >= 0. Received: temperature={temperature!r}")
        max_length = check_count(max_length, "max_length")
        num_samples = check_count(num_samples, "num_samples")
        if not self.built:
            self(np.full((1, 1), self.start_id, "int32"))
        rng = np.random.default_rng(seed)
        # Gumbel-max sampling: argmax(logits / T + g) with g ~ Gumbel is a draw
        # from softmax(logits / T). The noise is drawn up front, so the loop
        # below is deterministic and backend-independent.
        uniform = rng.uniform(1e-12, 1.0, size=(max_length, num_samples, self.vocab_size))
        # In the logits' dtype: float32 under a float32 or mixed policy, float64 under float64.
        dtype = self.output_layer.compute_dtype
        gumbel = (-np.log(-np.log(uniform))).astype(dtype)  # (max_length, batch, vocab)
        # `<pad>` and `<GO>` are never a valid next token: they cannot be chosen, at any temperature.
        allowed_ids = np.ones((self.vocab_size,), bool)
        allowed_ids[[self.pad_id, self.start_id]] = False
        start = ops.full((num_samples,), self.start_id, dtype="int32")
        init = (
            self.start_states(ops.zeros((num_samples, 1))),
            start,
            ops.zeros((num_samples,), dtype="bool"),
            ops.zeros((num_samples,), dtype=dtype),
        )

        def body(carry, noise):
            states, previous, finished, total = carry
            logits, new_states = self.step(previous, states)  # (batch, vocab)
            allowed = ops.where(allowed_ids, logits, -np.inf)  # (batch, vocab)
            if temperature == 0:
                chosen = ops.cast(ops.argmax(allowed, axis=-1), "int32")
            else:
                # Shifted so that the best token scores 0 and kept at 0: dividing by a tiny temperature then sends
                # the others to -inf instead of every positive logit to +inf (where arg-max took the first, not
                # the best); a temperature float32 rounds to 0 would make the best 0/0.
                shifted = allowed - ops.max(allowed, axis=-1, keepdims=True)  # (batch, vocab), <= 0
                scaled = ops.where(ops.equal(shifted, 0), ops.zeros_like(shifted), shifted / temperature)
                chosen = ops.cast(ops.argmax(scaled + noise, axis=-1), "int32")
            log_probs = ops.log_softmax(logits, axis=-1)  # (batch, vocab)
            chosen_log_prob = ops.take_along_axis(log_probs, chosen[:, None], axis=-1)[:, 0]
            emitted = ops.where(finished, ops.full_like(chosen, self.pad_id), chosen)
            total = total + ops.where(finished, ops.zeros_like(chosen_log_prob), chosen_log_prob)
            finished = ops.logical_or(finished, ops.equal(chosen, self.stop_id))
            return (new_states, emitted, finished, total), emitted

        (_, _, _, total), tokens = scan(body, init, xs=gumbel)
        tokens = ops.convert_to_numpy(ops.transpose(tokens, (1, 0))).astype("int32")
        return tokens, ops.convert_to_numpy(total)

    def training_model(self, sequence_length=None):
        """A functional `keras.Model` around this layer (shared weights), for `fit`."""
        tokens = keras.Input(shape=(sequence_length,), dtype="int32", name="tokens")
        return keras.Model(tokens, self(tokens), name=f"{self.cell_kind}_language_model")

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "units": self.units,
                "cell": self.cell_kind,
                "start_id": self.start_id,
                "stop_id": self.stop_id,
                "pad_id": self.pad_id,
            }
        )
        return config


def parameter_count(vocab_size, embedding_dim, units, cell="gru"):
    """The number of weights, from the sizes (the five ingredients' parameters).

    Embedding `vocab * emb`; recurrence `gates * (emb*units + units*units + bias)`
    with 1 gate block for the RNN, 3 for the GRU (Keras's `reset_after` GRU
    keeps two bias vectors per gate) and 4 for the LSTM; output `V, c`:
    `units*vocab + vocab`; and the learned `s_0` (twice for the LSTM).
    """
    if cell not in CELLS:
        raise ValueError(f"`cell` must be one of {sorted(CELLS)}. Received: cell={cell!r}")
    gates = {"rnn": 1, "gru": 3, "lstm": 4}[cell]
    biases = 2 * units if cell == "gru" else units
    recurrence = gates * (embedding_dim * units + units * units + biases)
    initial = (2 if cell == "lstm" else 1) * units
    return vocab_size * embedding_dim + recurrence + units * vocab_size + vocab_size + initial
