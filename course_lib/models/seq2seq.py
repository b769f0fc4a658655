"""The sequence-to-sequence model: a GRU encoder and a GRU decoder."""

import keras
import numpy as np
from keras import ops

from course_lib.compiling import compile_once
from course_lib.decoders.attention_gru import AttentionGRUDecoder
from course_lib.decoders.plain_gru import PlainGRUDecoder
from course_lib.decoding.beam import beam_search_model, check_beam_options, check_greedy_length_penalty, check_source
from course_lib.decoding.greedy import greedy_decode
from course_lib.encoders.gru_encoder import GRUEncoder
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import (
    check_count, check_flag, check_same_batch, check_special_ids, check_token_ids, check_unread_options,
)
from course_lib.losses import attention_supervision_loss
from course_lib.models.checking_ids import ChecksTokenIds
from course_lib.models.building import BuildsSublayers
from course_lib.models.keeping_weights import KeepsWeightsOnError
from course_lib.models.token_compile import CompilesWithTokenDefaults


@keras.saving.register_keras_serializable(package="course_lib")
class Seq2Seq(ChecksTokenIds, BuildsSublayers, KeepsWeightsOnError, CompilesWithTokenDefaults, keras.Model):
    """Encoder-decoder over token ids, with or without attention.

    Training uses teacher forcing: the logits for `<GO>` followed by the
    target are compared with `target_out` (the target followed by `<stop>`),
    so the model works with `fit`, `evaluate` and `predict`. Called on the
    sources alone, as `predict(source)` does, it decodes them greedily, on
    any backend.

    Supervised attention (optional; the lecture's thought experiment of
    knowing the true weights during training): with
    `alignment_loss_weight > 0`, training inputs also carry `"alignment"`,
    the oracle weights `(batch, tgt_len, src_len)` of
    `losses.oracle_weights`, and `alignment_loss_weight *
    attention_supervision_loss(oracle, alpha)` is added to the token loss
    (`add_loss`). Evaluation and decoding ignore it.

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes (padding included).
        embedding_dim: size of both embeddings.
        units: GRU size of the decoder (the state `s_t`), and of the encoder
            per direction unless `encoder_units` is given.
        encoder_units: GRU size of the encoder per direction (default
            `units`). A bidirectional encoder with `encoder_units=units // 2`
            gives annotations `h_j` of size `units`, as a one-directional one.
        attention: `True` for the attentional decoder, `False` for the plain one.
        option: for the plain decoder, 1 (`s_0 = h_T`) or 2 (`h_T` at every step);
            with `attention=True` only 1 (the default) is accepted.
        bidirectional: bidirectional encoder with the bridge to `s_0`.
        attention_units: attentional decoder only: hidden size of the scoring
            network (default `units`).
        deep_output: attentional decoder only: the output layer reads
            `[s_t; c_t; e(y_{t-1})]`.
        teacher_forcing_ratio: attentional decoder only (scheduled sampling;
            see `AttentionGRUDecoder`).
        conditional: attentional decoder only: the conditional GRU step
            (the query reads `e(y_{t-1})` first; see `AttentionGRUDecoder`).
        alignment_loss_weight: attentional decoder only: weight of the
            supervised-attention loss (0: attention learns from the
            translation loss alone). With `attention=False` the five
            attentional-decoder-only arguments are refused unless they keep
            their defaults (None, False, 1.0, False, 0.0): the plain decoder
            would ignore them.
        start_id, stop_id, pad_id: the special token ids (`pad_id` pads both the
            sources and the targets).
        max_output_length: default length limit for decoding.

    Call arguments:
        inputs: for training and evaluation, `{"source": (batch, src_len),
            "target_in": (batch, tgt_len)}` (and `"alignment"` when the
            attention is supervised), where `target_in` is `<GO>` followed by
            the target (or the pair `(source, target_in)`); for decoding, the
            sources alone, a `(batch, src_len)` tensor or `{"source": ...}`.
        training: Python boolean: scheduled sampling and the
            supervised-attention loss act only in training.

    Returns:
        With `target_in`, the logits `(batch, tgt_len, vocab)`; with the
        sources alone, the greedy tokens `(batch, max_output_length)`.
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size,
        embedding_dim=32,
        units=128,
        encoder_units=None,
        attention=True,
        option=1,
        bidirectional=False,
        attention_units=None,
        deep_output=False,
        teacher_forcing_ratio=1.0,
        conditional=False,
        alignment_loss_weight=0.0,
        start_id=1,
        stop_id=2,
        pad_id=0,
        max_output_length=50,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.source_vocab_size = check_count(source_vocab_size, "source_vocab_size")
        self.target_vocab_size = check_count(target_vocab_size, "target_vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        # 0 is refused, not taken for the default
        self.encoder_units = None if encoder_units is None else check_count(encoder_units, "encoder_units")
        self.attention = check_flag(attention, "attention")
        self.option = option
        self.bidirectional = check_flag(bidirectional, "bidirectional")
        self.deep_output = check_flag(deep_output, "deep_output")
        self.teacher_forcing_ratio = teacher_forcing_ratio
        if not attention:  # options of the attentional decoder: refused with the plain one, not ignored
            check_unread_options(
                {"attention_units": attention_units, "conditional": conditional, "deep_output": deep_output,
                 "teacher_forcing_ratio": teacher_forcing_ratio},
                {"attention_units": None, "conditional": False, "deep_output": False, "teacher_forcing_ratio": 1.0},
                "`attention_units`, `conditional`, `deep_output` and a `teacher_forcing_ratio` other than 1 apply "
                "to the attentional decoder only",
                attention=attention,
            )
        self.attention_units = None if attention_units is None else check_count(attention_units, "attention_units")
        self.conditional = check_flag(conditional, "conditional")
        if option not in (1, 2):  # checked with attention too: the value is saved in the config
            raise ValueError(f"`option` must be 1 or 2 (used by the plain decoder). Received: option={option}")
        if option != 1 and attention:  # used to be accepted, saved and ignored
            raise ValueError(
                "`option` chooses how the plain decoder reads the encoding; the attentional decoder reads every "
                f"`h_j` through its attention and has no option 2. Received: option={option}, attention={attention}"
            )
        if alignment_loss_weight < 0 or (alignment_loss_weight and not attention):
            raise ValueError(
                "`alignment_loss_weight` must be >= 0, and supervises the attentional decoder only. "
                f"Received: alignment_loss_weight={alignment_loss_weight}, attention={attention}"
            )
        self.alignment_loss_weight = float(alignment_loss_weight)
        self.start_id, self.stop_id, self.pad_id = check_special_ids(self.target_vocab_size, start_id, stop_id, pad_id)
        self.max_output_length = check_count(max_output_length, "max_output_length")
        self.encoder = GRUEncoder(
            self.source_vocab_size, self.embedding_dim, self.units if encoder_units is None else self.encoder_units,
            bidirectional=bidirectional,
            decoder_units=self.units, pad_id=self.pad_id, dtype=self.dtype_policy, name="encoder",
        )
        if attention:
            self.decoder = AttentionGRUDecoder(
                self.target_vocab_size, self.embedding_dim, self.units, attention_units=self.attention_units,
                deep_output=deep_output, teacher_forcing_ratio=teacher_forcing_ratio,
                conditional=conditional, never_fed_ids=(self.pad_id, self.start_id), dtype=self.dtype_policy,
                name="decoder",
            )
        else:
            self.decoder = PlainGRUDecoder(
                self.target_vocab_size, self.embedding_dim, self.units, option=option, dtype=self.dtype_policy,
                name="decoder",
            )
        self._greedy_compiled = None
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    # -- forward passes ---------------------------------------------------------

    @staticmethod
    def _unpack(inputs):
        """`(source, target_in, oracle alignment or None)`."""
        if isinstance(inputs, dict):
            required, allowed = {"source", "target_in"}, {"source", "target_in", "alignment"}
            if not required <= set(inputs) <= allowed:
                raise ValueError(
                    "Seq2Seq expects a dict with keys 'source' and 'target_in' (and optionally 'alignment'). "
                    f"Received: keys={sorted(inputs)}"
                )
            return inputs["source"], inputs["target_in"], inputs.get("alignment")
        if isinstance(inputs, (list, tuple)) and len(inputs) == 2:
            return inputs[0], inputs[1], None
        raise ValueError(
            "Seq2Seq expects {'source': ..., 'target_in': ...} or (source, target_in). "
            f"Received: {type(inputs).__name__}"
        )

    def encode(self, source, training=None):
        """Returns `(encoder_outputs, initial_state, source_mask)`."""
        return self.encoder(source, training=training)

    def forward(self, source, target_in, training=None):
        """Teacher-forced pass; returns `(logits, alignments)`."""
        check_same_batch(source=source, target_in=target_in)
        encoder_outputs, initial_state, source_mask = self.encode(source, training)
        return self.mark_built(
            self.decoder(target_in, encoder_outputs, initial_state, source_mask=source_mask, training=training)
        )

    def call(self, inputs, training=None):
        if _sources_only(inputs):  # `predict(source)` on any backend: greedy tokens (batch, max_output_length)
            source = inputs["source"] if isinstance(inputs, dict) else inputs
            check_token_ids(source, "source")  # before the cast, which would hide float "ids"
            tokens, _, _ = self._greedy(ops.cast(source, "int32"), self.max_output_length)
            return tokens
        source, target_in, oracle = self._unpack(inputs)
        logits, alignments = self.forward(source, target_in, training=training)
        if training and self.alignment_loss_weight:
            if oracle is None:
                raise ValueError(
                    "This model supervises its attention (alignment_loss_weight="
                    f"{self.alignment_loss_weight}), so training inputs need an 'alignment' entry "
                    "(the oracle weights, see `losses.oracle_weights`). Received: no 'alignment'"
                )
            # (batch, tgt_len, src_len) against alpha of the same shape; under several replicas each one's share of
            # the batch's mean: one device's loss and gradients (tests/test_distributed.py)
            self.add_loss(self.alignment_loss_weight * attention_supervision_loss(oracle, alignments))
        return logits  # (batch, tgt_len, vocab)

    def alignments(self, source, target_in):
        """Attention weights under teacher forcing: `(batch, tgt_len, src_len)`."""
        return self.forward(source, target_in, training=False)[1]

    # -- decoding ---------------------------------------------------------------

    def _greedy(self, source, max_length):
        encoder_outputs, initial_state, source_mask = self.encode(source, training=False)
        memory = self.decoder.prepare_memory(encoder_outputs, initial_state, source_mask)
        return greedy_decode(
            self.decoder, memory, self.decoder.start_state(initial_state),
            self.start_id, self.stop_id, max_length, pad_id=self.pad_id,
        )

    def greedy_function(self):
        """Greedy decoding compiled once for any batch size, source length and
        `max_length` (TensorFlow); the plain method on other backends."""
        if self._greedy_compiled is None:
            if keras.backend.backend() == "jax":
                self._greedy_compiled = self._jax_greedy()
            elif keras.backend.backend() != "tensorflow":
                self._greedy_compiled = lambda source, max_length: self._greedy(source, int(max_length))
            else:
                self._greedy_compiled = compile_once(self._greedy, [((None, None), "int32"), ((), "int32")])
        return self._greedy_compiled

    def _jax_greedy(self):
        """`jax.jit` of greedy decoding with the weights passed in as arguments,
        so that training after the first call never leaves stale weights."""
        import jax

        def pure(values, source, max_length):
            with keras.StatelessScope(state_mapping=list(zip(self.variables, values))):
                return self._greedy(source, max_length)

        jitted = jax.jit(pure, static_argnums=2)
        return lambda source, max_length: jitted([v.value for v in self.variables], source, int(max_length))

    def generate(self, source, max_length=None, beam_width=1, length_penalty=1.0):
        """Decodes `source` (integer array `(batch, src_len)`).

        Returns a dict of NumPy arrays: `tokens (batch, max_length)`,
        `alignments (batch, max_length, src_len)` and `scores (batch,)`. With
        `beam_width=1` (greedy) `scores` is the log-probability of each output.
        With `beam_width > 1` beam search is used: `tokens`/`alignments` hold the
        best hypothesis, `scores` its length-normalised score (see
        `course_lib.decoding.beam`), `log_probs` its log-probability, and the
        `beam_*` entries all k hypotheses. `length_penalty` ranks the beam's
        hypotheses, so greedy decoding takes only the default, 1.0.
        """
        source = check_source(source, self.source_vocab_size)
        max_length = self.max_output_length if max_length is None else max_length
        check_beam_options(beam_width, length_penalty, self.target_vocab_size, max_length)
        check_greedy_length_penalty(beam_width, length_penalty)
        self.build()
        if beam_width > 1:
            return beam_search_model(self, source, max_length, beam_width, length_penalty)
        tokens, alignments, scores = self.greedy_function()(source.astype("int32"), np.int32(max_length))
        return {
            "tokens": np.asarray(tokens),
            "alignments": np.asarray(alignments),
            "scores": np.asarray(scores),
        }

    # -- Keras plumbing -----------------------------------------------------------

    tuple_inputs = ("source", "target_in")

    def token_id_sizes(self):
        return {"source": self.source_vocab_size, "target_in": self.target_vocab_size,
                "targets": self.target_vocab_size}

    def build_sublayers(self):
        """Builds the encoder, then the decoder, for any batch size and length."""
        tokens_shape = (None, None)  # (batch, length)
        self.encoder.build(tokens_shape)
        encoder_outputs_shape, initial_state_shape, _ = self.encoder.compute_output_shape(tokens_shape)
        if self.attention:
            self.decoder.build(tokens_shape, encoder_outputs_shape)
        else:
            self.decoder.build(tokens_shape, encoder_outputs_shape, initial_state_shape)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if not config.get("attention", True) and config.get("attention_units") is not None:
            # Plain models saved before `attention_units` was refused with them hold the translation
            # task's value, which the plain decoder never read.
            config = {**config, "attention_units": None}
        if config.get("attention", True) and config.get("option", 1) == 2:
            # Attentional models saved before `option=2` was refused with them: the decoder never read it.
            config = {**config, "option": 1}
        return super().from_config(config, custom_objects=custom_objects)

    def get_config(self):
        return {
            **super().get_config(),
            "source_vocab_size": self.source_vocab_size,
            "target_vocab_size": self.target_vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "encoder_units": self.encoder_units,
            "attention": self.attention,
            "option": self.option,
            "bidirectional": self.bidirectional,
            "attention_units": self.attention_units,
            "deep_output": self.deep_output,
            "teacher_forcing_ratio": self.teacher_forcing_ratio,
            "conditional": self.conditional,
            "alignment_loss_weight": self.alignment_loss_weight,
            "start_id": self.start_id,
            "stop_id": self.stop_id,
            "pad_id": self.pad_id,
            "max_output_length": self.max_output_length,
        }


def _sources_only(inputs):
    """True for a bare `(batch, src_len)` tensor or `{"source": ...}` alone."""
    if isinstance(inputs, dict):
        return set(inputs) == {"source"}
    return not isinstance(inputs, (list, tuple))
