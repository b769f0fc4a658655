"""Profiles, distribution strategies and the training loop."""

from course_lib.training.fit import fit_steps
from course_lib.training.profiles import current_profile, pick
from course_lib.training.strategy import get_strategy

__all__ = ["current_profile", "fit_steps", "get_strategy", "pick"]
