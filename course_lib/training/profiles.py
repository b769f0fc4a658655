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


def with_overrides(settings, overrides, what):
    """Sets each given value of `overrides` on `settings` (a dataclass or a dict); returns `settings`.

    A value of None means "not given" and is skipped, so a command line can
    pass every option it has. A given value whose name `settings` does not
    have raises ValueError: a misspelt `epoch=5` (for `epochs`) would
    otherwise be dropped without a word, and the run would use the profile's
    budget instead.

    Args:
        settings: a dataclass instance (a task's config) or a dict of settings.
        overrides: `{name: value}`.
        what: how the error names `settings`, e.g. "TranslationConfig".
    """
    import dataclasses

    names = [f.name for f in dataclasses.fields(settings)] if dataclasses.is_dataclass(settings) else list(settings)
    unknown = {name: value for name, value in overrides.items() if value is not None and name not in names}
    if unknown:
        raise ValueError(
            f"{what} has no setting {', '.join(map(repr, sorted(unknown)))}; its settings are "
            f"{', '.join(sorted(names))}. Received: " + ", ".join(f"{name}={unknown[name]!r}" for name in sorted(unknown))
        )
    for name, value in overrides.items():
        if value is None:
            continue
        if isinstance(settings, dict):
            settings[name] = value
        else:
            setattr(settings, name, value)
    return settings


def check_ranges(settings, what, positive_integers=(), positive=(), non_negative=(), fractions=()):
    """Raises ValueError naming the first setting of `settings` outside its range; None passes (not set).

    A task checks its settings with this before it builds anything: `epochs=0`
    would return an untrained model, a negative learning rate would climb the
    loss, and a batch size of 0 fails deep inside the data pipeline.

    Args:
        settings: a dataclass instance or a dict.
        what: how the error names `settings`, e.g. "TranslationConfig".
        positive_integers: names of settings that must be whole numbers > 0.
        positive: names of numbers that must be > 0.
        non_negative: names of numbers that must be >= 0.
        fractions: names of numbers that must lie in [0, 1].
    """
    import numbers

    def value_of(name):
        return settings[name] if isinstance(settings, dict) else getattr(settings, name)

    rules = [
        (positive_integers, lambda v: isinstance(v, numbers.Integral) and v > 0, "a positive integer"),
        (positive, lambda v: v > 0, "positive"),
        (non_negative, lambda v: v >= 0, "at least 0"),
        (fractions, lambda v: 0 <= v <= 1, "between 0 and 1"),
    ]
    for names, holds, wanted in rules:
        for name in names:
            value = value_of(name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not holds(value):
                raise ValueError(f"`{name}` of {what} must be {wanted}. Received: {name}={value!r}")
    return settings
