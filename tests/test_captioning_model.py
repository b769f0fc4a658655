"""The ImageCaptioner: options 1 and 2, attention over locations, decoding, saving."""

import keras
import numpy as np
import pytest

from course_lib.models.captioner import ImageCaptioner
from layer_testing import check_reload_keeps_training

VOCAB = 12


def _inputs(batch=3, size=32, length=5, seed=0):
    rng = np.random.default_rng(seed)
    target_in = rng.integers(4, VOCAB, (batch, length)).astype("int32")
    target_in[:, 0] = 1
    return {"image": rng.uniform(0, 255, (batch, size, size, 3)).astype("float32"), "target_in": target_in}


def _small(decoder, **kwargs):
    keras.utils.set_random_seed(0)
    fc7 = {} if decoder == "attention" else {"vector_dim": 24}  # the attentional decoder reads no fc7 vector
    return ImageCaptioner(VOCAB, decoder=decoder, image_size=32, cnn_filters=(4, 8), embedding_dim=8, units=16,
                          max_output_length=6, **fc7, **kwargs)


@pytest.mark.parametrize("decoder", ["attention", "option1", "option2"])
def test_teacher_forcing_shapes_and_save_load(decoder, tmp_path):
    model = _small(decoder)
    inputs = _inputs()
    model(inputs)
    logits, alignments = model.forward(inputs)
    assert tuple(logits.shape) == (3, 5, VOCAB)
    width = 64 if decoder == "attention" else 1  # 8 x 8 locations, or fc7 alone
    assert tuple(alignments.shape) == (3, 5, width)
    if decoder == "attention":
        np.testing.assert_allclose(np.asarray(alignments).sum(-1), 1.0, atol=1e-5)
    else:
        assert not np.asarray(alignments).any()
    model.compile("adam")
    path = tmp_path / "captioner.keras"
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(np.asarray(model(inputs)), np.asarray(reloaded(inputs)), atol=1e-5)
    ours, theirs = model.generate(inputs), reloaded.generate(inputs)
    np.testing.assert_array_equal(ours["tokens"], theirs["tokens"])
    np.testing.assert_allclose(ours["alignments"], theirs["alignments"], atol=1e-5)


def test_option1_projects_fc7_to_the_first_state():
    model = _small("option1")
    model.build()
    assert tuple(model.bridge.kernel.shape) == (24, 16)  # W_proj: units x D (stored transposed)
    assert model.bridge.bias is None
    assert model.image_encoder.fc is not None


def test_option1_later_words_still_depend_on_the_image():
    """Lecture Q2: the image enters only through s_0, yet word 5 depends on it."""
    model = _small("option1")
    first, second = _inputs(seed=1), _inputs(seed=1)
    second["image"] = _inputs(seed=2)["image"]
    difference = np.abs(np.asarray(model(first))[:, 4] - np.asarray(model(second))[:, 4]).max()
    assert difference > 1e-4


def test_option2_reads_the_vector_at_every_step():
    model = _small("option2")
    model.build()
    # GRU input = [e(y_{t-1}); fc7(I)] = 8 + 24.
    assert tuple(model.decoder.gru.cell.kernel.shape) == (8 + 24, 3 * 16)


def test_attention_model_has_no_fc_layer_and_attends_over_locations():
    model = _small("attention")
    model.build()
    assert model.image_encoder.fc is None
    assert model.grid == (8, 8)


def test_greedy_and_beam_outputs():
    model = _small("attention")
    inputs = {"image": _inputs(batch=4)["image"]}
    greedy = model.generate(inputs, max_length=6)
    assert greedy["tokens"].shape == (4, 6) and greedy["alignments"].shape == (4, 6, 64)
    weights = greedy["alignments"]
    live = weights.sum(-1) > 0
    np.testing.assert_allclose(weights.sum(-1)[live], 1.0, atol=1e-5)
    beam = model.generate(inputs, max_length=6, beam_width=3)
    assert beam["beam_tokens"].shape == (4, 3, 6)
    np.testing.assert_array_equal(beam["tokens"], beam["beam_tokens"][:, 0])
    assert beam["alignments"].shape == (4, 6, 64)
    assert np.all(np.diff(beam["beam_scores"], axis=1) <= 1e-6), "beams sorted best first"
    single = model.generate(inputs, max_length=6, beam_width=1)
    np.testing.assert_array_equal(single["tokens"], greedy["tokens"])


