"""The knobs a hook reads are defined once (core/settings.py): the full config (pydantic) and the hooks' stdlib
reader take the same defaults and bounds from there, so a value means the same in the daemon and in a hook."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tempera.core import paths
from tempera.core import settings
from tempera.core.config import load_config
from tempera.core.errors import InvalidInput

KNOBS = [
    settings.BUDGET_CHARS,
    settings.MAX_EPISODES,
    settings.MIN_KEYWORD_HITS,
    settings.DAEMON_TIMEOUT,
    *settings.SALIENCE.values(),
]
HOOK_FIELD = {"daemon_timeout_seconds": "daemon_timeout"}  # the HookSettings name where it differs


def _hook_value(knob: settings.Knob) -> float:
    hs = settings.hook_settings({})
    if knob.section == "retrieval":
        return float(getattr(hs.salience, knob.key))
    return float(getattr(hs, HOOK_FIELD.get(knob.key, knob.key)))


def _config_value(knob: settings.Knob, path: Path) -> float:
    return float(getattr(getattr(load_config(path, environ={}), knob.section), knob.key))


def _write(path: Path, knob: settings.Knob, value: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"[{knob.section}]\n{knob.key} = {int(value) if knob.integer else value}\n")


@pytest.mark.parametrize("knob", KNOBS, ids=lambda k: k.key)
def test_a_hook_and_the_config_read_one_definition(knob: settings.Knob, data_dir: Path) -> None:
    path = data_dir / paths.CONFIG_NAME
    assert _config_value(knob, path) == _hook_value(knob) == knob.default  # no file: the same default
    inside = knob.lo + (knob.hi - knob.lo) / 3
    inside = int(inside) if knob.integer else inside
    _write(path, knob, inside)
    assert _config_value(knob, path) == _hook_value(knob) == pytest.approx(inside)
    for outside, bound in ((knob.hi * 2 + 1, knob.hi), (knob.lo - 1, knob.lo)):
        _write(path, knob, outside)
        with pytest.raises(InvalidInput, match=f"config {knob.section}.{knob.key}"):
            load_config(path, environ={})  # the config refuses it, naming the key
        assert _hook_value(knob) == bound  # a hook must answer anyway: clamped to the same bound


def test_an_edit_in_the_same_clock_tick_is_read(data_dir: Path) -> None:
    """`read_toml` keeps its parse while the file's (mtime, size, inode) stay the same, for the daemon that reads
    it per hook call. A second edit of the same size within one mtime tick keeps all three, so a file modified in
    the last seconds is parsed again: the new value is seen."""
    path = data_dir / paths.CONFIG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[inject]\nbudget_chars = 1000\n")
    tick = path.stat().st_mtime_ns
    assert settings.read_toml(path)["inject"]["budget_chars"] == 1000
    path.write_text("[inject]\nbudget_chars = 3000\n")  # the same size, written in place: the same inode
    os.utime(path, ns=(tick, tick))  # and the same mtime, as within one tick of a coarse clock
    assert settings.read_toml(path)["inject"]["budget_chars"] == 3000
