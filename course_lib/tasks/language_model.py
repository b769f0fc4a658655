"""Character-level language modelling: corpus + RNN LM + training + perplexity.

Used by `notebooks/01_language_model.ipynb` and by the command line:

    course-lib train language-model --cell gru --steps 300
"""

import math

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.data import char_corpus
from course_lib.data.tf_data import without_autotune
from course_lib.metrics.language_model import perplexity_from_log_probs, unigram_perplexity
from course_lib.tasks.arguments import check_file_outside_runs, output_file, positive_int, random_seed
from course_lib.tasks.run_files import write_output_file
from course_lib.training.profiles import check_ranges, pick, with_overrides


def default_settings(profile=None):
    """Sizes and step budgets for the active profile."""
    return {
        "num_train": pick(fast=2000, full=20000, profile=profile),
        "num_valid": pick(fast=300, full=2000, profile=profile),
        "embedding_dim": pick(fast=16, full=32, profile=profile),
        "units": pick(fast=64, full=256, profile=profile),
        "steps": pick(fast=150, full=3000, profile=profile),
        "batch_size": 64,
        "learning_rate": pick(fast=1e-2, full=3e-3, profile=profile),
    }


def load_corpus(settings=None, seed=0):
    settings = settings or default_settings()
    return char_corpus.train_valid_split(settings["num_train"], settings["num_valid"], seed=seed)


def batches(split, batch_size, seed=0):
    """An endless shuffled stream of `(inputs, targets)` batches of exactly `batch_size` rows."""
    count = len(split["inputs"])
    if count < batch_size:  # the stream would never yield: training used to wait forever
        raise ValueError(
            f"A batch of {batch_size} rows needs at least that many training rows. "
            f"Received: {count} rows, batch_size={batch_size}"
        )
    return _shuffled_batches(split, batch_size, count, np.random.default_rng(seed))


def _shuffled_batches(split, batch_size, count, rng):
    while True:
        order = rng.permutation(count)
        for start in range(0, count - batch_size + 1, batch_size):
            rows = order[start : start + batch_size]
            yield split["inputs"][rows], split["targets"][rows]


def train_language_model(cell="gru", train=None, valid=None, settings=None, seed=0, verbose=0):
    """Trains one language model; returns a dict with the layer and its figures.

    Keys: `layer`, `cell`, `parameters`, `seconds`, `steps`, `losses` (the mean
    training loss over each tenth of the run, `report_every` steps, and over
    the last few steps when `steps` is not a multiple of ten),
    `report_every` (loss `i` covers the steps up to `(i + 1) * report_every`),
    `valid_perplexity`, `unigram_perplexity`. Exactly `settings["steps"]`
    steps are trained.

    `train` and `valid` (`load_corpus` splits) are given together or not at
    all; without them both are loaded.
    """
    import keras

    from course_lib.losses import MaskedTokenLoss
    from course_lib.models.language_model import RNNLanguageModel
    from course_lib.training.fit import fit_steps, steps_per_execution_for

    settings = with_overrides(default_settings(), settings or {}, "the language model's settings")
    check_ranges(settings, "the language model's settings",
                 positive_integers=("num_train", "num_valid", "embedding_dim", "units", "steps", "batch_size"),
                 positive=("learning_rate",))
    if (train is None) != (valid is None):
        # Loading only the missing part would draw it from the generated corpus, which need not match (or
        # stay apart from) the part given; reloading both used to throw the given part away.
        given = lambda part: "None" if part is None else f"<{type(part).__name__}>"  # noqa: E731
        raise ValueError(
            "Give both `train` and `valid`, or neither (both are then loaded from the generated corpus). "
            f"Received: train={given(train)}, valid={given(valid)}"
        )
    if train is None:
        train, valid = load_corpus(settings, seed=seed)
    keras.utils.set_random_seed(seed)
    layer = RNNLanguageModel(
        char_corpus.VOCAB_SIZE, settings["embedding_dim"], settings["units"], cell=cell,
        start_id=char_corpus.GO, stop_id=char_corpus.STOP, pad_id=char_corpus.PAD, name=f"{cell}_lm",
    )
    model = layer.training_model()
    steps = int(settings["steps"])
    report_every = max(1, steps // 10)
    model.compile(
        optimizer=keras.optimizers.Adam(settings["learning_rate"], clipnorm=1.0),
        loss=MaskedTokenLoss(pad_id=char_corpus.PAD),
        # A divisor of both the report interval and the last, shorter report: every step asked for is trained.
        steps_per_execution=steps_per_execution_for(math.gcd(report_every, steps % report_every), 25),
        jit_compile=training_jit_compile(),
    )
    dataset = _as_dataset(batches(train, settings["batch_size"], seed=seed))
    history, seconds = fit_steps(model, dataset, steps, report_every=report_every, verbose=verbose)
    return {
        "layer": layer,
        "cell": cell,
        "parameters": layer.count_params(),
        "seconds": seconds,
        "steps": int(model.optimizer.iterations),  # the optimizer's count: the steps really trained
        "losses": history.history["loss"],
        "report_every": report_every,
        "valid_perplexity": evaluate_perplexity(layer, valid),
        "unigram_perplexity": unigram_perplexity(train["targets"], valid["targets"], char_corpus.VOCAB_SIZE),
    }


def _as_dataset(stream):
    import tensorflow as tf

    sample_inputs, _ = next(stream)
    spec = tf.TensorSpec((None, sample_inputs.shape[1]), tf.int32)
    return without_autotune(tf.data.Dataset.from_generator(lambda: stream, output_signature=(spec, spec)))


def evaluate_perplexity(layer, split, batch_size=500):
    """Character perplexity of `layer` on a split (the `<stop>` token counts too)."""
    log_probs = np.concatenate(
        [
            layer.token_log_probs(split["inputs"][i : i + batch_size], split["targets"][i : i + batch_size])
            for i in range(0, len(split["inputs"]), batch_size)
        ]
    )
    return perplexity_from_log_probs(log_probs, split["targets"])


def sample_text(layer, num_samples=5, temperature=0.0, seed=0, max_length=80):
    """Generated sentences as strings."""
    tokens, _ = layer.generate(num_samples, max_length=max_length, temperature=temperature, seed=seed)
    return [char_corpus.decode(row) for row in tokens]


def _train_command(args):
    if args.save:
        check_file_outside_runs(args.save, "--save")  # before training: the run's files stay as they are
    settings = default_settings()
    if args.steps is not None:
        settings["steps"] = args.steps
    result = train_language_model(args.cell, settings=settings, seed=args.seed, verbose=2)
    print(
        f"{args.cell}: {result['parameters']} parameters, {result['seconds']:.1f} s, "
        f"validation perplexity {result['valid_perplexity']:.2f} "
        f"(unigram baseline {result['unigram_perplexity']:.2f})"
    )
    for line in sample_text(result["layer"], num_samples=3, temperature=0.7, seed=args.seed):
        print("  sample:", line)
    if args.save:  # whole or not at all (an interrupted save used to leave half a model); says "replaced" over one
        write_output_file(args.save, lambda temporary: result["layer"].training_model().save(temporary))
        print(f"saved {args.save}")
    return 0


def register_cli(commands):
    parser = commands.train.add_parser("language-model", help="train a character-level RNN language model")
    parser.add_argument("--cell", choices=["rnn", "gru", "lstm"], default="gru")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (default: from the profile)")
    parser.add_argument("--seed", type=random_seed, default=0)
    parser.add_argument("--save", default=None, type=output_file(".keras"), help="path of a .keras file to write")
    parser.set_defaults(handler=_train_command)
