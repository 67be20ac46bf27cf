"""`core/config.py` `set_keys`, the one writer of config.toml keys (`tempera learn refit-gate --write`): the user's file
keeps its comments, order and other keys, and a text the edit cannot make valid is refused with the file left
as it was. Real files, read back by the real loader."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tempera.core import paths, settings
from tempera.core.config import load_config, set_keys
from tempera.core.errors import InvalidInput

WEIGHTS = [-3.0, 5.0, -0.5, 0.0, 0.5, 1.0, 1.0]


def test_a_key_written_over_lines_is_replaced_where_it_stands(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    text = (
        "# mine\n[inject]\nbudget_chars = 1500  # smaller\n"
        "gate_weights = [\n  -4.0, 6.0,\n  -0.5, 0.0, 0.4, 1.3, 1.1,\n]\ngate_bar = 0.2\n\n[retrieval]\n# a note\n"
    )
    path.write_text(text)
    os.chmod(path, 0o640)
    set_keys(path, "inject", {"gate_weights": WEIGHTS})
    after = path.read_text()
    assert after == text.replace(
        "gate_weights = [\n  -4.0, 6.0,\n  -0.5, 0.0, 0.4, 1.3, 1.1,\n]", f"gate_weights = {WEIGHTS}"
    )
    cfg = load_config(path, environ={}).inject
    assert (cfg.gate_weights, cfg.gate_bar, cfg.budget_chars) == (WEIGHTS, 0.2, 1500)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_missing_section_or_file_is_added(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    set_keys(path, "inject", {"gate_bar": 0.3})
    assert path.read_text() == "[inject]\ngate_bar = 0.3\n"
    path.write_text("[general]\ndisabled = false\n")
    set_keys(path, "inject", {"gate_weights": WEIGHTS, "gate_bar": 0.25})
    assert path.read_text() == f"[general]\ndisabled = false\n\n[inject]\ngate_weights = {WEIGHTS}\ngate_bar = 0.25\n"
    set_keys(path, "inject", {"gate_top_share": 0.4})  # at the end of its section, before what follows it
    assert load_config(path, environ={}).inject.gate_top_share == 0.4


@pytest.mark.parametrize(
    "text, values",
    [
        ("[inject]\ngate_bar = 0.2\n", {"gate_bar": 2.0}),  # out of its bounds
        ("[inject]\ngate_bar = 0.2\n", {"gate_weights": [1.0, 2.0]}),  # one weight per feature
        ("inject.gate_bar = 0.2\n", {"gate_bar": 0.3}),  # a dotted key: the new section would repeat it
    ],
)
def test_a_text_that_would_not_validate_is_refused_and_the_file_kept(
    tmp_path: Path, text: str, values: dict[str, float | list[float]]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(InvalidInput):
        set_keys(path, "inject", values)
    assert path.read_text() == text


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
