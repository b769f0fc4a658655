"""The benchmark scripts' command lines: they start, and refuse counts below 1 before any work.

The benchmarks themselves are run by hand (they print figures, and most read
real data); these checks keep their command lines from rotting. Left out:
`reversal_reference_torch.py` and `gpu_jax_check.py`, which import PyTorch and
JAX, packages the course does not depend on.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = [
    "bucketing.py", "captioning.py", "documents.py", "grading.py", "reversal.py", "reversal_step_profile.py",
    "translation_quality.py", "transliteration_aksharantar_jax.py", "transliteration_rerank.py",
]


def run_script(name, *arguments):
    return subprocess.run([sys.executable, str(BENCHMARKS / name), *arguments], capture_output=True, text=True,
                          timeout=120)


def test_every_benchmark_is_listed_here_or_left_out_on_purpose():
    left_out = {"reversal_reference_torch.py", "gpu_jax_check.py"}
    assert {path.name for path in BENCHMARKS.glob("*.py")} == set(SCRIPTS) | left_out


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_prints_the_usage(name):
    finished = run_script(name, "--help")
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert finished.stdout.startswith(f"usage: {name}")


@pytest.mark.parametrize("name, arguments", [
    ("bucketing.py", ["--batches", "0"]),  # divided by zero once
    ("captioning.py", ["shapes", "--epochs", "0"]),
    ("documents.py", ["generated", "--epochs", "-1"]),
    ("grading.py", ["--count", "0"]),
    ("reversal.py", ["--steps", "0", "--no-reference"]),
    ("reversal_step_profile.py", ["--repeats", "0"]),  # failed on an unset name once
    ("translation_quality.py", ["--beam", "0"]),
    ("transliteration_aksharantar_jax.py", ["train", "--data", "unused", "--out", "unused", "--units", "0"]),
    ("transliteration_rerank.py", ["--model", "m", "--reranker", "r", "--test", "t", "--beam", "0"]),
])
def test_a_count_below_one_is_a_usage_error(name, arguments):
    finished = run_script(name, *arguments)
    assert finished.returncode == 2, (finished.stdout[-1000:], finished.stderr[-2000:])
    assert "expected a positive integer" in finished.stderr


def test_translation_quality_refuses_options_that_do_not_go_together_before_loading_data():
    finished = run_script("translation_quality.py", "--no-attention", "--conditional", "--out", "unused")
    assert finished.returncode == 2, finished.stderr[-2000:]
    assert "apply to the attentional decoder only" in finished.stderr and "Traceback" not in finished.stderr


def _aksharantar_jax_module():
    """The JAX transliteration benchmark as a module (it imports JAX only when it trains)."""
    spec = importlib.util.spec_from_file_location("aksharantar_jax", BENCHMARKS / "transliteration_aksharantar_jax.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_jax_transliteration_script_refuses_words_wider_than_its_widest_shape():
    module = _aksharantar_jax_module()
    widest = module.WIDTHS[-1]
    module._check_widths(np.array([3, widest]), "words")  # the widest shape holds them
    with pytest.raises(ValueError, match=rf"up to {widest + 1} tokens \(1 too long\)"):
        module._check_widths(np.array([3, widest + 1]), "words")


def test_the_jax_transliteration_dev_split_keeps_each_word_on_one_side_with_all_its_spellings():
    module = _aksharantar_jax_module()
    source = np.array([[1, 0], [2, 0], [3, 4], [2, 0], [5, 0], [3, 4]])  # words: a, b, cd, b, e, cd
    target = np.array([[11], [12], [13], [22], [15], [23]])
    train_source, train_target, dev_source, references = module.split_dev_words(source, target, 2, lambda row: str(row[0]))
    # the last two distinct words are cd and e: all their rows leave training, cd's first row too
    np.testing.assert_array_equal(dev_source, [[3, 4], [5, 0]])
    assert references == [["13", "23"], ["15"]]
    np.testing.assert_array_equal(train_source, [[1, 0], [2, 0], [2, 0]])
    np.testing.assert_array_equal(train_target, [[11], [12], [22]])
