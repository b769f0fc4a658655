"""Image captioning: options 1 and 2 (fc7 as `s_0` / at every step) and attention over locations.

Wires the data (`course_lib.data.shapes` by default, or a Flickr8k-style
folder), the encoders (`small` CNN trained from scratch, or a frozen `vgg16` /
`mobilenet` whose features are cached on disk), the `ImageCaptioner` and the
captioning metrics. Notebooks and the CLI both call the functions here:

    course-lib train captioning --decoder attention --out runs/caption
    course-lib evaluate captioning --model runs/caption --metrics-json m.json
    course-lib caption --model runs/caption photo.jpg --overlay where.png

The package, one job per module (each imports only from those above it):

- `config`: `SETTINGS` per dataset and profile, `settings_for`, the encoder
  and decoder choices;
- `data`: shapes or Flickr8k parts, references, the model inputs of a part
  (images, or a frozen backbone's cached features);
- `model`: `build_captioner`, `CaptioningRun`, `generate_captions`;
- `training`: `train_captioning`;
- `evaluation`: BLEU-1..4 against cleaned references (`score_captions`),
  `evaluate_run` (with exact match and attention on object on shapes),
  `image_blind_accuracy` (the word accuracy an image-blind guesser gets);
- `showcase`: `pick_showcase_image`, the test image whose attention the
  notebook draws;
- `runs`: `save_run` and `load_run` of a run folder (`model.keras`,
  `vocabulary.json`, `run.json`), the test part a saved run is evaluated on;
- `cli`: the `train captioning`, `evaluate captioning` and `caption` commands.

Everything public is importable from here:
`from course_lib.tasks import captioning as task; task.train_captioning(...)`.
"""

from course_lib.tasks.captioning.cli import caption_files, register_cli
from course_lib.tasks.captioning.config import DECODER_CHOICES, ENCODER_CHOICES, SETTINGS, settings_for
from course_lib.tasks.captioning.data import (
    backbone_features, load_flickr_parts, load_shapes_parts, model_inputs, references_of, resolve_encoder,
)
from course_lib.tasks.captioning.evaluation import (
    UNK_FOR_BLEU, bleu_hypothesis, bleu_reference, evaluate_run, image_blind_accuracy, image_blind_caption,
    score_captions,
)
from course_lib.tasks.captioning.model import CaptioningRun, build_captioner, generate_captions
from course_lib.tasks.captioning.runs import RUN_FILE, evaluation_data, load_run, save_run
from course_lib.tasks.captioning.showcase import pick_showcase_image
from course_lib.tasks.captioning.training import train_captioning

__all__ = [
    "DECODER_CHOICES", "ENCODER_CHOICES", "RUN_FILE", "SETTINGS", "UNK_FOR_BLEU", "CaptioningRun",
    "backbone_features", "bleu_hypothesis", "bleu_reference", "build_captioner", "caption_files", "evaluate_run",
    "evaluation_data", "generate_captions", "image_blind_accuracy", "image_blind_caption", "load_flickr_parts",
    "load_run",
    "load_shapes_parts", "model_inputs", "pick_showcase_image", "references_of", "register_cli", "resolve_encoder",
    "save_run", "score_captions", "settings_for", "train_captioning",
]
