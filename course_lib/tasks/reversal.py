"""The reversal experiment: the smallest task on which attention visibly helps.

Reference setting (a PyTorch run the course reproduces and beats): digits 0-9,
strings of length 5 to 10 (one length per batch), target = the reversed
string, embedding 32, GRU 128, batch 64, Adam 2e-3, 2,500 steps.
"""

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from course_lib.compiling import training_jit_compile
from course_lib.data import reversal as data
from course_lib.metrics.sequence import alignment_share, exact_match
from course_lib.tasks.arguments import (
    check_file_outside_runs, claim_run_folder, earlier_run_note, output_file, output_folder, plural, positive_int,
    random_seed,
)
from course_lib.tasks.run_files import committing, finish_commit, write_json_file
from course_lib.training.profiles import check_ranges, pick, with_overrides

EXAMPLE_INPUT = [7, 3, 2, 7, 7, 1]
REPORT_LENGTHS = (5, 7, 10)
MODEL_FILE = "reversal.keras"  # in the --out folder, beside metrics.json and the heat map
METRICS_FILE, HEATMAP_FILE = "metrics.json", "reversal_attention.png"
RUN_FILES = (MODEL_FILE, METRICS_FILE, HEATMAP_FILE)  # every file a run may write into its --out folder


@dataclass
class ReversalConfig:
    steps: int = 2500
    batch_size: int = 64
    embedding_dim: int = 32
    units: int = 128
    encoder_units: int = None
    learning_rate: float = 2e-3
    min_length: int = 5
    max_length: int = 10
    test_size: int = data.TEST_SIZE
    extrapolation_lengths: tuple = (11, 12, 13, 14)
    attention: bool = True
    bidirectional: bool = True
    option: int = 1
    clipnorm: float = 1.0
    seed: int = 0
    steps_per_execution: int = 1

    @classmethod
    def for_profile(cls, profile=None, **overrides):
        """The full reference budget, or a short one for CI (`fast`)."""
        base = cls(steps=pick(fast=500, full=2500, profile=profile),
                   test_size=pick(fast=200, full=data.TEST_SIZE, profile=profile))
        with_overrides(base, overrides, "ReversalConfig")
        return base

    def check(self):
        """Raises ValueError for settings no run can use; `train` calls it before building anything.

        Found later, they fail inside TensorFlow's data pipeline (lengths) or
        name Keras's learning-rate schedule (`decay_steps`) instead of `steps`.
        """
        check_ranges(self, "ReversalConfig",
                     positive_integers=("steps", "batch_size", "test_size", "embedding_dim", "units", "encoder_units",
                                        "steps_per_execution"),
                     positive=("learning_rate", "clipnorm"))
        data.check_lengths(self.min_length, self.max_length)
        # `option` (1 or 2, and only 1 with attention) is checked by `Seq2Seq`, which `train` builds right after
        # this check, before any data is made: a second check here would refuse nothing earlier.


@dataclass
class ReversalResult:
    config: dict
    exact_match: dict = field(default_factory=dict)
    alignment: float = None
    train_seconds: float = 0.0
    eval_seconds: float = 0.0
    example_input: list = field(default_factory=list)
    example_output: list = field(default_factory=list)
    example_labels: list = field(default_factory=list)
    example_attention: list = field(default_factory=list)

    def metrics(self):
        """The JSON the CLI writes."""
        return {
            "exact_match": {str(k): v for k, v in self.exact_match.items()},
            "alignment": self.alignment,
            "train_seconds": self.train_seconds,
            "eval_seconds": self.eval_seconds,
            "attention": self.config["attention"],
            "steps": self.config["steps"],
        }


def build_model(config):
    import keras

    from course_lib.models.seq2seq import Seq2Seq

    keras.utils.set_random_seed(config.seed)
    model = Seq2Seq(
        data.VOCAB_SIZE,
        data.VOCAB_SIZE,
        embedding_dim=config.embedding_dim,
        units=config.units,
        encoder_units=config.encoder_units,
        attention=config.attention,
        option=config.option,
        bidirectional=config.bidirectional,
        start_id=data.GO,
        stop_id=data.STOP,
        pad_id=data.PAD,
        max_output_length=max((config.max_length,) + tuple(config.extrapolation_lengths)) + 1,
    )
    # Adam at 2e-3 as in the reference, decayed to zero along a cosine over the
    # run, with the gradient norm clipped at 1: without both, a late loss
    # spike can wreck an almost perfect model in the last few hundred steps.
    schedule = keras.optimizers.schedules.CosineDecay(config.learning_rate, config.steps)
    on_tensorflow = keras.backend.backend() == "tensorflow"
    model.compile(
        optimizer=keras.optimizers.Adam(schedule, clipnorm=config.clipnorm),
        # Several steps per compiled call cut Python overhead on TF; JAX's
        # multi-step path needs equal shapes, and our lengths vary per batch.
        steps_per_execution=config.steps_per_execution if on_tensorflow else 1,
        jit_compile=training_jit_compile(),
    )
    return model