def test_batches_of_any_size_decode_alike():
    model = _small("option2")
    inputs = {"image": _inputs(batch=5)["image"]}
    whole = model.generate(inputs)
    pieces = model.generate(inputs, batch_size=2)
    np.testing.assert_array_equal(whole["tokens"], pieces["tokens"])


def test_features_encoder_with_vgg16_sizes(tmp_path):
    keras.utils.set_random_seed(0)
    model = ImageCaptioner(VOCAB, decoder="attention", encoder="features", feature_locations=196,
                           feature_channels=512, feature_vector_dim=4096, embedding_dim=8, units=16)
    rng = np.random.default_rng(0)
    inputs = {"locations": rng.normal(size=(2, 196, 512)).astype("float32"),
              "vector": rng.normal(size=(2, 4096)).astype("float32"),
              "target_in": np.array([[1, 5, 6], [1, 7, 8]], "int32")}
    _, alignments = model.forward(inputs)
    assert tuple(alignments.shape) == (2, 3, 196) and model.grid == (14, 14)
    option1 = ImageCaptioner(VOCAB, decoder="option1", encoder="features", feature_locations=196,
                             feature_channels=512, feature_vector_dim=4096, embedding_dim=8, units=16)
    option1.build()
    assert tuple(option1.bridge.kernel.shape) == (4096, 16)  # the lecture's d x 4096 matrix
    model.save(tmp_path / "f.keras")
    reloaded = keras.models.load_model(tmp_path / "f.keras")
    np.testing.assert_allclose(np.asarray(model(inputs)), np.asarray(reloaded(inputs)), atol=1e-5)


def test_bad_inputs_raise_clear_errors():
    model = _small("attention")
    with pytest.raises(ValueError, match="image.shape"):
        model({"image": np.zeros((2, 16, 16, 3), "float32"), "target_in": np.ones((2, 3), "int32")})
    with pytest.raises(ValueError, match="keys"):
        model({"target_in": np.ones((2, 3), "int32")})
    with pytest.raises(ValueError, match="decoder"):
        ImageCaptioner(VOCAB, decoder="option3")
    with pytest.raises(ValueError, match="feature_locations"):
        ImageCaptioner(VOCAB, encoder="features")
    with pytest.raises(ValueError, match="beam_width"):
        model.generate({"image": np.zeros((1, 32, 32, 3), "float32")}, beam_width=0)
    for beam_width in (1, 2):  # 0 is not "the default length"
        with pytest.raises(ValueError, match="max_length=0"):
            model.generate({"image": np.zeros((1, 32, 32, 3), "float32")}, max_length=0, beam_width=beam_width)


def test_fit_lowers_the_loss_on_a_tiny_batch():
    model = _small("attention")
    inputs = _inputs(batch=8)
    target_out = np.concatenate([inputs["target_in"][:, 1:], np.full((8, 1), 2, "int32")], axis=1)
    model.compile(keras.optimizers.Adam(1e-2))
    history = model.fit(inputs, target_out, epochs=40, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0], history.history["loss"]


def _features_captioner(decoder):
    keras.utils.set_random_seed(0)
    model = ImageCaptioner(20, decoder=decoder, encoder="features", feature_locations=4, feature_channels=3,
                           feature_vector_dim=5, embedding_dim=4, units=6)
    rng = np.random.default_rng(0)
    inputs = {"locations": rng.normal(size=(1, 4, 3)).astype("float32"),
              "vector": rng.normal(size=(1, 5)).astype("float32"), "target_in": np.array([[1, 5, 6]], "int32")}
    return model, inputs, rng


def test_option2_logits_depend_on_the_image_vector():
    model, inputs, rng = _features_captioner("option2")
    other = dict(inputs, vector=rng.normal(size=(1, 5)).astype("float32"))
    assert np.abs(np.asarray(model(other)) - np.asarray(model(inputs))).max() > 1e-4


def test_attention_captioner_does_not_depend_on_the_order_of_the_locations():
    """s_0 = tanh(W_init mean_j a_j) and c_t = sum_j alpha_jt a_j: neither sees the order of the 196 (here 4)
    locations, so reversing it changes no logit (a state started from, say, the last location would)."""
    model, inputs, _ = _features_captioner("attention")
    reversed_locations = dict(inputs, locations=inputs["locations"][:, ::-1].copy())
    np.testing.assert_allclose(np.asarray(model(reversed_locations)), np.asarray(model(inputs)), atol=1e-5)


