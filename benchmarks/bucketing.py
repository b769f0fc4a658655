"""Seconds per epoch: length-bucketed batches against padding to the longest word.

Trains the transliteration model (bidirectional GRU encoder, attentional
decoder) on the same data twice, once with batches padded to their own
longest word (`course_lib.data.buckets`, bucketed) and once with every batch
padded to the longest word of the whole set, times a sample of training
batches after compilation, and extrapolates to a full epoch. Also times
decoding the whole validation set in length-sorted batches.

    python benchmarks/bucketing.py --train ../shared/data/aksharantar_hin/hin_train.csv \
        --valid ../shared/data/aksharantar_hin/hin_valid.csv

Without `--train` the generated word set is used. Timings on a shared
machine are inflated; the ratio is the figure to read.
"""

import argparse
import time

import numpy as np

from course_lib.tasks.arguments import positive_int


def seconds_per_epoch(config, source, target, vocab_sizes, bucketed, batches):
    import keras

    from course_lib.data.buckets import make_batches
    from course_lib.tasks import transliteration as task

    keras.utils.set_random_seed(0)
    model = task.build_model(config, *vocab_sizes, total_steps=1000)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), steps_per_execution=1)
    epoch = make_batches(source, target, config.batch_size, bucketed=bucketed, seed=1)
    shapes = [batch[0]["source"].shape[1] for batch in epoch]
    warm, timed = epoch[:3], epoch[3:3 + batches]
    for inputs, target_out in warm:  # compiles the (shape-agnostic) train step
        model.train_on_batch(inputs, target_out)
    started = time.perf_counter()
    for inputs, target_out in timed:
        model.train_on_batch(inputs, target_out)
    per_batch = (time.perf_counter() - started) / len(timed)
    return per_batch * len(epoch), len(epoch), float(np.mean(shapes)), model


def main(argv=None):
    from course_lib.tasks import transliteration as task

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", help="Aksharantar .csv / Dakshina .tsv (default: generated words)")
    parser.add_argument("--valid", help="validation file to time batched decoding on")
    parser.add_argument("--batches", type=positive_int, default=40, help="timed batches per mode")
    parser.add_argument("--units", type=positive_int, default=128)
    parser.add_argument("--batch-size", type=positive_int, default=128)
    args = parser.parse_args(argv)

    config = task.TransliterationConfig.for_profile(
        "full", units=args.units, batch_size=args.batch_size, label_smoothing=0.0
    )
    if args.train:
        train_pairs = task.load_pairs(args.train)
        valid_pairs = task.load_pairs(args.valid) if args.valid else None
    else:
        train_pairs, valid_pairs, _ = task.generated_splits(config)
    source_vocab, target_vocab = task.build_vocabularies(train_pairs)
    source, target = task.encode_pairs(train_pairs, source_vocab, target_vocab)
    sizes = (len(source_vocab), len(target_vocab))
    print(f"{len(source)} training pairs, longest source {source.shape[1]}, longest target {target.shape[1]}, "
          f"batch {args.batch_size}, GRU {args.units}; timing {args.batches} batches per mode")
    padded_seconds, count, padded_width, _ = seconds_per_epoch(config, source, target, sizes, False, args.batches)
    print(f"padded to the longest word: {padded_seconds:8.1f} s/epoch "
          f"({count} batches, mean source width {padded_width:.1f})", flush=True)
    bucketed_seconds, count, bucketed_width, model = seconds_per_epoch(
        config, source, target, sizes, True, args.batches
    )
    print(f"length-bucketed batches:    {bucketed_seconds:8.1f} s/epoch "
          f"({count} batches, mean source width {bucketed_width:.1f})")
    print(f"speed-up: {padded_seconds / bucketed_seconds:.2f}x")
    if valid_pairs:
        words, _ = task.test_items(valid_pairs, target_vocab)
        for beam_width in (1, 5):
            task.transliterate_words(model, source_vocab, target_vocab, words[:64], beam_width=beam_width)  # compile
            started = time.perf_counter()
            task.transliterate_words(model, source_vocab, target_vocab, words, beam_width=beam_width)
            seconds = time.perf_counter() - started
            print(f"decoding {len(words)} validation words in length-sorted batches of 512, beam {beam_width}: "
                  f"{seconds:.1f} s ({1000 * seconds / len(words):.2f} ms/word)")


if __name__ == "__main__":
    main()
