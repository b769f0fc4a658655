"""The recipe cards: every application builds, counts as its formula says, and trains."""

import numpy as np
import pytest

from course_lib.data import recipe_inputs
from course_lib.models import recipe_cards
from course_lib.models.recipes import RECIPES, RecipeSizes, build_recipe

FAST = ["image_captioning", "image_question_answering", "video_classification", "textual_entailment"]


@pytest.mark.parametrize("name", FAST)
def test_recipe_builds_counts_and_learns(name):
    recipe = build_recipe(name)
    assert recipe.check_parameter_count() == recipe.card.formula_count
    text = str(recipe.card)
    for heading in ("data", "encoder", "decoder", "parameters", "loss", "total"):
        assert heading in text
    before, after = recipe.train_step()
    assert np.isfinite(before) and after < before


def test_formula_follows_the_sizes():
    sizes = RecipeSizes(units=20, vocab_size=30, filters=(6, 10))
    for name in ("video_captioning", "machine_translation_attention"):
        recipe = build_recipe(name, sizes)
        assert recipe.card.formula_count == recipe.model.count_params()
    assert build_recipe("machine_translation", sizes).card.formula_count != build_recipe("machine_translation").card.formula_count


def test_block_formulas():
    import keras

    gru = keras.layers.GRU(7)
    gru.build((None, None, 5))
    assert gru.count_params() == recipe_cards.gru_count(5, 7)
    conv = keras.layers.Conv2D(4, 3)
    conv.build((None, 8, 8, 3))
    assert conv.count_params() == recipe_cards.conv3x3_count(3, 4)
    from course_lib.layers import BahdanauAttention

    attention = BahdanauAttention(128, use_bias=False)
    attention.build((None, 512), (None, None, 256))
    assert attention.count_params() == recipe_cards.attention_count(512, 256, 128) == 98_432


def test_generated_inputs():
    images, colours = recipe_inputs.images(5, 16, seed=1)
    assert images.shape == (5, 16, 16, 3) and images.max() <= 255 and colours.shape == (5,)
    videos, directions = recipe_inputs.videos(3, frames=4, size=16, seed=1)
    assert videos.shape == (3, 4, 16, 16, 3)
    # The bright square moves: its mean column goes up (right) or down (left).
    columns = [(videos[0, f].mean(-1) > 200).nonzero()[1].mean() for f in range(4)]
    assert (np.diff(columns) > 0).all() if directions[0] == 0 else (np.diff(columns) < 0).all()
    source, target_in, target_out = recipe_inputs.sequence_pairs("translation", 4, 20, 20, 6, seed=2)
    assert (target_in[:, 0] == 1).all() and (target_out[:, -1] == 2).all()
    np.testing.assert_array_equal(target_in[:, 1:], target_out[:, :-1])
    with pytest.raises(ValueError, match="kind"):
        recipe_inputs.sequence_pairs("poetry", 4, 20, 20, 6)
    with pytest.raises(ValueError, match="shorter"):
        recipe_inputs.sequence_pairs("summarization", 4, 20, 20, 4, 6)


def test_unknown_recipe():
    with pytest.raises(ValueError, match="Unknown recipe"):
        build_recipe("weather_forecast")
    assert len(RECIPES) >= 9


def test_option_2_card_says_the_decoder_starts_from_zero():
    """The notes offer option 2 as the alternative to s_0 = h_T; the course's option 2 starts from a zero state, and its card says so."""
    recipe = build_recipe("textual_entailment")
    assert recipe.card.decoder.startswith("s_0 = 0,"), recipe.card.decoder


def test_every_recipe_weight_has_a_card_symbol():
    """Each Keras weight maps to a symbol the card lists (its terms or its parameter line)."""
    import re

    for name in RECIPES:
        recipe = build_recipe(name)
        listed = set(re.findall(r"\b[A-Za-z]+(?:_[a-z0-9]+)?\b", recipe.card.parameters))
        listed |= {part.strip() for symbol, _, _ in recipe.card.terms for part in symbol.split(",")}
        for weight in recipe.model.weights:
            words = recipe_cards.weight_symbol(weight.path).replace(",", " ").split()
            symbol = words[2] if words[0] in ("bias", "biases") else words[0]  # "bias of W_conv" -> W_conv
            assert symbol in listed, (name, weight.path, symbol, listed)


def test_weight_symbols_of_the_video_classifier():
    expected = {
        "conv2d/kernel": "W_conv", "conv2d/bias": "bias of W_conv",
        "frame_rnn/gru_cell/kernel": "U_enc (input -> state)",
        "frame_rnn/gru_cell/recurrent_kernel": "W_enc (state -> state)",
        "frame_rnn/gru_cell/bias": "biases of U_enc, W_enc", "V/kernel": "V", "V/bias": "b",
        "dialog/decoder/gru/gru_cell/kernel": "U_dec (input -> state)", "question_rnn/embedding/embeddings": "E_q (embedding)",
        "machine_translation_attention/decoder/attention/v_att": "v_att", "W_proj/bias": "b_proj",
    }
    for path, symbol in expected.items():
        assert recipe_cards.weight_symbol(path) == symbol, path
    # a part with no symbol is refused, never given a neighbour's: a norm's gamma or running mean inside the CNN
    # or beside W_proj, an embedding's other weights, a layer whose name merely contains "conv"
    for path in ("dense/kernel", "gru/gru_cell/kernel", "V/gamma", "cnn/block1_conv1_bn/gamma", "conv2d/moving_mean",
                 "W_proj/gamma", "cnn/fc/moving_variance", "decoder/embedding/whatever",
                 "conversation/decoder/gru/dense/kernel", "conversation/kernel"):
        with pytest.raises(ValueError, match="path="):
            recipe_cards.weight_symbol(path)
