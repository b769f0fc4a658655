"""The document classifier of an encoder, compiled for training."""

from course_lib.compiling import training_jit_compile


def build_classifier(vocab_size, num_classes, encoder="han", **sizes):
    """A compiled `DocumentClassifier` (Adam, cross-entropy, accuracy)."""
    import keras

    from course_lib.models.document_classifier import DocumentClassifier

    learning_rate = sizes.pop("learning_rate", 2e-3)
    model = DocumentClassifier(vocab_size, num_classes, encoder=encoder, **sizes)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, clipnorm=5.0),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        jit_compile=training_jit_compile(),
    )
    return model