@pytest.mark.parametrize("options, received", [(dict(deep_output=True), "deep_output=True"),
                                               (dict(attention_units=8), "attention_units=8")])
def test_plain_captioners_refuse_the_attentional_decoders_options(options, received):
    # The plain decoders have no deep output and no scoring network: these used to be silently ignored
    # (the captioning task saved its option-1 and option-2 runs with deep_output=True).
    with pytest.raises(ValueError, match=f"attentional decoder only. Received: .*{received}"):
        ImageCaptioner(VOCAB, decoder="option1", **options)
    config = {**ImageCaptioner(VOCAB, decoder="option2", image_size=32, cnn_filters=(4, 8)).get_config(),
              "deep_output": True}  # as such a run was saved
    assert ImageCaptioner.from_config(config).deep_output is False


def test_a_plain_captioner_saved_with_attention_units_still_loads():
    # A plain config holding attention_units (which its decoder never read) failed to load once the
    # value was refused; it goes back to None, as `Seq2Seq.from_config` does.
    model = ImageCaptioner(VOCAB, decoder="option1", image_size=32, cnn_filters=(4, 8))
    config = {**model.get_config(), "attention_units": 32, "deep_output": True}
    loaded = ImageCaptioner.from_config(config)
    assert loaded.attention_units is None and loaded.get_config() == model.get_config()
    # An attentional captioner keeps its value.
    attentional = ImageCaptioner(VOCAB, decoder="attention", image_size=32, cnn_filters=(4, 8), attention_units=32)
    assert ImageCaptioner.from_config(attentional.get_config()).attention_units == 32


@pytest.mark.parametrize("encoder, decoder, options, received", [
    ("small", "attention", dict(cnn_dropout=0.5), "cnn_dropout=0.5"),  # the dropout acts on fc7 alone
    ("small", "attention", dict(vector_dim=24), "vector_dim=24"),
    ("small", "option1", dict(feature_locations=4, feature_channels=3, feature_vector_dim=5),
     "feature_locations=4, feature_channels=3, feature_vector_dim=5"),
    ("features", "option2", dict(image_size=32, cnn_filters=(4, 8), cnn_dropout=0.5, convs_per_block=2),
     r"image_size=32, cnn_filters=\(4, 8\), convs_per_block=2, cnn_dropout=0.5"),
    ("features", "attention", dict(vector_dim=24), "vector_dim=24"),
])
def test_captioners_refuse_settings_their_encoder_or_decoder_never_reads(encoder, decoder, options, received):
    # These used to be accepted, saved and ignored; the defaults (which `get_config` saves) stay accepted.
    features = dict(feature_locations=4, feature_channels=3, feature_vector_dim=5) if encoder == "features" else {}
    with pytest.raises(ValueError, match=f"Received: {received}, encoder='{encoder}', decoder='{decoder}'"):
        ImageCaptioner(VOCAB, encoder=encoder, decoder=decoder, **{**features, **options})
    model = ImageCaptioner(VOCAB, encoder=encoder, decoder=decoder, image_size=48, cnn_filters=[16, 32, 64],
                           vector_dim=256, convs_per_block=1, cnn_dropout=0.0, **features)
    saved = {**model.get_config(), **options}  # as a model saved before the refusal could hold them
    assert ImageCaptioner.from_config(saved).get_config() == model.get_config()


@pytest.mark.parametrize("options, received", [
    (dict(units=8.9), "units=8.9"), (dict(image_size=48.9), "image_size=48.9"),
    (dict(embedding_dim=0), "embedding_dim=0"), (dict(max_output_length=2.5), "max_output_length=2.5"),
    (dict(attention_units=4.5), "attention_units=4.5"), (dict(deep_output="no"), "deep_output='no'"),
])
def test_captioners_refuse_fractional_sizes_and_a_deep_output_that_is_not_a_bool(options, received):
    # 8.9 units used to become 8, and the string "no" a deep output layer.
    with pytest.raises(ValueError, match=f"Received: {received}"):
        ImageCaptioner(VOCAB, **options)
    with pytest.raises(ValueError, match="Received: feature_channels=3.5"):
        ImageCaptioner(VOCAB, encoder="features", feature_locations=4, feature_channels=3.5, feature_vector_dim=5)


