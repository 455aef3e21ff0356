"""Config.update and Config.set are all or nothing: a dict whose second key is bad (unknown, out of range, of the
wrong type) raises and leaves the config exactly as it was, so a caller that catches the error does not go on with a
half-updated machine."""

from __future__ import annotations

import pytest

from smtlab import Config, ConfigError


def test_an_update_whose_second_key_is_out_of_range_changes_nothing():
    cfg = Config()
    before = cfg.to_dict()
    rob = cfg.get("core.rob.entries")
    with pytest.raises(ConfigError, match="core.rob.entries"):
        cfg.update({"seed": 7, "core.rob.entries": -1})
    assert cfg.get("seed") == before["seed"]
    assert cfg.get("core.rob.entries") == rob
    assert cfg.to_dict() == before
    assert cfg.source == Config().source


def test_an_update_whose_second_key_is_unknown_or_of_the_wrong_type_changes_nothing():
    cfg = Config()
    before = cfg.to_dict()
    with pytest.raises(ConfigError, match="no_such_key"):
        cfg.update({"seed": 7, "core.no_such_key": 1})
    assert cfg.to_dict() == before
    with pytest.raises((ConfigError, TypeError)):
        cfg.update({"seed": 7, "core.rob.entries": object()})
    assert cfg.to_dict() == before


def test_a_good_update_applies_every_key():
    cfg = Config()
    cfg.update({"seed": 7, "core.rob.entries": 64})
    assert cfg.get("seed") == 7
    assert cfg.get("core.rob.entries") == 64


def test_a_refused_set_changes_nothing():
    cfg = Config()
    before = cfg.to_dict()
    source = cfg.source
    with pytest.raises(ConfigError, match="seed"):
        cfg.set("seed", 10**18 + 64)
    assert cfg.to_dict() == before
    assert cfg.source == source


@pytest.mark.parametrize("call,named", [
    (lambda c: c.set("core.\udcff", 1), r"config key 'core\.\\udcff'"),
    (lambda c: c.set("core.rob.sharing", "sha\udcffred"), r"the value of config key 'core\.rob\.sharing' 'sha\\udcffred'"),
    (lambda c: c.set("core.ports", ["alu", "a\udcff"]), r"an item of config key 'core\.ports' 'a\\udcff'"),
    (lambda c: c.update({"seed": 7, "\udcff": 1}), r"config key '\\udcff'"),
    (lambda c: c.get("core.\udcff"), r"config key 'core\.\\udcff'"),
])
def test_a_key_or_value_with_a_lone_surrogate_is_a_config_error_that_shows_it_escaped(call, named):
    # A str from bytes decoded with errors="surrogateescape" (os.fsdecode of a non-UTF-8 name) has no UTF-8 form:
    # pybind11 alone would answer "incompatible function arguments" or "Unable to cast Python instance", naming
    # neither the key nor the text. The message shows the text as Python's repr does, and nothing changed.
    cfg = Config()
    before = cfg.to_dict()
    with pytest.raises(ConfigError, match=named + r" is not valid text: it holds a lone surrogate"):
        call(cfg)
    assert cfg.to_dict() == before
