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

# TensorFlow reads its C++ log level once, when it loads, so these lines only work if course_lib is imported
# before TensorFlow (or Keras). Level 3 hides TensorFlow's C++ INFO, WARNING and ERROR log lines (e.g. "failed
# call to cuInit" on a machine without a GPU, "oneDNN supports DT_BOOL only on ..."); Python exceptions and
# warnings are not affected. A value the user has set already wins. Three lines that TensorFlow's shared
# libraries print while they load ("WARNING: All log messages before absl::InitializeLog() ...", "oneDNN custom
# operations are on", "Could not find cuda drivers") come before TensorFlow reads this setting. None of the
# environment variables we tried hides the absl and CUDA lines. TF_ENABLE_ONEDNN_OPTS=0 would hide the oneDNN
# line, but only by switching oneDNN off, which changes speed and results, so we leave it on.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

__version__ = "0.1.0"
