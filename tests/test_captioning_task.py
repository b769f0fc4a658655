"""The captioning CLI end to end: train, evaluate, caption (tiny runs, offline)."""

import json
import warnings

import keras
import numpy as np
import pytest
from PIL import Image

from course_lib.cli import main
from course_lib.data.shapes import COLOUR_NAMES, SHAPES
from course_lib.metrics.captioning import object_words


def test_shapes_train_evaluate_and_caption(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["train", "captioning", "--decoder", "attention", "--train-size", "200", "--epochs", "1",
                 "--profile", "fast", "--out", str(out)])
    assert code == 0
    assert {p.name for p in out.iterdir()} >= {"model.keras", "vocabulary.json", "run.json"}
    record = json.loads((out / "run.json").read_text())
    assert record["settings"]["decoder"] == "attention" and len(record["history"]["loss"]) == 1

    metrics_path = tmp_path / "metrics.json"
    assert main(["evaluate", "captioning", "--model", str(out), "--metrics-json", str(metrics_path)]) == 0
    metrics = json.loads(metrics_path.read_text())
    for key in ("bleu1", "bleu2", "bleu3", "bleu4", "exact_match", "attention_on_object"):
        assert 0.0 <= metrics[key] <= 100.0, key
    # Evaluation regenerates the same test part: same numbers as at training time.
    assert metrics["exact_match"] == pytest.approx(record["metrics"]["exact_match"])

    from course_lib.data.shapes import generate_shapes

    image_path = tmp_path / "shape.png"
    Image.fromarray(generate_shapes(1, seed=9).images[0]).resize((96, 96)).save(image_path)
    overlay = tmp_path / "overlays" / "overlay.png"  # the missing folder is made (it used to fail after decoding)
    capsys.readouterr()
    assert main(["caption", "--model", str(out), str(image_path), "--overlay", str(overlay)]) == 0
    printed = capsys.readouterr().out
    assert "shape.png: " in printed and overlay.is_file() and overlay.stat().st_size > 1000
    # Two images write overlay_0.png and overlay_1.png; a folder in the way of the second is refused before any
    # work (it used to stop the command after writing the first).
    (tmp_path / "overlays" / "overlay_1.png").mkdir()
    assert main(["caption", "--model", str(out), str(image_path), str(image_path), "--overlay", str(overlay)]) == 2
    captured = capsys.readouterr()
    assert f"--overlay would write {str(tmp_path / 'overlays' / 'overlay_1.png')!r}, which is a folder" in captured.err
    assert captured.out == "" and not (tmp_path / "overlays" / "overlay_0.png").exists()
    two = tmp_path / "two" / "pair.png"
    assert main(["caption", "--model", str(out), str(image_path), str(image_path), "--overlay", str(two)]) == 0
    assert sorted(p.name for p in two.parent.iterdir()) == ["pair_0.png", "pair_1.png"]
    assert main(["caption", "--model", str(out), str(tmp_path / "nope.png")]) == 2  # clear error, no crash
    # Scored on photos with captions it has no words for, the figures say nothing about it: a warning says so.
    (tmp_path / "photos").mkdir()
    images, captions = _tiny_flickr(tmp_path / "photos")
    with pytest.warns(UserWarning, match=r"^60.0% of the reference captions' words are not in the model's vocabulary "
                                         r"\(it was trained on the generated shapes\): the figures measure it on "
                                         r"data unlike its training data\.$"):
        assert main(["evaluate", "captioning", "--model", str(out), "--images", str(images),
                     "--captions", str(captions)]) == 0
    capsys.readouterr()
    assert main(["train", "captioning", "--decoder", "attention", "--train-size", "20", "--epochs", "1",
                 "--location-coordinates", "--profile", "fast", "--out", str(out)]) == 0  # replacing the run
    assert f"{out} holds an earlier captioning run; its files are replaced by this one's" in capsys.readouterr().out
    assert json.loads((out / "run.json").read_text())["settings"]["location_coordinates"] is True
    assert main(["caption", "--model", str(out), str(image_path)]) == 0  # the saved model reads its coordinates
    assert "shape.png: " in capsys.readouterr().out


