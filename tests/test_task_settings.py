"""Task settings: profiles, and the names and ranges every trainer checks before it builds anything."""

import pytest

from course_lib.training import pick


def test_pick_validates_an_explicit_profile(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "full")
    assert pick(1, 2, profile="fast") == 1
    assert pick(1, 2, profile="FAST") == 1  # as COURSE_PROFILE, case and spaces do not matter
    with pytest.raises(ValueError, match="fsat"):
        pick(1, 2, profile="fsat")  # would silently run the full budget


@pytest.mark.parametrize("make, budget", [("reversal", "steps"), ("translation", "epochs"),
                                          ("transliteration", "epochs"), ("captioning", "epochs")])
def test_a_misspelt_setting_is_refused_not_dropped(make, budget):
    """`epoch=5` for `epochs` used to be set as a stray attribute (or dict entry): the run used the profile's budget."""
    from course_lib.tasks import captioning, reversal, translation, transliteration

    build = {
        "reversal": lambda **given: reversal.ReversalConfig.for_profile("fast", **given),
        "translation": lambda **given: translation.TranslationConfig.for_profile("fast", **given),
        "transliteration": lambda **given: transliteration.TransliterationConfig.for_profile("fast", **given),
        "captioning": lambda **given: captioning.settings_for("shapes", "fast", **given),
    }[make]
    misspelt = budget[:-1]  # "step", "epoch"
    with pytest.raises(ValueError, match=rf"no setting '{misspelt}'; its settings are .*\b{budget}\b.*Received: {misspelt}=5"):
        build(**{misspelt: 5})
    settings = build(**{budget: 5, misspelt: None})  # None is "not given", whatever the name: a CLI passes all its options
    assert (settings[budget] if isinstance(settings, dict) else getattr(settings, budget)) == 5


def test_with_overrides_sets_given_values_on_a_dataclass_or_a_dict():
    import dataclasses

    from course_lib.training.profiles import with_overrides

    @dataclasses.dataclass
    class Settings:
        units: int = 4
        seed: int = 0

    settings = with_overrides(Settings(), {"units": 8, "seed": None}, "Settings")
    assert (settings.units, settings.seed) == (8, 0)
    assert with_overrides({"units": 4}, {"units": 2}, "units") == {"units": 2}
    with pytest.raises(ValueError, match=r"Settings has no setting 'sed', 'unit'; its settings are seed, units. Received: sed=1, unit=8"):
        with_overrides(Settings(), {"unit": 8, "sed": 1}, "Settings")


@pytest.mark.parametrize("task, setting, value, rule", [
    ("reversal", "steps", 0, "a positive integer"),  # was reported as Keras's `decay_steps`
    ("reversal", "batch_size", 2.5, "a positive integer"),
    ("reversal", "learning_rate", -2e-3, "positive"),
    ("translation", "epochs", 0, "a positive integer"),  # returned an untrained model
    ("translation", "learning_rate", -1e-3, "positive"),  # climbed the loss
    ("translation", "epochs", 1.5, "a positive integer"),
    ("transliteration", "beam_width", 0, "a positive integer"),
    ("transliteration", "batch_size", 0, "a positive integer"),  # ZeroDivisionError
    ("transliteration", "source_noise", 1.5, "between 0 and 1"),
    ("captioning", "epochs", 0, "a positive integer"),
    ("captioning", "learning_rate", float("nan"), "positive"),
])
def test_training_refuses_a_setting_out_of_range_before_building_anything(task, setting, value, rule):
    from course_lib.tasks import captioning, reversal, translation, transliteration

    start = {
        "reversal": lambda: reversal.train(reversal.ReversalConfig.for_profile("fast", **{setting: value}), verbose=0),
        "translation": lambda: translation.train(translation.TranslationConfig.for_profile("fast", **{setting: value})),
        "transliteration": lambda: transliteration.train(
            transliteration.TransliterationConfig.for_profile("fast", **{setting: value}), train_pairs=[]),
        "captioning": lambda: captioning.train_captioning("shapes", profile="fast", **{setting: value}),
    }[task]
    with pytest.raises(ValueError, match=rf"`{setting}` of .* must be {rule}. Received: {setting}={value!r}"):
        start()


def test_reversal_refuses_lengths_no_batch_can_have_before_building_anything():
    from course_lib.tasks import reversal

    config = reversal.ReversalConfig.for_profile("fast", min_length=8, max_length=5)
    with pytest.raises(ValueError, match="min_length=8, max_length=5"):  # failed inside tf.data's PyFunc
        reversal.train(config, verbose=0)


@pytest.mark.parametrize("start, message", [
    # epochs=0 was read as "not given" and the profile's epochs were trained
    (lambda task: task.train_documents(epochs=0), "`epochs` of train_documents must be a positive integer"),
    (lambda task: task.train_documents(max_words=0), "`max_words` of train_documents must be a positive integer"),
    (lambda task: task.train_dialogs(learning_rate=0.0), "`learning_rate` of train_dialogs must be positive"),
    (lambda task: task.train_dialogs(learning_rate=-1e-3), "`learning_rate` of train_dialogs must be positive"),
])
def test_documents_and_dialogs_refuse_a_zero_instead_of_taking_the_default(start, message):
    from course_lib.tasks import documents

    with pytest.raises(ValueError, match=message):
        start(documents)


def test_the_language_model_refuses_a_misspelt_or_fractional_setting():
    from course_lib.tasks.language_model import train_language_model

    with pytest.raises(ValueError, match="no setting 'step'.*Received: step=10"):
        train_language_model("rnn", settings={"step": 10})  # was dropped: the profile's steps were trained
    with pytest.raises(ValueError, match="`steps` of .* must be a positive integer. Received: steps=2.5"):
        train_language_model("rnn", settings={"steps": 2.5})  # was truncated to 2


def test_check_ranges_lets_none_pass_and_names_the_first_bad_setting():
    from course_lib.training.profiles import check_ranges

    settings = {"epochs": 3, "limit": None, "noise": 0.0, "rate": 1e-3}
    assert check_ranges(settings, "S", positive_integers=("epochs", "limit"), positive=("rate",), fractions=("noise",)) is settings
    with pytest.raises(ValueError, match="`epochs` of S must be a positive integer. Received: epochs=True"):
        check_ranges({"epochs": True}, "S", positive_integers=("epochs",))
    with pytest.raises(ValueError, match="`weight` of S must be at least 0. Received: weight=-0.5"):
        check_ranges({"weight": -0.5}, "S", non_negative=("weight",))
