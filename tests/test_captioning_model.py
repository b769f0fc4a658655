"""The ImageCaptioner: options 1 and 2, attention over locations, decoding, saving."""

import keras
import numpy as np
import pytest

from course_lib.models.captioner import ImageCaptioner

VOCAB = 12


def _inputs(batch=3, size=32, length=5, seed=0):
    rng = np.random.default_rng(seed)
    target_in = rng.integers(4, VOCAB, (batch, length)).astype("int32")
    target_in[:, 0] = 1
    return {"image": rng.uniform(0, 255, (batch, size, size, 3)).astype("float32"), "target_in": target_in}


def _small(decoder, **kwargs):
    keras.utils.set_random_seed(0)
    return ImageCaptioner(VOCAB, decoder=decoder, image_size=32, cnn_filters=(4, 8), vector_dim=24,
                          embedding_dim=8, units=16, max_output_length=6, **kwargs)


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


def test_the_captioning_task_trains_plain_decoders_without_the_deep_output_flag():
    from course_lib.tasks.captioning import train_captioning

    with pytest.raises(ValueError, match="Received: deep_output=True, decoder='option1'"):
        train_captioning("shapes", "option1", deep_output=True, epochs=1, train=8)
