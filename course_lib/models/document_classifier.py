"""Document classification: `P(y | document) = softmax(V s + b)`.

`s` comes from one of three encoders:

* `"han"`: the hierarchical attention network (`HierarchicalAttentionEncoder`),
* `"plain"`: the lecture's plain hierarchical encoder (`HierarchicalEncoder`),
* `"flat"`: a baseline that ignores sentences: one bidirectional GRU over all
  the words of the document, then attention pooling against a learned `u_w`.
"""

import keras
from keras import ops

from course_lib.compiling import compile_once
from course_lib.encoders.bidirectional import make_bidirectional
from course_lib.encoders.hierarchical import (
    HierarchicalAttentionEncoder,
    HierarchicalEncoder,
    check_documents,
    document_masks,
)
from course_lib.layers.attention_pooling import AttentionPooling
from course_lib.layers.freezing import pass_trainable_down
from course_lib.layers.masking import (
    check_count, check_flag, check_known_token_range, check_token_range, check_unread_options, run_recurrent,
)
from course_lib.layers.precision import at_least_float32
from course_lib.models.checking_ids import ChecksTokenIds
from course_lib.models.building import BuildsSublayers
from course_lib.models.keeping_weights import KeepsWeightsOnError

ENCODERS = ("han", "plain", "flat")

# The options an encoder never reads, with the values it runs as (the defaults of `DocumentClassifier`).
UNREAD_OPTIONS = {
    "han": {},
    "plain": {"attention_units": None, "sentence_state_dropout": 0.0},
    "flat": {"sentence_units": 32, "bidirectional": True, "sentence_state_dropout": 0.0},
}
UNREAD_REASONS = {
    "plain": "`attention_units` and `sentence_state_dropout` apply to the \"han\" encoder only (the plain "
             "hierarchical encoder has no attention and no sentence-state dropout)",
    "flat": "`sentence_units`, `sentence_state_dropout` and `bidirectional=False` apply to the hierarchical "
            "encoders (\"han\", \"plain\") only (the flat encoder has no sentence level, and its GRU is always "
            "bidirectional)",
}


@keras.saving.register_keras_serializable(package="course_lib")
class FlatAttentionEncoder(keras.layers.Layer):
    """Non-hierarchical baseline: BiGRU over the concatenated words, attention pooling.

    Args:
        vocab_size, embedding_dim: word ids (0 = padding) and embedding size.
        units: GRU size per direction.
        attention_units: size of `u_j` and `u_w` (default `2 * units`).

    Call arguments:
        documents: integer ids `(batch, sentences, words)`, read as one long
            sequence of `sentences * words` positions; padding is skipped.
        training: Python boolean.

    Returns:
        `(document_vector, word_weights)`: `(batch, 2 * units)` and
        `(batch, sentences, words)` (the weights folded back per sentence).
    """

    def __init__(self, vocab_size, embedding_dim, units, attention_units=None, **kwargs):
        super().__init__(**kwargs)
        # Plain ints: a NumPy integer is accepted, and Keras layers refuse it.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.units = check_count(units, "units")
        # 0 is refused, not taken for the default
        self.attention_units = None if attention_units is None else check_count(attention_units, "attention_units")
        self.embedding = keras.layers.Embedding(
            self.vocab_size, self.embedding_dim, dtype=self.dtype_policy, name="embedding"
        )
        self.rnn = make_bidirectional(
            keras.layers.GRU(self.units, return_sequences=True, dtype=self.dtype_policy, name="gru"),
            dtype=self.dtype_policy, name="bigru",
        )
        self.attention = AttentionPooling(
            2 * self.units if attention_units is None else self.attention_units, context_name="u_w",
            dtype=self.dtype_policy, name="attention",
        )
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    @property
    def output_dim(self):
        return 2 * self.units

    def build(self, documents_shape):
        if len(documents_shape) != 3:
            raise ValueError(
                "FlatAttentionEncoder expects documents of rank 3 (batch, sentences, words). "
                f"Received: documents.shape={tuple(documents_shape)}"
            )
        self.embedding.build((None, None))
        self.rnn.build((None, None, self.embedding_dim))
        self.attention.build((None, None, 2 * self.units))

    def call(self, documents, training=None):
        check_documents(documents)
        check_known_token_range(documents, self.vocab_size, "documents")  # eager calls: -1 would read the last row
        word_mask, _ = document_masks(documents)
        shape = ops.shape(documents)
        flat_ids = ops.reshape(documents, (shape[0], -1))  # (batch, S*W)
        flat_mask = ops.reshape(word_mask, (shape[0], -1))  # (batch, S*W)
        # Each sentence's padding sits inside the flattened row; `run_recurrent` runs the GRU
        # over the real words moved to the front (as cuDNN needs) and puts the states back.
        states = run_recurrent(self.rnn, self.embedding(flat_ids), flat_mask, training=training)  # (batch, S*W, 2u)
        document, weights = self.attention(states, mask=flat_mask)  # (batch, 2u), (batch, S*W)
        return document, ops.reshape(weights, shape)

    def compute_output_shape(self, documents_shape):
        return (documents_shape[0], self.output_dim), tuple(documents_shape)

    def compute_mask(self, *args, **kwargs):
        return None

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "attention_units": self.attention_units,
        }


