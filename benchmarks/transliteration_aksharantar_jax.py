"""Aksharantar Hindi transliteration on a GPU with the JAX backend.

The course's TensorFlow path (`course-lib train transliteration`) is the
reference; this script trains the same `Seq2Seq` (bidirectional GRU encoder,
attentional GRU decoder with deep output, same `course_lib` layers) on a
machine that has JAX but no TensorFlow, e.g. a rented GPU. It runs in two
steps because the text pipeline (tensorflow-text) is needed only once:

    # 1. where TensorFlow is installed: encode the data
    python benchmarks/transliteration_aksharantar_jax.py prepare \
        --train ../shared/data/aksharantar_hin/hin_train.csv \
        --valid ../shared/data/aksharantar_hin/hin_valid.csv --out runs/aksharantar_prepared

    # 2. anywhere with keras + jax (GPU): train for a time budget, evaluate on valid
    #    (the best recipe measured, 46.6 % top-1 with beam 5 on hin_valid):
    KERAS_BACKEND=jax python benchmarks/transliteration_aksharantar_jax.py train \
        --data runs/aksharantar_prepared --dev 2000 --max-epochs 50 --budget-seconds 280 \
        --source-noise 0.05 --target-noise 0.15 --label-smoothing 0.1 --beams 1 5 \
        --out runs/aksharantar_jax

Training batches use a few fixed padded widths (length buckets), so XLA
compiles one program per width instead of one per batch shape. The learning
rate follows a cosine over the number of epochs that fit the time budget,
estimated after the first epoch. Evaluation: top-1 word accuracy (greedy and
beam), top-k and CER per distinct roman word of the validation file, any
accepted spelling counting as right.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course_lib.tasks.arguments import positive_int  # noqa: E402  (after the line above: runs without an install)

WIDTHS = (9, 13, 25)


def prepare(args):
    from course_lib.tasks import transliteration as task

    train_pairs = task.load_pairs(args.train)
    valid_pairs = task.load_pairs(args.valid)
    source_vocab, target_vocab = task.build_vocabularies(train_pairs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    source, target = task.encode_pairs(train_pairs, source_vocab, target_vocab)
    words, references = task.test_items(valid_pairs, target_vocab)
    np.savez_compressed(out / "train.npz", source=source, target=target,
                        valid_source=source_vocab.encode(words))
    source_vocab.save(out / "source_vocab.json")
    target_vocab.save(out / "target_vocab.json")
    (out / "valid.json").write_text(json.dumps({"words": words, "references": references}, ensure_ascii=False))
    print(f"prepared {len(source)} training pairs, {len(words)} validation words in {out}")


def _check_widths(lengths, what):
    """Raises ValueError when a sequence is longer than the widest compiled shape (`WIDTHS[-1]`)."""
    if len(lengths) and int(np.max(lengths)) > WIDTHS[-1]:
        raise ValueError(
            f"The widest compiled shape holds {WIDTHS[-1]} tokens; add a wider one to WIDTHS. "
            f"Received: {what} of up to {int(np.max(lengths))} tokens ({int(np.sum(lengths > WIDTHS[-1]))} too long)"
        )


def _fixed_width_batches(source, target, batch_size, rng):
    from course_lib.data.buckets import sequence_lengths, teacher_forcing_pair

    need = np.maximum(sequence_lengths(source), sequence_lengths(target))
    _check_widths(need, "training pairs")  # otherwise searchsorted puts them past the last width: dropped
    bucket = np.searchsorted(WIDTHS, need)  # index of the first width that fits
    batches = []
    for index, width in enumerate(WIDTHS):
        members = rng.permutation(np.flatnonzero(bucket == index))
        for start in range(0, len(members) - batch_size + 1, batch_size):  # full batches only
            rows = members[start:start + batch_size]
            batch_source = np.zeros((batch_size, width), "int32")
            batch_target = np.zeros((batch_size, width), "int32")
            cut_s, cut_t = min(width, source.shape[1]), min(width, target.shape[1])
            batch_source[:, :cut_s] = source[rows, :cut_s]
            batch_target[:, :cut_t] = target[rows, :cut_t]
            target_in, target_out = teacher_forcing_pair(batch_target)
            batches.append(({"source": batch_source, "target_in": target_in}, target_out))
    return [batches[i] for i in rng.permutation(len(batches))]


_DECODERS = {}


def _decode(model, source, beam_width, batch_size=1024):
    """Decodes in length-sorted batches padded to fixed widths (few compilations)."""
    import jax

    from course_lib.data.buckets import sequence_lengths
    from course_lib.decoding.beam import _model_beam
    from course_lib.decoding.ensemble import Ensemble
    from course_lib.decoding.greedy import greedy_decode

    def greedy(batch):
        outputs, state, mask = model.encode(batch, training=False)
        memory = model.decoder.prepare_memory(outputs, state, mask)
        tokens, weights, _ = greedy_decode(model.decoder, memory, model.decoder.start_state(state),
                                           model.start_id, model.stop_id, model.max_output_length, model.pad_id)
        return tokens

    def beam(batch):
        tokens = _model_beam(model, batch, model.max_output_length, beam_width, 1.0)["tokens"]
        return tokens[:, 0] if beam_width == 1 else tokens  # width 1: greedy decoding of the ensemble

    import keras

    key = (id(model), beam_width)
    if key not in _DECODERS:
        # An ensemble's state is one per member, which greedy_decode does not take; its greedy
        # decoding is beam search of width 1 (the same tokens).
        body = greedy if beam_width == 1 and not isinstance(model, Ensemble) else beam

        def stateless(values, batch):
            # Reads the weights passed in, so one compiled program serves every epoch.
            with keras.StatelessScope(state_mapping=list(zip(model.weights, values))):
                return body(batch)

        _DECODERS[key] = jax.jit(stateless)
    function = _DECODERS[key]
    values = [variable.value for variable in model.weights]
    lengths = sequence_lengths(source)
    _check_widths(lengths, "words to decode")
    order = np.argsort(lengths, kind="stable")
    results = [None] * len(source)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        width = WIDTHS[int(np.searchsorted(WIDTHS, lengths[rows].max()))]
        batch = np.zeros((batch_size, width), "int32")
        batch[: len(rows), : min(width, source.shape[1])] = source[rows, :width]
        batch[len(rows):, 0] = source[rows[0], 0]  # filler rows, dropped below
        tokens = np.asarray(function(values, batch))
        for position, row in enumerate(rows):
            results[row] = tokens[position]
    return results


def split_dev_words(source, target, count, decode):
    """The last `count` distinct source words of the training file, with every row of theirs, as the dev split.

    Returns `(train_source, train_target, dev_source, dev_references)`: one dev row per word, with all of its
    accepted spellings as references. A word is never on both sides (splitting the file's rows, 47 of 2,000 dev
    words also had rows in training, and each dev row had one reference although the word had several).
    """
    keys = [row.tobytes() for row in source]  # equal rows: the same word (ids padded to one width)
    chosen = set()
    for key in reversed(keys):
        if len(chosen) == count:
            break
        chosen.add(key)
    in_dev = np.array([key in chosen for key in keys])
    first_row, spellings = {}, {}
    for index in np.flatnonzero(in_dev):
        first_row.setdefault(keys[index], index)
        spellings.setdefault(keys[index], []).append(decode(target[index]))
    order = sorted(first_row, key=first_row.get)
    dev_source = source[[first_row[key] for key in order]]
    dev_references = [sorted(set(spellings[key])) for key in order]
    return source[~in_dev], target[~in_dev], dev_source, dev_references


def train(args):
    import keras

    from course_lib.losses import SmoothedMaskedTokenLoss
    from course_lib.metrics.transliteration import word_accuracy
    from course_lib.tasks import transliteration as task
    from course_lib.text.vocabulary import Vocabulary

    print("backend:", keras.backend.backend(), "devices:", _devices(), flush=True)
    data = np.load(Path(args.data) / "train.npz")
    source_vocab = Vocabulary.load(Path(args.data) / "source_vocab.json")
    target_vocab = Vocabulary.load(Path(args.data) / "target_vocab.json")
    valid = json.loads((Path(args.data) / "valid.json").read_text())
    source, target = data["source"], data["target"]
    if args.limit:
        source, target = source[: args.limit], target[: args.limit]
    config = task.TransliterationConfig.for_profile(
        "full", units=args.units, embedding_dim=args.embedding_dim, batch_size=args.batch_size,
        learning_rate=args.learning_rate, steps_per_execution=1, model_seed=args.model_seed,
    )
    model = task.build_model(config, len(source_vocab), len(target_vocab), total_steps=1)
    if args.weight_decay > 0:
        optimizer = keras.optimizers.AdamW(config.learning_rate, weight_decay=args.weight_decay,
                                           clipnorm=config.clipnorm)
    else:
        optimizer = keras.optimizers.Adam(config.learning_rate, clipnorm=config.clipnorm)
    loss = SmoothedMaskedTokenLoss(args.label_smoothing) if args.label_smoothing > 0 else None
    model.compile(optimizer=optimizer, loss=loss)
    # A held-out part of the training file picks the best epoch (the validation
    # file is only used for the final figures).
    dev_source = dev_references = None
    if args.dev:
        source, target, dev_source, dev_references = split_dev_words(source, target, args.dev, target_vocab.decode)
    best = (-1.0, None, 0)
    rng = np.random.default_rng(args.model_seed or 0)
    planned_epochs = args.max_epochs
    started = time.perf_counter()
    epoch_seconds = []
    for epoch in range(args.max_epochs):
        if epoch >= planned_epochs:
            break
        fraction = epoch / max(1, planned_epochs)
        rate = config.learning_rate * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * fraction)))
        model.optimizer.learning_rate.assign(rate)
        batches = _fixed_width_batches(source, target, config.batch_size, rng)
        epoch_start = time.perf_counter()
        losses = []
        for inputs, target_out in batches:
            inputs = {
                "source": task.token_noise(inputs["source"], args.source_noise, rng),
                "target_in": task.token_noise(inputs["target_in"], args.target_noise, rng, keep_first=True),
            }
            logs = model.train_on_batch(inputs, target_out, return_dict=True)
            losses.append(logs["loss"])
        epoch_seconds.append(time.perf_counter() - epoch_start)
        elapsed = time.perf_counter() - started
        if epoch == 1:  # the first epoch includes compilation; plan from the second
            planned_epochs = min(args.max_epochs, max(3, int(args.budget_seconds // epoch_seconds[-1])))
        dev_note = ""
        if dev_source is not None and (epoch + 1) % args.dev_every == 0:
            dev_predictions = [target_vocab.decode(row) for row in _decode(model, dev_source, 1)]
            dev_accuracy = word_accuracy(dev_predictions, dev_references)
            dev_note = f" dev acc {dev_accuracy:.4f}"
            if dev_accuracy > best[0]:
                best = (dev_accuracy, [v.numpy() if hasattr(v, "numpy") else np.asarray(v)
                                       for v in model.weights], epoch + 1)
        print(f"epoch {epoch + 1}/{planned_epochs}: loss {np.mean(losses):.4f} lr {rate:.5f} "
              f"{epoch_seconds[-1]:.1f} s (total {elapsed:.0f} s){dev_note}", flush=True)
        if elapsed > args.budget_seconds * 1.15:
            print("time budget exhausted", flush=True)
            break
    train_seconds = time.perf_counter() - started
    if best[1] is not None:
        dev_predictions = [target_vocab.decode(row) for row in _decode(model, dev_source, 1)]
        final_dev = word_accuracy(dev_predictions, dev_references)
        if final_dev < best[0]:
            for variable, value in zip(model.weights, best[1]):
                variable.assign(value)
        else:
            best = (final_dev, None, len(epoch_seconds))
        print(f"using the weights of epoch {best[2]} (dev accuracy {max(best[0], final_dev):.4f})", flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_weights(out / "transliteration.weights.h5")
    metrics = {"train_seconds": train_seconds, "epochs": len(epoch_seconds), "epoch_seconds": epoch_seconds,
               "config": {"units": config.units, "embedding_dim": config.embedding_dim,
                          "batch_size": config.batch_size, "learning_rate": config.learning_rate,
                          "model_seed": args.model_seed},
               "train_pairs": int(len(source)), "valid_words": len(valid["words"]),
               "regularisation": {"source_noise": args.source_noise, "target_noise": args.target_noise,
                                  "label_smoothing": args.label_smoothing, "weight_decay": args.weight_decay},
               "best_epoch": best[2], "dev_accuracy": best[0]}
    _evaluate(model, data["valid_source"], valid, target_vocab, args.beams, metrics, out)


def _evaluate(model, valid_source, valid, target_vocab, beams, metrics, out):
    """Top-1 (greedy and beam), top-k and CER on the validation words; writes metrics.json."""
    from course_lib.metrics.transliteration import character_error_rate, top_k_accuracy, word_accuracy

    words, references = valid["words"], valid["references"]
    for beam_width in beams:
        decode_start = time.perf_counter()
        tokens = _decode(model, valid_source, beam_width)
        if beam_width == 1:
            candidates = [[target_vocab.decode(row)] for row in tokens]
        else:
            candidates = [[target_vocab.decode(beam) for beam in row] for row in tokens]
        predictions = [row[0] for row in candidates]
        metrics[f"beam{beam_width}"] = {
            "word_accuracy": word_accuracy(predictions, references),
            "top_k_accuracy": top_k_accuracy(candidates, references, k=beam_width),
            "cer": character_error_rate(predictions, references),
            "seconds": time.perf_counter() - decode_start,
        }
        print(f"beam {beam_width}: {metrics[f'beam{beam_width}']}", flush=True)
        (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    examples = [{"roman": w, "predicted": p, "references": r}
                for w, p, r in list(zip(words, predictions, references))[:40]]
    (out / "examples.json").write_text(json.dumps(examples, ensure_ascii=False, indent=1))
    print(json.dumps({k: v for k, v in metrics.items() if k != "epoch_seconds"}, indent=1))


def ensemble(args):
    """Decodes the validation words with the members' mean distribution."""
    import keras

    from course_lib.decoding.ensemble import Ensemble
    from course_lib.tasks import transliteration as task
    from course_lib.text.vocabulary import Vocabulary

    data = np.load(Path(args.data) / "train.npz")
    source_vocab = Vocabulary.load(Path(args.data) / "source_vocab.json")
    target_vocab = Vocabulary.load(Path(args.data) / "target_vocab.json")
    valid = json.loads((Path(args.data) / "valid.json").read_text())
    models, members = [], []
    for folder in args.members:
        member = json.loads((Path(folder) / "metrics.json").read_text())
        config = task.TransliterationConfig.for_profile(
            "full", units=member["config"]["units"], embedding_dim=member["config"]["embedding_dim"])
        model = task.build_model(config, len(source_vocab), len(target_vocab), total_steps=1)
        model.build()
        model.load_weights(Path(folder) / "transliteration.weights.h5")
        models.append(model)
        members.append({"folder": str(folder), **{k: member[k]["word_accuracy"] for k in member if k.startswith("beam")}})
    print("backend:", keras.backend.backend(), "devices:", _devices(), flush=True)
    metrics = {"members": members}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _evaluate(Ensemble(models), data["valid_source"], valid, target_vocab, args.beams, metrics, out)


