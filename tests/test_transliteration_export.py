"""A trained transliteration model: .keras round trip and the strings-in/strings-out SavedModel."""

import keras
import numpy as np
import pytest

from course_lib.tasks import transliteration as task
from course_lib.tasks.serving import export_serving, load_serving


def test_save_load_and_serving_give_identical_outputs(tmp_path):
    config = task.TransliterationConfig.for_profile("fast", epochs=2, units=16, embedding_dim=8, train_words=300)
    train_pairs, valid_pairs, test_pairs = task.generated_splits(config)
    result = task.train(config, train_pairs, verbose=0)
    model, source_vocab, target_vocab = result["model"], result["source_vocab"], result["target_vocab"]
    task.save_run(tmp_path / "run", model, source_vocab, target_vocab, config, state={"epochs_done": 2})
    loaded, loaded_source, loaded_target, state = task.load_run(tmp_path / "run")
    assert state["epochs_done"] == 2 and loaded_source == source_vocab and loaded_target == target_vocab

    words = [p.roman for p in test_pairs[:20]]
    source = source_vocab.encode(words)
    before, after = model.generate(source), loaded.generate(source)
    np.testing.assert_array_equal(before["tokens"], after["tokens"])
    np.testing.assert_allclose(before["alignments"], after["alignments"], atol=1e-6)

    expected = task.transliterate_words(model, source_vocab, target_vocab, words)["predictions"]
    if keras.backend.backend() != "tensorflow":  # the SavedModel is TensorFlow's
        with pytest.raises(ValueError, match="TensorFlow backend"):
            export_serving(loaded, loaded_source, loaded_target, tmp_path / "serving")
        return
    export_serving(loaded, loaded_source, loaded_target, tmp_path / "serving")
    serve = load_serving(tmp_path / "serving")
    assert serve(words) == expected
    # Raw strings: upper case is folded like the vocabulary does; empty input gives empty output.
    assert serve([words[0].upper(), "   "]) == [expected[0], ""]