@keras.saving.register_keras_serializable(package="course_lib")
class DocumentClassifier(ChecksTokenIds, BuildsSublayers, KeepsWeightsOnError, keras.Model):
    """A document encoder followed by `softmax(V s + b)`.

    Args:
        vocab_size: word ids, padding (0) included.
        num_classes: number of classes.
        encoder: "han", "plain" or "flat" (see the module docstring).
        embedding_dim: word embedding size.
        word_units: word-level GRU size per direction.
        sentence_units: sentence-level GRU size per direction (hierarchical encoders).
        attention_units: size of `u_w`/`u_s` (default: the size of the states they score,
            twice the GRU size when `bidirectional`); "han" and "flat".
        bidirectional: bidirectional GRUs in the hierarchical encoders (the flat
            encoder's is always bidirectional).
        dropout: dropout rate on the document vector `s` before the softmax.
        sentence_state_dropout: recurrent dropout of the HAN's sentence GRU
            (see `HierarchicalAttentionEncoder`).

    An option the chosen encoder does not read (`UNREAD_OPTIONS`) is refused
    unless it keeps its default.

    Call arguments:
        documents: integer ids `(batch, sentences, words)`.
        training: Python boolean: the dropout before the classifier acts only in training.

    Returns:
        Class probabilities `(batch, num_classes)`. `explain(documents)` gives
        the probabilities with the attention weights.
    """

    def __init__(
        self,
        vocab_size,
        num_classes,
        encoder="han",
        embedding_dim=64,
        word_units=32,
        sentence_units=32,
        attention_units=None,
        bidirectional=True,
        dropout=0.0,
        sentence_state_dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if encoder not in ENCODERS:
            raise ValueError(f"`encoder` must be one of {ENCODERS}. Received: encoder={encoder!r}")
        given = {"attention_units": attention_units, "sentence_units": sentence_units,
                 "bidirectional": bidirectional, "sentence_state_dropout": sentence_state_dropout}
        if UNREAD_OPTIONS[encoder]:  # used to be accepted, saved and ignored
            check_unread_options(given, UNREAD_OPTIONS[encoder], UNREAD_REASONS[encoder], encoder=encoder)
        # Plain ints, as the encoders store them: Keras layers refuse NumPy integers.
        self.vocab_size = check_count(vocab_size, "vocab_size")
        self.num_classes = check_count(num_classes, "num_classes", least=2)  # `labels.max() + 1`: a NumPy integer
        self.encoder_kind = encoder
        self.embedding_dim = check_count(embedding_dim, "embedding_dim")
        self.word_units = check_count(word_units, "word_units")
        self.sentence_units = check_count(sentence_units, "sentence_units")
        self.attention_units = None if attention_units is None else check_count(attention_units, "attention_units")
        self.bidirectional = check_flag(bidirectional, "bidirectional")
        self.dropout_rate = dropout
        self.sentence_state_dropout = sentence_state_dropout
        if encoder == "han":
            self.encoder = HierarchicalAttentionEncoder(
                self.vocab_size, self.embedding_dim, self.word_units, self.sentence_units,
                attention_units=self.attention_units, bidirectional=bidirectional,
                sentence_state_dropout=sentence_state_dropout, dtype=self.dtype_policy, name="encoder",
            )
        elif encoder == "plain":
            self.encoder = HierarchicalEncoder(
                self.vocab_size, self.embedding_dim, self.word_units, self.sentence_units,
                bidirectional=bidirectional, dtype=self.dtype_policy, name="encoder",
            )
        else:
            self.encoder = FlatAttentionEncoder(
                self.vocab_size, self.embedding_dim, self.word_units, attention_units=self.attention_units,
                dtype=self.dtype_policy, name="encoder",
            )
        self.dropout = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")
        self._compiled_explain = None
        # V and b of P(y | document) = softmax(V s + b), in float32 under a mixed policy (float64 under float64).
        self.classifier = keras.layers.Dense(self.num_classes, activation="softmax", dtype=at_least_float32(self.dtype_policy), name="classifier")
        pass_trainable_down(self)  # `trainable=False` also freezes the sub-layers made above

    def encode(self, documents, training=None):
        """A dict: `document` `(batch, D)`, and the weights the encoder has
        (`sentence_weights` `(batch, S)`, `word_weights` `(batch, S, W)`)."""
        check_documents(documents)
        if self.encoder_kind == "flat":
            document, word_weights = self.encoder(documents, training=training)
            return {"document": document, "word_weights": word_weights}
        if not self.built:  # `encode` bypasses the encoder's `__call__`; building the model builds it, once
            self.build()
        encoded = self.encoder.encode(documents, training=training)
        return {k: v for k, v in encoded.items() if k in ("document", "sentence_weights", "word_weights")}

    def call(self, documents, training=None):
        document = self.encode(documents, training=training)["document"]  # (batch, D)
        return self.classifier(self.dropout(document, training=training))  # (batch, num_classes)

    def explain(self, documents):
        """Probabilities and the encoder's attention weights (NumPy), `training=False`.

        `word_weights` and `sentence_weights` where the encoder has them; the
        plain hierarchical encoder (`encoder="plain"`) has none.

        For the flat baseline the sentence weights are the sums of its word
        weights over each sentence (it has no sentence level of its own).
        """
        import numpy as np

        documents = np.asarray(documents)
        if documents.ndim != 3 or not np.issubdtype(documents.dtype, np.integer):
            raise ValueError(
                "`documents` must be an integer array (batch, sentences, words). "
                f"Received: documents.shape={documents.shape}, dtype={documents.dtype}"
            )
        check_token_range(documents, self.vocab_size, "documents")
        if 0 in documents.shape[1:]:
            raise ValueError(
                f"`documents` needs at least one sentence of one word. Received: documents.shape={documents.shape}"
            )
        if not self.built:  # eagerly, before the compiled pass (and so that a later call does not build again)
            self.build()
        outputs = self._explain_function()(documents.astype("int32"))
        result = {key: np.asarray(value) for key, value in outputs.items()}
        if "sentence_weights" not in result and self.encoder_kind == "flat":
            result["sentence_weights"] = result["word_weights"].sum(axis=-1)
        return result

    def _explain_function(self):
        """`explain`'s forward pass, compiled once for any batch and block size."""
        if getattr(self, "_compiled_explain", None) is None:
            def forward(documents):
                encoded = self.encode(documents, training=False)
                # float32 under a mixed policy too, as the other models' alignments: NumPy has no bfloat16 maths
                outputs = {key: ops.cast(value, at_least_float32(value.dtype))
                           for key, value in encoded.items() if key != "document"}
                outputs["probabilities"] = self.classifier(encoded["document"])
                return outputs

            self._compiled_explain = compile_once(forward, [((None, None, None), "int32")])
        return self._compiled_explain

    bare_input = "documents"
    targets_name = "labels"

    def token_id_sizes(self):
        return {"documents": self.vocab_size, "labels": self.num_classes}

    def build_sublayers(self):
        """Builds the encoder and the classifier, for any number of documents, sentences and words."""
        self.encoder.build((None, None, None))  # (batch, sentences, words)
        self.dropout.build((None, self.encoder.output_dim))
        self.classifier.build((None, self.encoder.output_dim))

    @classmethod
    def from_config(cls, config, custom_objects=None):
        # Models saved before unread options were refused can hold them: the documents task once gave every
        # encoder `sentence_units=50` on real data, and `model_kwargs` reached any encoder. The encoder never
        # read them, so they are set back to the values it ran as.
        unread = UNREAD_OPTIONS.get(config.get("encoder", "han"), {})
        config = {**config, **{name: default for name, default in unread.items() if name in config}}
        return super().from_config(config, custom_objects=custom_objects)

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "num_classes": self.num_classes,
            "encoder": self.encoder_kind,
            "embedding_dim": self.embedding_dim,
            "word_units": self.word_units,
            "sentence_units": self.sentence_units,
            "attention_units": self.attention_units,
            "bidirectional": self.bidirectional,
            "dropout": self.dropout_rate,
            "sentence_state_dropout": self.sentence_state_dropout,
        }


__all__ = ["DocumentClassifier", "ENCODERS", "FlatAttentionEncoder"]
