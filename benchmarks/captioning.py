"""Captioning figures: epoch time, decoding speed and quality, on shapes or a Flickr8k folder.

    python benchmarks/captioning.py shapes [--decoder attention|option1|option2] [--epochs N]
    python benchmarks/captioning.py flickr8k --data ../shared/data/flickr8k_1k [--encoder small|vgg16|mobilenet]
        [--decoder attention] [--epochs N] [--weights imagenet|none]

Prints, as one JSON line at the end: the device, seconds of the first epoch
(tracing included) and of the later ones, image-caption pairs per second in
training (both null with `--epochs 1`: no epoch without tracing),
greedy and beam (k=3) decoding time per image, the test metrics (BLEU-1..4,
distinct-caption rate; exact match and attention-on-object on shapes) and, for
a frozen backbone, the seconds to compute the features once and to read them
back from the cache. `--weights none` times a backbone with random weights
(the same arithmetic; use it where the ImageNet weights cannot be
downloaded - its captions mean nothing). Real data is for benchmarks only:
point --data at your copy. Works with `KERAS_BACKEND=jax` too, also on a GPU
machine without TensorFlow (the text is then normalised in plain Python;
`benchmarks/device_session.sh` runs it there).
"""

import argparse
import json
import os
import platform
import tempfile
import time

from course_lib.tasks.arguments import positive_int


class EpochTimer:
    """Wall time of every epoch (a Keras callback, made lazily to import Keras late)."""

    @staticmethod
    def make():
        import keras

        class Timer(keras.callbacks.Callback):
            def on_train_begin(self, logs=None):
                self.seconds = []

            def on_epoch_begin(self, epoch, logs=None):
                self.start = time.perf_counter()

            def on_epoch_end(self, epoch, logs=None):
                self.seconds.append(time.perf_counter() - self.start)

        return Timer()


def device_name():
    import keras

    backend = keras.backend.backend()
    try:
        if backend == "jax":
            import jax

            return f"jax {jax.devices()[0].device_kind}"
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        return f"tensorflow {'GPU ' + gpus[0].name if gpus else 'CPU'}"
    except Exception as error:  # noqa: BLE001 - only a label
        return f"{backend} ({error})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", choices=["shapes", "flickr8k"])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "flickr8k_1k"))
    parser.add_argument("--encoder", default="small", choices=["small", "vgg16", "mobilenet"])
    parser.add_argument("--decoder", default="attention", choices=["attention", "option1", "option2"])
    parser.add_argument("--epochs", type=positive_int, default=None)
    parser.add_argument("--weights", default="imagenet", help="'imagenet', a weights file, or 'none'")
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.cache_dir:
        return measure(args, args.cache_dir)
    # Without --cache-dir the features go to a temporary folder, removed at the end
    # (a frozen VGG16's features of the training images fill hundreds of megabytes).
    with tempfile.TemporaryDirectory(prefix="caption_features_") as cache_dir:
        return measure(args, cache_dir)


def measure(args, cache_dir):
    """Trains once as `args` ask, caching backbone features in `cache_dir`; prints and returns the figures."""
    from course_lib.tasks import captioning as task
    from course_lib.training.profiles import current_profile

    weights = None if args.weights == "none" else args.weights
    timer = EpochTimer.make()
    import keras

    original_fit = keras.Model.fit

    def fit_with_timer(self, *fit_args, **fit_kwargs):
        fit_kwargs["callbacks"] = list(fit_kwargs.get("callbacks") or []) + [timer]
        return original_fit(self, *fit_args, **fit_kwargs)

    extra = {}
    if args.dataset == "flickr8k":
        extra = {"images": os.path.join(args.data, "Images"), "captions": os.path.join(args.data, "captions.txt")}
    keras.Model.fit = fit_with_timer
    try:
        start = time.perf_counter()
        run = task.train_captioning(args.dataset, args.decoder, args.encoder, epochs=args.epochs, weights=weights,
                                    cache_dir=cache_dir, seed=args.seed, verbose=2, **extra)
        total = time.perf_counter() - start
    finally:
        keras.Model.fit = original_fit
    features = {}
    if run.settings["encoder"] != "small":
        # Second pass over the same images: the features come from the cache.
        from course_lib.encoders.pretrained import load_backbone

        backbone = load_backbone(run.settings["encoder"], weights=weights)
        again = time.perf_counter()
        task.model_inputs(run.settings, "train", run.data["train"], backbone)
        features["cache_read_seconds"] = round(time.perf_counter() - again, 2)
        features["setup_and_features_seconds"] = round(total - run.train_seconds, 2)
    test = run.data["test"]
    metrics, captions, _ = task.evaluate_run(run.model, run.vocabulary, test, run.inputs["test"], args.dataset)
    timings = {}
    for width in (1, 3):
        run.model.generate(run.inputs["test"], beam_width=width)  # trace once
        begin = time.perf_counter()
        run.model.generate(run.inputs["test"], beam_width=width)
        timings[f"decode_ms_per_image_beam{width}"] = round(1000 * (time.perf_counter() - begin) / len(test), 3)
    examples = len(run.data["train"].pairs()) if args.dataset == "flickr8k" else len(run.data["train"])
    steady = timer.seconds[1:]  # after the first epoch's tracing; none with --epochs 1
    later = sum(steady) / len(steady) if steady else None
    result = {
        "dataset": args.dataset,
        "encoder_requested": args.encoder,
        "encoder": run.settings["encoder"],
        "weights": args.weights if run.settings["encoder"] != "small" else "trained from scratch",
        "decoder": args.decoder,
        "profile": current_profile(),
        "device": device_name(),
        "machine": platform.processor() or platform.machine(),
        "train_examples": examples,
        "epochs": len(timer.seconds),
        "first_epoch_seconds": round(timer.seconds[0], 2),
        "later_epoch_seconds": round(later, 2) if later else None,  # null: only one epoch, tracing included
        "train_examples_per_second": round(examples / later, 1) if later else None,
        **features,
        **timings,
        **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in metrics.items()},
        "examples": [[c, refs[0]] for c, refs in list(zip(captions, task.references_of(test)))[:5]],
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
