"""The `ImageCaptioner` of a run's settings; `CaptioningRun`, a trained captioner with its data; generated captions."""

from dataclasses import dataclass, field

from course_lib.text.vocabulary import Vocabulary


@dataclass
class CaptioningRun:
    """A trained captioner with everything needed to use and evaluate it.

    Attributes:
        model: the `ImageCaptioner`.
        vocabulary: its word `Vocabulary` (`data.captions.caption_vocabulary`).
        settings: dataset, encoder, decoder, sizes and seeds (saved as `run.json`).
        history: Keras history dict (loss, token_accuracy, val_...).
        train_seconds: wall time of `fit`.
        data: the parts the run used (`ShapesSplit` or `CaptionedImages`).
        inputs: the model inputs of each part (images or cached features).
    """

    model: object
    vocabulary: Vocabulary
    settings: dict
    history: dict = field(default_factory=dict)
    train_seconds: float = 0.0
    data: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)

    @property
    def grid(self):
        return tuple(self.model.grid)


def build_captioner(settings, vocabulary, feature_shapes=None):
    """The `ImageCaptioner` of a run's settings, as `train_captioning` records them (a plain decoder's
    `deep_output` is False there; the profiles' True is refused by `ImageCaptioner` for option 1 and 2;
    runs saved before `location_coordinates` existed had none)."""
    from course_lib.models.captioner import ImageCaptioner

    common = dict(
        decoder=settings["decoder"], embedding_dim=settings["embedding_dim"], units=settings["units"],
        max_output_length=settings["max_length"], deep_output=settings.get("deep_output", False),
        location_coordinates=settings.get("location_coordinates", False),
    )
    if settings["encoder"] == "small":
        return ImageCaptioner(len(vocabulary), encoder="small", image_size=settings["image_size"],
                              cnn_filters=settings["cnn_filters"], **common)
    locations, channels, vector_dim = feature_shapes
    return ImageCaptioner(len(vocabulary), encoder="features", feature_locations=locations,
                          feature_channels=channels, feature_vector_dim=vector_dim, **common)


def generate_captions(model, vocabulary, inputs, beam_width=1, max_length=None):
    """Captions (strings), their word lists and the attention behind each word.

    Returns:
        `(captions, words, alignments)`: N strings, N word lists and
        `(N, steps, L)` weights (row t of image n produced words[n][t]).
    """
    outputs = model.generate(inputs, max_length=max_length, beam_width=beam_width)
    captions = [vocabulary.decode(row) for row in outputs["tokens"]]
    return captions, [c.split() for c in captions], outputs["alignments"]