def train(config, verbose=2):
    """Builds and trains a model; returns `(model, seconds)`."""
    from course_lib.training.fit import fit_steps

    import keras

    config.check()
    model = build_model(config)
    batches = (config.steps, config.batch_size, config.min_length, config.max_length)
    # Every string `evaluate` scores stays out of training; at least the 500 of the published runs, whose
    # training stream this keeps (the fast profile's 200 test strings are the first 200 of those 500).
    held_out = max(data.TEST_SIZE, config.test_size)
    if keras.backend.backend() == "tensorflow":
        dataset = data.as_dataset(*batches, seed=config.seed, held_out=held_out)
    else:  # JAX / PyTorch: a plain generator of NumPy batches
        dataset = data.training_batches(*batches, seed=config.seed, held_out=held_out)
    report_every = max(config.steps_per_execution, (config.steps // 5) // config.steps_per_execution * config.steps_per_execution)
    _, seconds = fit_steps(model, dataset, config.steps, report_every=report_every, verbose=verbose)
    return model, seconds


def evaluate_length(model, length, count=data.TEST_SIZE):
    """Exact match and decoded outputs on `count` fixed strings of one length."""
    source, target_out = data.test_set(length, count)
    decoded = model.generate(source, max_length=length + 1)
    score = exact_match(decoded["tokens"], target_out, stop_id=data.STOP, pad_id=data.PAD)
    return score, source, decoded


def mirrored_share(decoded, length):
    """Share of output steps whose largest weight is on the mirrored input.

    Output step t (0-based) of a length-L string should copy input L-1-t; the
    final `<stop>` step has no partner and is not counted. `decoded` is what
    `model.generate` returned for strings of that length: the weights the
    model used while it decoded greedily.
    """
    alignments = np.asarray(decoded["alignments"])[:, :length, :length]  # (count, L, L)
    gold = np.tile(np.arange(length - 1, -1, -1), (alignments.shape[0], 1))
    return alignment_share(alignments, gold)


def attention_for(model, digits):
    """Greedy output and its attention matrix for one digit string.

    Returns `(output_digits, step_labels, weights)`: the decoded digits, one
    label per decoding step (a digit, or `<stop>`), and the `(steps, L)`
    attention weights of those steps.
    """
    source = data.encode_digits(np.asarray([digits])).astype("int32")
    decoded = model.generate(source, max_length=len(digits) + 1)
    output_ids = decoded["tokens"][0]
    steps = int(np.argmax(output_ids == data.STOP)) + 1 if data.STOP in output_ids else len(output_ids)
    labels = [data.VOCAB[int(i)] for i in output_ids[:steps]]
    return data.decode_ids(output_ids[:steps]), labels, decoded["alignments"][0, :steps, :]


def run(config, verbose=2):
    """Trains and evaluates one model; returns `(model, ReversalResult)`."""
    model, seconds = train(config, verbose=verbose)
    start = time.perf_counter()
    lengths = sorted(set(REPORT_LENGTHS) | set(range(config.min_length, config.max_length + 1)) | set(config.extrapolation_lengths))
    result = ReversalResult(config=asdict(config), train_seconds=round(seconds, 2))
    shares, counts = [], []
    for length in lengths:
        result.exact_match[length], _, decoded = evaluate_length(model, length, config.test_size)
        if config.attention and config.min_length <= length <= config.max_length:
            shares.append(mirrored_share(decoded, length))
            counts.append(config.test_size * length)
    if config.attention:
        # Over every training length, each output step counted once.
        result.alignment = float(np.average(shares, weights=counts))
    output, labels, weights = attention_for(model, EXAMPLE_INPUT)
    result.example_input, result.example_output = list(EXAMPLE_INPUT), output
    result.example_labels = labels
    # Unrounded: rows of six weights rounded to 4 places could sum to 1 +- 3e-4 (the display rounds).
    result.example_attention = np.asarray(weights, dtype=float).tolist()
    result.eval_seconds = round(time.perf_counter() - start, 2)
    return model, result


def format_table(results):
    """A text table of exact match by length, one column per model."""
    names = list(results)
    lengths = sorted({int(k) for r in results.values() for k in r.exact_match})
    lines = ["length  " + "  ".join(f"{n:>14}" for n in names)]
    for length in lengths:
        lines.append(f"{length:>6}  " + "  ".join(f"{results[n].exact_match[length]:>14.3f}" for n in names))
    return "\n".join(lines)


def format_attention(digits, labels, weights):
    """The attention matrix as text: rows = output steps (`labels`), columns = input digits."""
    rows = ["out\\in " + " ".join(f"{d:>5}" for d in digits)]
    for label, row in zip(labels, weights):
        rows.append(f"{label:>6} " + " ".join(f"{w:5.2f}" for w in row))
    return "\n".join(rows)


# -- command line --------------------------------------------------------------


def _command(args):
    from course_lib.training.threads import tune_for_small_cpu

    tune_for_small_cpu()  # about 20 % faster on a 2-core CPU; a no-op elsewhere
    if args.metrics_json and Path(args.metrics_json).resolve() != (Path(args.out) / METRICS_FILE).resolve():
        check_file_outside_runs(args.metrics_json, "--metrics-json", args.out)  # OUT/metrics.json is the default
    claim_run_folder(args.out, "reversal")
    replaced = earlier_run_note(args.out, "reversal")
    if replaced:  # said before the training starts, not only after it
        print(replaced, flush=True)
    config = ReversalConfig.for_profile(
        steps=args.steps, seed=args.seed, attention=not args.no_attention
    )
    name = "attention" if config.attention else "plain (option 1)"
    print(f"Training the {name} model on the reversal task: {plural(config.steps, 'step')}, "
          f"batch {config.batch_size}.", flush=True)
    model, result = run(config, verbose=2)
    print(f"\nTrained in {result.train_seconds:.1f} s; evaluated in {result.eval_seconds:.1f} s.")
    print("\nExact match by input length (500 strings each):" if config.test_size == 500 else f"\nExact match by input length ({config.test_size} strings each):")
    print(format_table({name: result}))
    if result.alignment is not None:
        print(f"\nAlignment: {result.alignment:.4f} of output steps put their largest weight on the mirrored input.")
    print(f"\nAttention for input {EXAMPLE_INPUT} (rows = output steps, columns = input positions):")
    print(format_attention(EXAMPLE_INPUT, result.example_labels, np.asarray(result.example_attention)))
    out = Path(args.out)  # made by claim_run_folder
    metrics = result.metrics()
    metrics_elsewhere = args.metrics_json and Path(args.metrics_json).resolve() != (out / METRICS_FILE).resolve()
    _save_run(out, model, result, config, None if metrics_elsewhere else metrics)
    if metrics_elsewhere:
        write_json_file(args.metrics_json, metrics, indent=2)
    metrics_path = Path(args.metrics_json) if metrics_elsewhere else out / METRICS_FILE
    print(f"Metrics written to {metrics_path}; model to {out / MODEL_FILE}")
    return 0


_WHY_REMOVED = {
    METRICS_FILE: "this run's metrics go to --metrics-json",
    HEATMAP_FILE: "the plain encoder-decoder has no attention to draw",
}


def _save_run(out, model, result, config, metrics):
    """Writes the run's files into `out` as one commit (`run_files.committing`).

    The model, the heat map (with attention) and `metrics` (unless None: they
    go to --metrics-json). Files of an earlier run that this one does not
    write are removed in the same commit: the folder never holds an earlier
    run's heat map or metrics beside this run's model.
    """
    finish_commit(out)  # an earlier run's interrupted save first: its files are among those to remove
    writes = [MODEL_FILE] + ([METRICS_FILE] if metrics is not None else []) + ([HEATMAP_FILE] if config.attention else [])
    stale = [name for name in RUN_FILES if name not in writes and (out / name).exists()]
    with committing(out, remove=stale) as staging:
        model.save(staging / MODEL_FILE)
        if metrics is not None:
            (staging / METRICS_FILE).write_text(json.dumps(metrics, indent=2))
        if config.attention:
            _save_heatmap(result, staging / HEATMAP_FILE)
    for name in stale:
        print(f"Removed {out / name}: {_WHY_REMOVED[name]}.")
    if config.attention:
        print(f"\nHeat map written to {out / HEATMAP_FILE}")


def _save_heatmap(result, path):
    """Draws the attention of the example input (`result.example_attention`) into the image `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from course_lib.plots.attention import attention_heatmap

    ax = attention_heatmap(
        np.asarray(result.example_attention),
        [str(d) for d in EXAMPLE_INPUT],
        result.example_labels,
        title=f"Reversing {''.join(map(str, EXAMPLE_INPUT))}",
    )
    ax.figure.savefig(path, bbox_inches="tight", dpi=120)
    plt.close(ax.figure)


def register_cli(commands):
    parser = commands.root.add_parser(
        "reversal",
        help="train and evaluate the reversal experiment (no data to download)",
        description="Train an encoder-decoder to reverse digit strings, print exact match "
        "by length and the attention matrix, and write a heat map and metrics.",
    )
    parser.add_argument("--no-attention", action="store_true", help="train the plain encoder-decoder (option 1)")
    parser.add_argument("--steps", type=positive_int, default=None, help="training steps (default: 2500, or 500 when COURSE_PROFILE=fast)")
    parser.add_argument("--seed", type=random_seed, default=0)
    parser.add_argument("--out", default="runs/reversal", type=output_folder,
                        help="folder for the heat map, model and metrics")
    parser.add_argument("--metrics-json", default=None, type=output_file(".json"),
                        help="where to write the metrics, a .json file (default: OUT/metrics.json; elsewhere, not "
                             "inside another run folder, and OUT/metrics.json of an earlier run is removed; an "
                             "existing file is replaced, and the command says so)")
    parser.set_defaults(handler=_command)
