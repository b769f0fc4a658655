"""Profiles, distribution strategies and the training loop.

`current_profile` and `pick` are plain Python; `fit_steps` (Keras) and
`get_strategy` (TensorFlow) load on first use, so that the command line can
build its parser, and `course-lib --help` answer, without loading TensorFlow.
"""

from course_lib.training.profiles import current_profile, pick

__all__ = ["current_profile", "fit_steps", "get_strategy", "pick"]

_LOADED_ON_USE = {"fit_steps": "course_lib.training.fit", "get_strategy": "course_lib.training.strategy"}


def __getattr__(name):
    if name in _LOADED_ON_USE:
        import importlib

        return getattr(importlib.import_module(_LOADED_ON_USE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
