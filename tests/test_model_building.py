"""What every model does once it is built: each sublayer is built and counted, the model's dtype
policy reaches every sublayer, a model used only through `forward` saves and reloads, its
config holds every constructor argument, and it prints its summary."""

import keras
import numpy as np
import pytest

from course_lib.encoders.hierarchical import HierarchicalEncoder
from course_lib.models import Seq2Seq
from course_lib.models.captioner import ImageCaptioner
from course_lib.models.dialog import HierarchicalDialogModel
from course_lib.models.document_classifier import DocumentClassifier
from course_lib.models.language_model import RNNLanguageModel
from layer_testing import DOCUMENT_VOCAB, check_config_holds_arguments, check_summary, documents_with_an_empty_sentence


@pytest.mark.parametrize("encoder", ["han", "plain"])
def test_a_document_classifiers_hierarchical_encoder_is_built_and_counted(encoder):
    model = DocumentClassifier(DOCUMENT_VOCAB, 3, encoder=encoder, embedding_dim=4, word_units=5, sentence_units=6)
    model(documents_with_an_empty_sentence())
    assert model.encoder.built
    assert model.encoder.count_params() + model.classifier.count_params() == model.count_params()
    assert all(weight.path.startswith(f"{model.name}/encoder/") for weight in model.encoder.weights)


def test_the_dialog_models_context_encoder_is_built():
    model = HierarchicalDialogModel(DOCUMENT_VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7)
    model.build()
    assert model.encoder.built and model.encoder.count_params() > 0


def _teacher_forced_pass(kind):
    """A fresh model of `kind` and a function running its teacher-forced pass on fixed inputs."""
    keras.utils.set_random_seed(0)
    if kind == "seq2seq":
        model = Seq2Seq(12, 10, embedding_dim=4, units=6)
        return model, lambda m: m.forward(np.array([[5, 6, 7]], "int32"), np.array([[1, 4]], "int32"))
    if kind == "captioner":
        model = ImageCaptioner(12, decoder="attention", image_size=16, cnn_filters=(4, 8), embedding_dim=4, units=6)
        images = np.random.default_rng(0).uniform(0, 255, (1, 16, 16, 3)).astype("float32")
        return model, lambda m: m.forward({"image": images, "target_in": np.array([[1, 4]], "int32")})
    model = HierarchicalDialogModel(DOCUMENT_VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7)
    return model, lambda m: m.forward(documents_with_an_empty_sentence()[:1], np.array([[1, 4]], "int32"))


SUMMARIZED = {
    "seq2seq": lambda: Seq2Seq(12, 10, embedding_dim=4, units=6),
    "seq2seq-conditional": lambda: Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True, conditional=True),
    "seq2seq-plain": lambda: Seq2Seq(12, 10, embedding_dim=4, units=6, attention=False, option=2),
    "captioner": lambda: ImageCaptioner(12, image_size=16, cnn_filters=(4, 8), embedding_dim=4, units=6),
    "captioner-option1": lambda: ImageCaptioner(12, decoder="option1", image_size=16, cnn_filters=(4, 8),
                                                vector_dim=6, embedding_dim=4, units=6),
    "dialog": lambda: HierarchicalDialogModel(DOCUMENT_VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7),
    "documents": lambda: DocumentClassifier(DOCUMENT_VOCAB, 3, embedding_dim=4, word_units=5, sentence_units=6),
    "documents-flat": lambda: DocumentClassifier(DOCUMENT_VOCAB, 3, encoder="flat", embedding_dim=4, word_units=5),
}


@pytest.mark.parametrize("kind", list(SUMMARIZED))
def test_every_model_prints_its_summary_for_any_batch_and_length(kind):
    # Keras asks each sublayer of a subclassed model for its output shape from the shapes it was built
    # with: the attentional decoders' `compute_output_shape` once wanted one argument more than that.
    text = check_summary(SUMMARIZED[kind](), lambda model: model.build())
    # Built for open sizes: no batch or length size of an example input shows up in the table.
    assert "(None," in text and not any(f"({size}," in text for size in (1, 2, 3)), text


