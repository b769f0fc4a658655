"""The training entry points say what they received when they refuse their inputs."""

import pytest

from course_lib.tasks import captioning
from course_lib.tasks import translation
from course_lib.tasks.captioning.runs import evaluation_data


@pytest.mark.parametrize("images,captions,received", [
    (None, "captions.txt", "Received: images=None, captions='captions.txt'"),
    ("Flicker8k_Dataset", None, "Received: images='Flicker8k_Dataset', captions=None"),
])
def test_flickr8k_training_says_which_of_images_and_captions_it_got(images, captions, received):
    with pytest.raises(ValueError, match=f"needs both --images and --captions. {received}$"):
        captioning.train_captioning("flickr8k", images=images, captions=captions)


@pytest.mark.parametrize("images,captions,received", [
    (None, "captions.txt", "Received: images=None, captions='captions.txt'"),
    ("Flicker8k_Dataset", None, "Received: images='Flicker8k_Dataset', captions=None"),
])
def test_evaluation_data_says_which_of_images_and_captions_it_got(images, captions, received):
    settings = {"encoder": "small", "dataset": "shapes"}
    with pytest.raises(ValueError, match=f"Give both --images and --captions, or neither. {received}$"):
        evaluation_data(settings, images=images, captions=captions)


@pytest.mark.parametrize("max_train", [None, 5])
def test_translation_training_without_pairs_says_what_it_got(max_train):
    config = translation.TranslationConfig.for_profile("fast", epochs=1)
    config.max_train = max_train  # `for_profile` reads None as "the profile's value"
    with pytest.raises(ValueError, match=rf"No training pairs. Received: len\(train_pairs\)=0, max_train={max_train}$"):
        translation.train(config, train_pairs=[], valid_pairs=[], verbose=0)
