"""Run profiles: `fast` (CI, a minute on a CPU) and `full` (the default, a GPU).

Set `COURSE_PROFILE=fast` to shrink every experiment; notebooks, the CLI and
tests read the profile from here.
"""

import os

PROFILES = ("fast", "full")


def current_profile():
    """The active profile name, from the `COURSE_PROFILE` environment variable."""
    name = os.environ.get("COURSE_PROFILE", "full").strip().lower() or "full"
    if name not in PROFILES:
        raise ValueError(f"COURSE_PROFILE must be one of {PROFILES}. Received: COURSE_PROFILE={name!r}")
    return name


def pick(fast, full, profile=None):
    """Returns `fast` or `full` according to the profile."""
    name = current_profile() if profile is None else str(profile).strip().lower()
    if name not in PROFILES:
        raise ValueError(f"`profile` must be one of {PROFILES}. Received: profile={profile!r}")
    return fast if name == "fast" else full