def _devices():
    try:
        import jax

        return [str(d) for d in jax.devices()]
    except ImportError:
        return "n/a"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("prepare")
    p.add_argument("--train", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(handler=prepare)
    t = commands.add_parser("train")
    t.add_argument("--data", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--budget-seconds", type=float, default=380)
    t.add_argument("--max-epochs", type=positive_int, default=40)
    t.add_argument("--units", type=positive_int, default=256)
    t.add_argument("--embedding-dim", type=positive_int, default=64)
    t.add_argument("--batch-size", type=positive_int, default=128)
    t.add_argument("--learning-rate", type=float, default=2e-3)
    t.add_argument("--beams", type=positive_int, nargs="+", default=[1, 5])
    t.add_argument("--source-noise", type=float, default=0.0, help="share of source letters set to <unk>")
    t.add_argument("--target-noise", type=float, default=0.0, help="share of decoder inputs set to <unk>")
    t.add_argument("--label-smoothing", type=float, default=0.0)
    t.add_argument("--weight-decay", type=float, default=0.0, help="AdamW weight decay (0: Adam)")
    t.add_argument("--dev", type=int, default=0, help="hold out the last N distinct training words (all their rows) to pick the best epoch")
    t.add_argument("--dev-every", type=positive_int, default=5)
    t.add_argument("--limit", type=positive_int, help="use only the first N training pairs (smoke test)")
    t.add_argument("--model-seed", type=int, default=None, help="initial weights and batch order (ensemble members)")
    t.set_defaults(handler=train)
    e = commands.add_parser("ensemble", help="decode the validation words with several trained members")
    e.add_argument("--data", required=True)
    e.add_argument("--members", nargs="+", required=True, help="--out folders of `train` runs")
    e.add_argument("--out", required=True)
    e.add_argument("--beams", type=positive_int, nargs="+", default=[1, 5])
    e.set_defaults(handler=ensemble)
    args = parser.parse_args(argv)
    if args.command in ("train", "ensemble"):
        os.environ.setdefault("KERAS_BACKEND", "jax")
    args.handler(args)


if __name__ == "__main__":
    main()
