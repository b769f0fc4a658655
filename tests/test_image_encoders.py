"""Image encoders: the small CNN and the keras.applications backbones."""

import keras
import numpy as np
import pytest

from course_lib.encoders.pretrained import (
    BackboneUnavailable, backbone_info, load_backbone, make_image_encoder,
)
from course_lib.encoders.small_cnn import SmallCNNEncoder
from course_lib.models.captioner import ImageCaptioner
from layer_testing import run_layer_test


def test_small_cnn_passes_the_layer_checks():
    images = np.random.default_rng(0).uniform(0, 64, (2, 16, 16, 3)).astype("float32")
    run_layer_test(
        SmallCNNEncoder,
        {"filters": (4, 8), "vector_dim": 4},
        {"images": images},
        expected_output_shapes=[(2, 16, 8), (2, 4)],
    )


def test_small_cnn_average_vector_and_grid():
    encoder = SmallCNNEncoder(filters=(4, 8, 8), vector_dim=0, convs_per_block=2)
    images = np.random.default_rng(1).uniform(0, 255, (3, 48, 48, 3)).astype("float32")
    locations, vector = encoder(images)
    assert tuple(locations.shape) == (3, 36, 8) and encoder.feature_grid(48) == (6, 6)
    np.testing.assert_allclose(np.asarray(vector), np.asarray(locations).mean(axis=1), atol=1e-5)
    assert len(encoder.convolutions) == 6



@pytest.mark.parametrize("vector_dim", [0, 5])
def test_small_cnn_output_shape_matches_call_for_non_square_images(vector_dim):
    encoder = SmallCNNEncoder((4, 8, 8), vector_dim=vector_dim)
    images = np.zeros((2, 16, 32, 3), "float32")
    locations, vector = encoder(images)
    assert tuple(locations.shape) == (2, 2 * 4, 8)
    assert encoder.compute_output_shape(images.shape) == (tuple(locations.shape), tuple(vector.shape))
    symbolic = encoder(keras.Input((16, 32, 3)))
    assert [tuple(t.shape) for t in symbolic] == [(None, 8, 8), (None, vector_dim or 8)]


@pytest.mark.parametrize(
    "options, received",
    [(dict(filters="32"), "filters='32'"), (dict(filters=(2.7,)), r"filters\[0\]=2.7"),
     (dict(filters=(4, 0)), r"filters\[1\]=0"), (dict(filters=()), r"filters=\(\)"),
     (dict(vector_dim=3.9), "vector_dim=3.9"), (dict(vector_dim=-1), "vector_dim=-1"),
     (dict(convs_per_block=1.5), "convs_per_block=1.5")],
)
def test_small_cnn_refuses_sizes_that_are_not_whole_numbers(options, received):
    # "32" used to become two blocks of 3 and 2 channels, 2.7 channels 2, vector_dim 3.9 a vector of 3.
    with pytest.raises(ValueError, match=f"Received: {received}"):
        SmallCNNEncoder(**options)
    captioner_options = {("cnn_filters" if name == "filters" else name): value for name, value in options.items()}
    with pytest.raises(ValueError, match=f"Received: {received}"):  # the captioner checks before its int()
        ImageCaptioner(12, **captioner_options)
    assert SmallCNNEncoder(filters=[4, 8], vector_dim=np.int64(0)).filters == (4, 8)  # as a saved config gives them


def test_small_cnn_locations_follow_the_image_regions():
    """Location j = row * W + col sees the patch at (row, col): a bright patch moves only nearby features."""
    keras.utils.set_random_seed(3)
    encoder = SmallCNNEncoder(filters=(8, 8), vector_dim=0)
    dark = np.zeros((1, 16, 16, 3), "float32")
    lit = dark.copy()
    lit[0, 12:16, 0:4] = 255.0  # bottom-left patch of a 4 x 4 grid -> location 12
    changed = np.abs(np.asarray(encoder(lit)[0]) - np.asarray(encoder(dark)[0])).sum(axis=-1)[0].reshape(4, 4)
    # The 3x3 convolutions let the patch reach its neighbours, but nothing farther away.
    assert changed[2:, :2].sum() > 0, changed
    far = changed.copy()
    far[2:, :2] = 0
    assert np.all(far == 0), changed


def test_small_cnn_rejects_bad_images():
    encoder = SmallCNNEncoder(filters=(4, 8))
    with pytest.raises(ValueError, match="images.shape"):
        encoder(np.zeros((2, 32, 32), "float32"))
    with pytest.raises(ValueError, match="too small"):
        SmallCNNEncoder(filters=(4, 4, 4, 4)).feature_grid(8)


def test_vgg16_gives_fc7_and_the_196_conv5_locations():
    model = load_backbone("vgg16", weights=None)
    outputs = model(np.zeros((1, 224, 224, 3), "float32"))
    assert tuple(outputs["locations"].shape) == (1, 196, 512)  # 14 x 14 locations of 512
    assert tuple(outputs["vector"].shape) == (1, 4096)  # fc7
    assert not model.trainable_weights, "the backbone is frozen"
    info = backbone_info("vgg16")
    assert info["grid"][0] * info["grid"][1] == 196


def test_mobilenet_shapes():
    model = load_backbone("mobilenet", weights=None)
    outputs = model(np.zeros((2, 224, 224, 3), "float32"))
    assert tuple(outputs["locations"].shape) == (2, 196, 576)
    assert tuple(outputs["vector"].shape) == (2, 1280)


def _offline(*args, **kwargs):
    raise Exception("URL fetch failure on https://example.invalid/weights.h5: [Errno -2] Name or service not known")


def test_offline_download_gives_a_clear_error(monkeypatch):
    monkeypatch.setattr(keras.applications, "VGG16", _offline)
    with pytest.raises(BackboneUnavailable, match="offline.*--encoder small"):
        load_backbone("vgg16")


def test_offline_falls_back_to_the_small_cnn(monkeypatch):
    monkeypatch.setattr(keras.applications, "MobileNetV2", _offline)
    with pytest.warns(UserWarning, match="Could not load the ImageNet weights of MobileNetV2"):
        kind, encoder = make_image_encoder("mobilenet", filters=(4, 8))
    assert kind == "small" and isinstance(encoder, SmallCNNEncoder)
    assert encoder.filters == (4, 8)


def test_unknown_backbone():
    with pytest.raises(ValueError, match="resnet"):
        load_backbone("resnet")


def test_small_cnn_sub_layers_have_the_same_names_in_every_instance():
    # The pooling and dropout layers took names from Keras's global counters (max_pooling2d_6, dropout_7).
    first, second = SmallCNNEncoder((4, 8)), SmallCNNEncoder((4, 8))
    assert (first.pool.name, first.fc_dropout.name) == ("pool", "fc_dropout")
    assert (second.pool.name, second.fc_dropout.name) == ("pool", "fc_dropout")
