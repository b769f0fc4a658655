"""The command line's inputs and outputs, checked before any work and reported in one clean line: missing or
unreadable images, another task's run given as --model or --out, options that would do nothing, output
folders that cannot be made, and the stand-alone scripts' command lines. No test here trains a model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from course_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run_folder(folder, task, *files):
    """A folder marked as a run of `task` (`course_run.json`), holding `files` (empty)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "course_run.json").write_text(json.dumps({"task": task}))
    for name in files:
        (folder / name).write_text("")
    return folder


def _png(path, size=8):
    from PIL import Image

    Image.fromarray(np.full((size, size, 3), 128, "uint8")).save(path)
    return path


def _script(path, *arguments, env=None):
    return subprocess.run([sys.executable, str(path), *arguments], capture_output=True, text=True, timeout=120,
                          env=env, cwd=ROOT)


# -- A: images given to `caption`, and the offline VGG16 fallback ------------------------------------------


def test_caption_refuses_a_missing_image_before_loading_the_model(tmp_path, capsys, monkeypatch):
    # It used to be skipped with a UserWarning (and its source line), and the command exited 0.
    import course_lib.tasks.captioning.cli as caption_cli

    def load_run(model_dir):
        raise AssertionError("the model was loaded before the images were checked")

    monkeypatch.setattr(caption_cli, "load_run", load_run)
    image = _png(tmp_path / "pic.png")
    assert main(["caption", "--model", str(tmp_path / "no_model"), str(image), "/nope.png"]) == 2
    assert capsys.readouterr().err == "course-lib: error: No such image file: '/nope.png'\n"
    assert main(["caption", "--model", "unused", "/nope.png", str(tmp_path), "/nope2.png"]) == 2
    assert capsys.readouterr().err == "course-lib: error: No such image files: '/nope.png', '/nope2.png'\n"
    assert main(["caption", "--model", "unused", str(image), str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"course-lib: error: Expected image files, received folder: {str(tmp_path)!r}\n"


def test_caption_names_each_unreadable_image_on_one_line_and_fails(tmp_path, capsys, monkeypatch, recwarn):
    import course_lib.tasks.captioning.cli as caption_cli

    class Decoder:
        has_attention = True

    class Model:
        decoder = Decoder()

    settings = {"encoder": "small", "image_size": 8, "decoder": "attention"}
    monkeypatch.setattr(caption_cli, "load_run", lambda model_dir: (Model(), None, settings))
    monkeypatch.setattr(caption_cli, "generate_captions",
                        lambda model, vocabulary, inputs, beam: (["a grey square"] * len(inputs["image"]), None, None))
    good = _png(tmp_path / "good.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    assert main(["caption", "--model", "unused", str(good), str(bad)]) == 1
    out, err = capsys.readouterr()
    assert f"{good}: a grey square" in out  # the readable one is still captioned
    skipped = [line for line in err.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and skipped[0].startswith(f"course-lib: skipped {str(bad)!r}: not a readable image")
    assert "1 of 2 images could not be read" in err
    assert "UserWarning" not in err and not [w for w in recwarn if "Skipping image" in str(w.message)]


FALLBACK_PROBE = """
import argparse
from course_lib import cli
from course_lib.tasks.captioning.data import resolve_encoder

class Parser:  # a command that falls back from VGG16, as `train captioning --encoder vgg16` does offline
    def parse_args(self, argv):
        return argparse.Namespace(handler=lambda args: resolve_encoder({"encoder": "vgg16", "weights": "/nope.h5"}))

cli.build_parser = Parser
raise SystemExit(cli.main([]))
"""


def test_the_offline_backbone_fallback_is_a_plain_notice_without_a_source_line():
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    finished = subprocess.run([sys.executable, "-c", FALLBACK_PROBE], capture_output=True, text=True, timeout=300,
                              env=env)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "Falling back to the small CNN encoder trained from scratch instead of vgg16." in finished.stdout
    assert "course-lib: warning: Could not load the ImageNet weights of VGG16" in finished.stderr
    assert "UserWarning" not in finished.stderr and "warnings.warn" not in finished.stderr
    assert "data.py:" not in finished.stderr


# -- B: split-translation never writes into a run folder -----------------------------------------------------


@pytest.mark.parametrize("task", ["reversal", "translation"])
def test_split_translation_refuses_a_run_folder(task, tmp_path, capsys):
    pairs = tmp_path / "hin.txt"
    pairs.write_text("".join(f"Sentence {i}.\tवाक्य {i}।\tCC-BY\n" for i in range(30)), encoding="utf-8")
    run = _run_folder(tmp_path / "run", task, "model.keras")
    assert main(["split-translation", str(pairs), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"holds a {task} run (course_run.json)" in err and f"Received: --out {str(run)!r}" in err
    assert sorted(path.name for path in run.iterdir()) == ["course_run.json", "model.keras"]


# -- C: another task's run given as --model -------------------------------------------------------------------


@pytest.mark.parametrize("argv, owner, task", [
    (["translate", "--model", "RUN", "hi"], "transliteration", "translation"),
    (["evaluate", "translation", "--model", "RUN"], "captioning", "translation"),
    (["caption", "--model", "RUN", "IMAGE"], "reversal", "captioning"),
    (["evaluate", "captioning", "--model", "RUN"], "documents", "captioning"),
    (["classify", "--model", "RUN", "TEXT"], "translation", "documents"),
    (["evaluate", "documents", "--model", "RUN"], "reversal", "documents"),
], ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else value)
def test_a_model_folder_of_another_task_is_named_as_such(argv, owner, task, tmp_path, capsys):
    # They used to report a missing file of their own task (state.json, run.json, document_pipeline.json).
    run = _run_folder(tmp_path / "run", owner, "model.keras", "state.json")
    text = tmp_path / "doc.txt"
    text.write_text("The team won the match.")
    replace = {"RUN": str(run), "IMAGE": str(_png(tmp_path / "pic.png")), "TEXT": str(text)}
    assert main([replace.get(part, part) for part in argv]) == 2
    err = capsys.readouterr().err
    assert f"{str(run)!r} holds a {owner} run (course_run.json); not a {task} run. Received: --model {str(run)!r}" \
        in err, err


def test_a_reranker_of_another_task_is_named_by_its_flag(tmp_path, capsys):
    model = _run_folder(tmp_path / "tl1", "transliteration", "model.keras")
    reranker = _run_folder(tmp_path / "tr1", "translation", "model.keras")
    assert main(["evaluate", "transliteration", "--model", str(model), "--rerank-with", str(reranker),
                 "--beam", "2"]) == 2
    err = capsys.readouterr().err
    assert f"{str(reranker)!r} holds a translation run (course_run.json); not a transliteration run. " \
           f"Received: --rerank-with {str(reranker)!r}" in err, err


def test_load_reranker_names_its_flag(tmp_path):
    from course_lib.tasks.transliteration.reranking import load_reranker

    reranker = _run_folder(tmp_path / "tr1", "translation", "model.keras")
    with pytest.raises(ValueError, match=r"Received: --rerank-with "):
        load_reranker([str(reranker)])


# -- D: --cache-dir only where features are cached -------------------------------------------------------------


def test_cache_dir_is_refused_with_the_small_encoder(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "captioning", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--cache-dir holds the features of a frozen backbone" in err
    assert f"Received: --cache-dir {str(tmp_path / 'cache')!r} --encoder small" in err
    assert not out.exists()  # refused before the folder was claimed


def test_cache_dir_that_is_a_file_is_a_usage_error(tmp_path, capsys):
    cache = tmp_path / "cache"
    cache.write_text("a file")
    with pytest.raises(SystemExit) as stop:
        main(["train", "captioning", "--encoder", "vgg16", "--cache-dir", str(cache), "--out", str(tmp_path / "r")])
    assert stop.value.code == 2
    assert f"argument --cache-dir: expected a folder, received {str(cache)!r}, which is a file" in \
        capsys.readouterr().err


# -- E: the note on an earlier run comes before the training ---------------------------------------------------


class _Stop(ValueError):
    pass


def _stop_training(capsys, seen):
    def train(*args, **kwargs):
        seen.append(capsys.readouterr().out)  # what was printed before training started
        raise _Stop("training stopped by the test")

    return train


@pytest.mark.parametrize("task, argv, module, function, own_file", [
    ("reversal", ["reversal", "--steps", "1"], "course_lib.tasks.reversal", "run", "reversal.keras"),
    ("captioning", ["train", "captioning"], "course_lib.tasks.captioning.cli", "train_captioning", "run.json"),
    ("documents", ["train", "documents"], "course_lib.tasks.documents.cli", "train_documents", "training.json"),
])
def test_the_earlier_run_note_is_printed_before_training(task, argv, module, function, own_file, tmp_path, capsys,
                                                        monkeypatch):
    import importlib

    out = _run_folder(tmp_path / "run", task, own_file)
    seen = []
    monkeypatch.setattr(importlib.import_module(module), function, _stop_training(capsys, seen))
    if task == "reversal":  # its 2-core thread tuning is for a real run
        monkeypatch.setattr("course_lib.training.threads.tune_for_small_cpu", lambda: False)
    assert main(argv + ["--out", str(out)]) == 2
    assert seen and f"{out} holds an earlier {task} run; its files are replaced by this one's" in seen[0]
    if task == "reversal":
        assert "reversal task: 1 step, batch" in seen[0]  # not "1 steps"


# -- F: an --out that cannot be made is a usage error --------------------------------------------------------


def test_an_out_below_a_file_is_a_usage_error(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(SystemExit) as stop:
        main(["train", "documents", "--out", str(afile / "sub")])
    assert stop.value.code == 2
    assert (f"argument --out: expected a folder that can be made, received {str(afile / 'sub')!r}, "
            f"but {str(afile)!r} is a file") in capsys.readouterr().err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_out_that_cannot_be_written_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["reversal", "--out", "/proc/nope"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --out: expected a folder that can be written, received '/proc/nope', but '/proc' cannot be " \
           "written" in err
    assert "Errno" not in err


@pytest.mark.parametrize("command", [["reversal", "--out"], ["train", "language-model", "--steps", "1", "--save"]])
def test_a_name_too_long_for_the_file_system_is_a_usage_error(tmp_path, capsys, command):
    """`[Errno 36] File name too long` used to come after training (and lose the model), or leave an empty folder."""
    # A file: 256 bytes, or fits 255 but not with the temporary name it is written under first; a folder: over 255.
    name = "n" * 250 + ".keras" if "--save" in command else "n" * 256
    with pytest.raises(SystemExit) as stop:
        main(command + [str(tmp_path / "made" / name)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "names the file system takes" in err and "names there take up to" in err and "Errno" not in err
    assert list(tmp_path.iterdir()) == []


def test_only_a_files_own_name_needs_room_for_its_temporary_name(tmp_path):
    from course_lib.tasks.arguments import output_file, output_folder

    folder = str(tmp_path / ("r" * 245))  # a run's files are staged inside it: the full 255 bytes are its own
    assert output_folder(folder) == folder
    assert output_file(".json")(folder + "/m.json") == folder + "/m.json"
    assert list(tmp_path.iterdir()) == []


def test_checking_an_out_folder_leaves_nothing_behind(tmp_path):
    from course_lib.tasks.arguments import output_folder

    assert output_folder(str(tmp_path / "new" / "run")) == str(tmp_path / "new" / "run")
    assert output_folder(str(tmp_path)) == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


# -- G: the scripts' command lines -------------------------------------------------------------------------------


def test_make_notebook_help_and_a_missing_source(tmp_path):
    script = ROOT / "tools" / "make_notebook.py"
    finished = _script(script, "--help")
    assert finished.returncode == 0 and finished.stdout.startswith("usage: make_notebook.py"), finished.stderr
    finished = _script(script, "/nope.py", str(tmp_path / "out.ipynb"))
    assert finished.returncode == 2
    assert "make_notebook.py: error: argument source: no such file: '/nope.py'" in finished.stderr
    assert "Traceback" not in finished.stderr and not (tmp_path / "out.ipynb").exists()


@pytest.mark.parametrize("name, package, env", [
    ("gpu_jax_check.py", "jax", {"KERAS_BACKEND": "jax"}),
    ("reversal_reference_torch.py", "torch", {}),
])
def test_benchmarks_needing_a_package_we_do_not_install_answer_help_and_name_it(name, package, env):
    import importlib.util

    environment = {**os.environ, **env}
    finished = _script(ROOT / "benchmarks" / name, "--help", env=environment)
    assert finished.returncode == 0 and finished.stdout.startswith(f"usage: {name}"), finished.stderr[-2000:]
    finished = _script(ROOT / "benchmarks" / name, "--steps" if package == "torch" else "--epochs", "0",
                       env=environment)
    assert finished.returncode == 2 and "expected a positive integer" in finished.stderr
    if importlib.util.find_spec(package) is None:
        finished = _script(ROOT / "benchmarks" / name, env=environment)
        assert finished.returncode == 2 and "Traceback" not in finished.stderr, finished.stderr[-2000:]
        assert finished.stderr.strip().endswith("not installed") and repr(package) in finished.stderr


# -- H: wording ----------------------------------------------------------------------------------------------------


def test_plural():
    from course_lib.tasks.arguments import plural

    assert (plural(1, "epoch"), plural(3, "epoch"), plural(0, "step")) == ("1 epoch", "3 epochs", "0 steps")


def test_translation_training_says_1_epoch(tmp_path, capsys, monkeypatch):
    seen = []
    monkeypatch.setattr("course_lib.tasks.translation.cli.train", _stop_training(capsys, seen))
    assert main(["train", "translation", "--epochs", "1", "--out", str(tmp_path / "run")]) == 2
    assert seen and "1 epoch ->" in seen[0] and "1 epochs" not in seen[0]


def test_a_file_in_the_run_folder_itself_is_named_plainly(tmp_path, capsys):
    from course_lib.tasks.arguments import check_file_outside_runs

    run = tmp_path / "rev3"
    with pytest.raises(ValueError) as error:
        check_file_outside_runs(run / "m.json", "--metrics-json", run)
    assert str(error.value) == (f"--metrics-json would write into the run folder {str(run)!r} and could replace "
                                f"one of its files. Choose a path outside it. Received: --metrics-json "
                                f"{str(run / 'm.json')!r}")