def test_caption_overlay_of_a_plain_captioner_is_refused(tmp_path, capsys):
    # It used to caption, print "no overlay written" and exit 0; now refused like `translate --heatmap`.
    out = tmp_path / "plain"
    assert main(["train", "captioning", "--decoder", "option1", "--train-size", "20", "--epochs", "1",
                 "--profile", "fast", "--out", str(out)]) == 0
    from course_lib.data.shapes import generate_shapes

    image_path = tmp_path / "shape.png"
    Image.fromarray(generate_shapes(1, seed=9).images[0]).save(image_path)
    overlay = tmp_path / "overlays" / "overlay.png"
    capsys.readouterr()
    assert main(["caption", "--model", str(out), str(image_path), "--overlay", str(overlay)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("course-lib: error:") and len(captured.err.strip().splitlines()) == 1
    assert (f"{str(out)!r} holds a captioner with the plain option1 decoder, which has no attention to draw; "
            f"leave out --overlay. Received: --overlay {str(overlay)!r}") in captured.err
    assert captured.out == "" and not (tmp_path / "overlays").exists()  # refused before captioning
    assert main(["caption", "--model", str(out), str(image_path)]) == 0


def _tiny_flickr(tmp_path):
    images = tmp_path / "Images"
    images.mkdir()
    colours = {"red": (220, 30, 30), "green": (30, 200, 40), "blue": (30, 60, 220)}
    lines = ["image,caption"]
    for index in range(18):
        name, rgb = list(colours.items())[index % 3]
        file = f"{index:02d}_{name}.jpg"
        Image.new("RGB", (80 + index, 60), rgb).save(images / file)
        for k in range(5):
            lines.append(f"{file},A {name} picture number {k} .")
    (tmp_path / "captions.txt").write_text("\n".join(lines) + "\n")
    return images, tmp_path / "captions.txt"


def test_flickr_style_folder_with_an_offline_vgg16_falls_back(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise Exception("URL fetch failure: [Errno -2] Name or service not known")

    monkeypatch.setattr(keras.applications, "VGG16", offline)
    images, captions = _tiny_flickr(tmp_path)
    out = tmp_path / "flickr_run"
    monkeypatch.chdir(tmp_path)  # the data given as relative paths, as the docs' ../shared/data/... are
    with pytest.warns(UserWarning, match="Could not load the ImageNet weights of VGG16"):
        code = main(["train", "captioning", "--images", "Images", "--captions", "captions.txt",
                     "--encoder", "vgg16", "--decoder", "option2", "--epochs", "1", "--profile", "fast",
                     "--out", str(out)])
    assert code == 0
    assert "Falling back to the small CNN" in capsys.readouterr().out
    settings = json.loads((out / "run.json").read_text())["settings"]
    assert settings["encoder"] == "small" and settings["requested_encoder"] == "vgg16"
    metrics_path = tmp_path / "m.json"
    # Its own data gets no warning of unlike data, whatever the share (a fast-profile run's small vocabulary
    # misses up to a fifth of its own test words): the threshold is set below any share to show it.
    monkeypatch.setattr("course_lib.tasks.captioning.cli.UNLIKE_DATA_SHARE", -1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["evaluate", "captioning", "--model", str(out), "--images", str(images), "--captions",
                     str(captions), "--metrics-json", str(metrics_path)]) == 0
    assert not [w for w in caught if "unlike its training data" in str(w.message)]
    metrics = json.loads(metrics_path.read_text())
    assert {"bleu1", "bleu2", "bleu3", "bleu4", "distinct_captions"} <= set(metrics)
    assert "exact_match" not in metrics
    assert np.isfinite(metrics["bleu1"])
    # The run remembers where its data is from any folder (relative paths used to be saved as given) ...
    assert settings["images"] == str(images.resolve()) and settings["captions"] == str(captions.resolve())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["evaluate", "captioning", "--model", str(out), "--metrics-json", str(metrics_path)]) == 0
    assert json.loads(metrics_path.read_text())["bleu1"] == metrics["bleu1"]
    # ... and says what to pass when the data has moved.
    images.rename(tmp_path / "moved")
    assert main(["evaluate", "captioning", "--model", str(out)]) == 2
    assert "(its run.json), and they are not there from this folder. Pass --images and --captions" in capsys.readouterr().err


def test_frozen_backbone_features_are_cached_and_attended(tmp_path, capsys):
    """MobileNetV2 with random weights (no download): 14 x 14 = 196 locations, features cached once."""
    from course_lib.tasks import captioning as task

    run = task.train_captioning("shapes", "attention", "mobilenet", profile="fast", epochs=1, weights=None,
                                cache_dir=tmp_path / "cache", verbose=0, train=16, valid=4, test=6, batch_size=8)
    assert run.settings["encoder"] == "mobilenet"
    assert run.inputs["train"]["locations"].shape == (16, 196, 576)
    assert run.inputs["train"]["vector"].shape == (16, 1280)
    assert len(list((tmp_path / "cache").glob("mobilenet-*.npz"))) == 3  # train, valid, test
    assert "Computed mobilenet features" in capsys.readouterr().out
    from course_lib.encoders.pretrained import load_backbone

    again = task.model_inputs(run.settings, "test", run.data["test"], load_backbone("mobilenet", weights=None))
    assert "Read cached mobilenet features" in capsys.readouterr().out
    np.testing.assert_allclose(again["locations"], run.inputs["test"]["locations"])
    metrics, captions, alignments = task.evaluate_run(run.model, run.vocabulary, run.data["test"],
                                                      run.inputs["test"], "shapes")
    assert alignments.shape[-1] == 196 and run.model.grid == (14, 14)
    assert 0.0 <= metrics["attention_on_object"] <= 1.0 and len(captions) == 6
    # the rates come with the number of object words they are over (0: every rate reads 0.0 and means nothing)
    named = sum(len(object_words(caption.split(), COLOUR_NAMES, SHAPES)) for caption in captions)  # colour and shape words
    assert metrics["attention_on_object_words"] == named
