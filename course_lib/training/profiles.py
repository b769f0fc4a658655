"""Run profiles: `fast` (CI, a minute on a CPU) and `full` (the default, a GPU).

Set `COURSE_PROFILE=fast` to shrink every experiment; notebooks, the CLI and
tests read the profile from here.
"""

import os

PROFILES = ("fast", "full")


def _checked(name, setting, received):
    """`name` when it is a profile; a ValueError naming the `setting` and what it `received` otherwise."""
    if name not in PROFILES:
        raise ValueError(f"{setting} must be one of {PROFILES}. Received: {received}")
    return name


def current_profile():
    """The active profile name, from the `COURSE_PROFILE` environment variable."""
    name = os.environ.get("COURSE_PROFILE", "full").strip().lower() or "full"
    return _checked(name, "COURSE_PROFILE", f"COURSE_PROFILE={name!r}")


def pick(fast, full, profile=None):
    """Returns `fast` or `full` according to the profile."""
    if profile is None:
        name = current_profile()
    else:
        name = _checked(str(profile).strip().lower(), "`profile`", f"profile={profile!r}")
    return fast if name == "fast" else full