@pytest.mark.parametrize("kind", ["seq2seq", "captioner", "dialog"])
def test_a_model_run_only_through_forward_saves_without_the_unbuilt_warning(kind, tmp_path):
    import warnings

    model, forward = _teacher_forced_pass(kind)
    logits, _ = forward(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.save(tmp_path / "model.keras")
    assert not [w for w in caught if "not yet been built" in str(w.message)]
    reloaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(np.asarray(forward(reloaded)[0]), np.asarray(logits), atol=1e-5)


def test_a_models_dtype_policy_reaches_every_sublayer():
    model = Seq2Seq(12, 10, embedding_dim=4, units=6, bidirectional=True, dtype="mixed_float16")
    model.build()
    for layer in (model.encoder, model.encoder.embedding, model.encoder.rnn, model.encoder.bridge,
                  model.decoder, model.decoder.attention, model.decoder.cell):
        assert layer.dtype_policy.name == "mixed_float16", layer.name
    assert model.decoder.output_layer.dtype_policy.name == "float32"  # logits stay float32
    logits = model({"source": np.array([[5, 6, 0]], "int32"), "target_in": np.array([[1, 4]], "int32")})
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"


def test_a_models_dtype_policy_reaches_the_cnn_and_the_plain_hierarchical_grus():
    captioner = ImageCaptioner(12, decoder="option1", image_size=16, cnn_filters=(4, 8), vector_dim=6,
                               embedding_dim=4, units=6, dtype="mixed_float16")
    encoder = captioner.image_encoder
    for layer in [*encoder.convolutions, encoder.pool, encoder.fc, encoder.fc_dropout]:
        assert layer.dtype_policy.name == "mixed_float16", layer.name
    plain = HierarchicalEncoder(DOCUMENT_VOCAB, 4, 5, 6, dtype="mixed_float16")
    for layer in (plain.word_rnn, plain.sentence_rnn):
        assert layer.dtype_policy.name == "mixed_float16", layer.name


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_language_model_generates_under_mixed_precision(cell):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = RNNLanguageModel(10, embedding_dim=4, units=6, cell=cell)
        tokens, log_probs = layer.generate(num_samples=2, max_length=5)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert np.asarray(tokens).shape == (2, 5) and np.all(np.isfinite(np.asarray(log_probs)))


CONFIGURED_MODELS = {  # one model of every kind, each with some arguments away from their defaults
    "seq2seq, bidirectional with attention": (Seq2Seq, dict(
        source_vocab_size=12, target_vocab_size=10, embedding_dim=4, units=6, bidirectional=True, deep_output=True,
        max_output_length=7, pad_id=3)),
    "seq2seq, plain option 2": (Seq2Seq, dict(
        source_vocab_size=12, target_vocab_size=10, embedding_dim=4, units=6, attention=False, option=2)),
    "captioner": (ImageCaptioner, dict(
        vocab_size=12, decoder="attention", image_size=16, cnn_filters=(4, 8), embedding_dim=4, units=6)),
    "document classifier": (DocumentClassifier, dict(
        vocab_size=DOCUMENT_VOCAB, num_classes=3, encoder="plain", embedding_dim=4, word_units=5, sentence_units=6)),
    "dialog": (HierarchicalDialogModel, dict(
        vocab_size=DOCUMENT_VOCAB, embedding_dim=4, word_units=5, sentence_units=6, units=7)),
    "language model": (RNNLanguageModel, dict(vocab_size=10, embedding_dim=4, units=6, cell="lstm")),
}


@pytest.mark.parametrize("kind", list(CONFIGURED_MODELS))
def test_a_models_config_holds_every_constructor_argument(kind):
    """A model saved as `.keras` is rebuilt from its config: an argument left out comes back as its default."""
    model_cls, arguments = CONFIGURED_MODELS[kind]
    check_config_holds_arguments(model_cls, arguments, model_cls(**arguments).get_config())


# The language model is a layer: `run_layer_test` freezes it.
@pytest.mark.parametrize("kind", [kind for kind in CONFIGURED_MODELS if kind != "language model"])
def test_a_frozen_model_has_no_trainable_weight_left(kind):
    """An outer model trains every weight whose own flag says trainable, whatever the frozen model says."""
    model_cls, arguments = CONFIGURED_MODELS[kind]
    frozen = model_cls(**arguments, trainable=False)
    frozen.build()  # by example: every sub-layer
    assert frozen.weights and not [weight.path for weight in frozen.weights if weight.trainable]


def _reversal_batch():
    source = np.random.default_rng(0).integers(3, 14, size=(32, 5)).astype("int32")
    target_in = np.concatenate([np.ones((32, 1), "int32"), source[:, ::-1][:, :4]], axis=1)
    return {"source": source, "target_in": target_in}, source[:, ::-1]


class _EpochsSeen(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.epochs = []

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(epoch)


@pytest.mark.parametrize("given", ["by_position", "as_a_callback_list"])
def test_callbacks_given_by_position_or_as_a_callback_list_come_after_the_finite_loss_check(given):
    """`fit(x, y, 16, 1, 0, [callback])` used to raise "got multiple values for argument 'callbacks'", and a
    `keras.callbacks.CallbackList` given by name could not be unpacked into a list (TypeError)."""
    inputs, targets = _reversal_batch()
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6)

    def fit(learning_rate, epochs, seen):
        model.compile(keras.optimizers.SGD(learning_rate))
        if given == "by_position":
            model.fit(inputs, targets, 16, epochs, 0, [seen])
        else:
            callbacks = keras.callbacks.CallbackList([seen], add_history=True, model=model)
            model.fit(inputs, targets, batch_size=16, epochs=epochs, verbose=0, callbacks=callbacks)

    fit(1e-2, 1, seen := _EpochsSeen())
    assert seen.epochs == [0]
    with pytest.raises(ValueError, match="Training diverged"):
        fit(1e38, 2, seen := _EpochsSeen())  # the weights overflow in the first epoch
    assert seen.epochs == []  # the check ran first: the diverged epoch never reached the given callbacks


def test_a_given_terminate_on_nan_handles_the_nan_loss_itself():
    """Keras's `TerminateOnNaN` stops the loop (or raises a `RuntimeError` with `raise_error=True`); a fit given one
    used to raise the course's `ValueError` all the same at the end of the epoch."""
    inputs, targets = _reversal_batch()
    model = Seq2Seq(14, 14, embedding_dim=8, units=16, max_output_length=6)
    model.compile(keras.optimizers.SGD(1e38))
    history = model.fit(inputs, targets, batch_size=8, epochs=3, verbose=0, callbacks=[keras.callbacks.TerminateOnNaN()])
    assert len(history.history["loss"]) == 1  # stopped in the first epoch, without an error
    with pytest.raises(RuntimeError, match="NaN or Inf loss"):
        model.fit(inputs, targets, batch_size=8, epochs=1, verbose=0,
                  callbacks=[keras.callbacks.TerminateOnNaN(raise_error=True)])


def test_a_sublayer_that_build_does_not_create_gets_its_optimizer_slots():
    """A subclass whose `call` uses a layer of its own: the optimizer, built eagerly before that layer existed,
    refused its gradients (`ValueError: Unknown variable: extra/kernel`)."""

    class WithExtra(Seq2Seq):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.extra = keras.layers.Dense(14, name="extra")

        def call(self, inputs, training=None):
            return self.extra(super().call(inputs, training=training))  # (batch, tgt_len, 14)

    inputs, targets = _reversal_batch()
    keras.utils.set_random_seed(0)
    model = WithExtra(14, 14, embedding_dim=8, units=16, max_output_length=6)
    model.compile(keras.optimizers.Adam(1e-2))
    history = model.fit(inputs, targets, batch_size=16, epochs=2, verbose=0)
    assert model.extra.built and np.isfinite(history.history["loss"]).all()
    assert model.optimizer.built and len(model.optimizer.variables) > 2 * len(model.trainable_variables)
