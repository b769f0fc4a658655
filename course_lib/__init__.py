"""course_lib: encoder-decoder networks and attention in Keras 3.

The package is arranged in floors; a module imports only from floors below:

    layers/                      attention, attention pooling
    encoders/ decoders/ decoding/  built from layers
    models/                      seq2seq, captioner, document classifier
    data/ text/ metrics/ plots/ training/   beside the models
    tasks/                       one experiment each, for notebooks and CLI
    cli, grading/                on top
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

__version__ = "0.1.0"