def test_the_captioning_task_trains_plain_decoders_without_the_deep_output_flag():
    from course_lib.tasks.captioning import train_captioning

    with pytest.raises(ValueError, match="Received: deep_output=True, decoder='option1'"):
        train_captioning("shapes", "option1", deep_output=True, epochs=1, train=8)
    with pytest.raises(ValueError, match="Received: location_coordinates=True, decoder='option2'"):
        train_captioning("shapes", "option2", location_coordinates=True, epochs=1, train=8)


@pytest.mark.parametrize("encoder", ["small", "features"])
@pytest.mark.parametrize("decoder", ["attention", "option1", "option2"])
def test_the_captioning_task_builds_each_captioner_with_only_the_settings_it_reads(encoder, decoder):
    # The profiles hold deep_output=True and the CNN's sizes for every configuration.
    from course_lib.tasks.captioning import build_captioner
    from course_lib.tasks.captioning.config import settings_for

    # `train_captioning` records deep_output=False for the plain decoders; build_captioner passes it as it stands.
    settings = {**settings_for("shapes", "fast"), "decoder": decoder, "encoder": encoder, "max_length": 6,
                "cnn_filters": [4, 8], "image_size": 32, "deep_output": decoder == "attention"}
    model = build_captioner(settings, list(range(VOCAB)), feature_shapes=(4, 3, 5))
    assert (model.encoder_kind, model.decoder_kind, model.deep_output) == (encoder, decoder, decoder == "attention")
    if decoder != "attention":  # the profile's True is not dropped quietly for a plain decoder
        with pytest.raises(ValueError, match=rf"deep_output=True.*decoder='{decoder}'"):
            build_captioner({**settings, "deep_output": True}, list(range(VOCAB)), feature_shapes=(4, 3, 5))
    if encoder == "small":
        assert model.image_size == 32 and model.cnn_filters == (4, 8)
    if decoder == "attention":  # the coordinates setting reaches the model
        located = build_captioner({**settings, "location_coordinates": True}, list(range(VOCAB)),
                                  feature_shapes=(4, 3, 5))
        assert located.location_coordinates and not model.location_coordinates


def test_the_unread_settings_tables_keep_the_constructors_defaults():
    # The refusal of unread settings compares with these tables; a default changed in one place only would
    # refuse the constructor's own default (or let a changed value through).
    import inspect

    from course_lib.layers.masking import _is_default  # how check_unread_options compares
    from course_lib.models import captioner, document_classifier

    def defaults(cls):
        return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()}

    for table in (captioner.CNN_DEFAULTS, captioner.FC_DEFAULTS, captioner.FEATURE_DEFAULTS):
        for name, value in table.items():
            assert _is_default(defaults(ImageCaptioner)[name], value), name
    for options in document_classifier.UNREAD_OPTIONS.values():
        for name, value in options.items():
            assert _is_default(defaults(document_classifier.DocumentClassifier)[name], value), name


@pytest.mark.parametrize("decoder", ["attention", "option1"])
def test_a_reloaded_captioner_evaluates_alike_and_trains_on(decoder, tmp_path):
    # `get_compile_config` returned None: the captioner came back uncompiled, its optimizer state lost.
    model = _small(decoder)
    model.compile(keras.optimizers.Adam(1e-2))
    inputs = _inputs(batch=4)
    target_out = np.concatenate([inputs["target_in"][:, 1:], np.full((4, 1), 2, "int32")], axis=1)
    check_reload_keeps_training(model, inputs, target_out, tmp_path / "captioner.keras")


def test_a_features_captioner_takes_numpy_integer_sizes():
    # The backbone's sizes read off an array's shape are NumPy integers; they reached the config as they came.
    model = ImageCaptioner(VOCAB, decoder="attention", encoder="features", feature_locations=np.int64(4),
                           feature_channels=np.int64(6), feature_vector_dim=np.int64(6), embedding_dim=np.int64(8),
                           units=np.int64(16), attention_units=np.int64(5), max_output_length=np.int64(3))
    config = model.get_config()
    names = ("feature_locations", "feature_channels", "feature_vector_dim", "attention_units", "embedding_dim")
    assert all(type(config[name]) is int for name in names), {name: type(config[name]) for name in names}
    assert model.grid == (2, 2)
