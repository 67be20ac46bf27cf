"""Where settings come from (config.toml, then TEMPERA_SECTION__KEY env vars) and the one definition of the knobs
a hook reads, with the standard library only: a hook process cannot pay for importing pydantic.

`core/config.py` validates the whole layered document strictly (a bad value is an error that names its key) and
takes these knobs' defaults and bounds from here; `hook_settings` reads the same document for the hooks, leniently
(a broken file or value falls back, clamped into the same bounds: a hook must answer anyway). `hooks/relay.py`
repeats the daemon timeout's knob, pinned by tests/hooks/test_entry_fuzz.py.
"""

from __future__ import annotations

import os
import time
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from tempera.core import paths
from tempera.core.errors import InvalidInput
from tempera.core.ranking import SalienceWeights

ENV_PREFIX = "TEMPERA_"
KILL_SWITCH_ENV = "TEMPERA_DISABLE"  # the short spelling of TEMPERA_GENERAL__DISABLED
TRUE = frozenset({"1", "true", "yes", "on"})


class Knob(NamedTuple):
    """A number setting with inclusive bounds: config.py rejects a value outside them, a hook clamps it."""

    section: str
    key: str
    default: float
    lo: float
    hi: float
    integer: bool = False

    @property
    def env(self) -> str:
        return f"{ENV_PREFIX}{self.section.upper()}__{self.key.upper()}"

    def read(self, doc: Mapping[str, Any]) -> float:
        """The knob's value in a layered document, clamped; the default when absent or not a number."""
        section = doc.get(self.section)
        raw = section.get(self.key, self.default) if isinstance(section, dict) else self.default
        try:
            value = min(self.hi, max(self.lo, float(raw)))
        except (TypeError, ValueError, OverflowError):
            return self.default
        return int(value) if self.integer else value


BUDGET_CHARS = Knob("inject", "budget_chars", 2000, 200, 9000, integer=True)
MAX_EPISODES = Knob("inject", "max_episodes", 3, 0, 20, integer=True)
MIN_KEYWORD_HITS = Knob("inject", "min_keyword_hits", 2, 1, 50, integer=True)
DAEMON_TIMEOUT = Knob("inject", "daemon_timeout_seconds", 2.0, 0.05, 30.0)
_SALIENCE = SalienceWeights()
# [retrieval]'s salience knobs (core/ranking.py), by their names there: the keyword path ranks as the warm path does
SALIENCE = {
    name: Knob("retrieval", name, getattr(_SALIENCE, name), lo, hi)
    for name, lo, hi in (
        ("utility_effect", 0.0, 1.0),
        ("verification_effect", 0.0, 1.0),
        ("freshness_floor", 0.0, 1.0),
        ("recency_weight", 0.0, 1.0),
        ("recency_halflife_days", 0.01, 1e6),
    )
}
HOOK_SECTIONS = ("general", "inject", "retrieval")


def env_overrides(environ: Mapping[str, str], sections: Iterable[str]) -> dict[str, dict[str, str]]:
    """TEMPERA_SECTION__KEY variables of the known sections, and TEMPERA_DISABLE as general.disabled."""
    known = set(sections)
    out: dict[str, dict[str, str]] = {}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or "__" not in key:
            continue
        section, _, field = key[len(ENV_PREFIX) :].lower().partition("__")
        if section in known:
            out.setdefault(section, {})[field] = value
    if environ.get(KILL_SWITCH_ENV, "").strip().lower() in TRUE:
        out.setdefault("general", {})["disabled"] = "true"
    return out


RACY_NS = 2_000_000_000  # a file changed this recently is parsed again even with an unchanged stamp


def read_toml(path: Path) -> dict[str, Any]:
    """config.toml as a document ({} when there is none); a file that is not TOML raises InvalidInput.

    Long-lived processes (daemon, MCP server) read it per hook call, so that an edit applies at the next prompt:
    the parse is kept and served again while the file's (mtime, size, inode) stay the same, so a call costs one
    stat. A file modified in the last two seconds is parsed again anyway: a second edit in the same clock tick, of
    the same size, would otherwise hide behind an unchanged stamp (git's "racy" rule)."""
    stamp = file_stamp(path)
    if stamp is None:
        return {}
    kept = _PARSED.get(path)
    if kept is not None and kept[0] == stamp and settled(stamp):
        return dict(kept[1])  # `layered` replaces sections, never edits one: a shallow copy keeps the parse intact
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc})") from exc
    _PARSED[path] = (stamp, doc)
    return dict(doc)


_PARSED: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """The file's (mtime, size, inode); None when there is none (as Path.exists: a file that cannot be looked at is
    no file)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def settled(stamp: tuple[int, int, int]) -> bool:
    """Whether an unchanged stamp proves an unchanged file: not for a file modified in the last RACY_NS."""
    return time.time_ns() - stamp[0] > RACY_NS


def config_key(environ: Mapping[str, str]) -> tuple[Any, ...] | None:
    """What the layered config depends on: config.toml's stamp and the TEMPERA_* environment; None while the file
    is too fresh for its stamp to prove anything (`settled`)."""
    stamp = file_stamp(paths.config_path())
    if stamp is not None and not settled(stamp):
        return None
    # the keys first, the values of ours only: os.environ decodes what it yields, and most of it is not ours
    return stamp, tuple((k, environ[k]) for k in sorted(k for k in environ if k.startswith(ENV_PREFIX)))


def layered(data: dict[str, Any], environ: Mapping[str, str], sections: Iterable[str]) -> dict[str, Any]:
    """The file's document (`read_toml`) with the env overrides of `sections` over it."""
    for section, fields in env_overrides(environ, sections).items():
        current = data.get(section)
        data[section] = {**(current if isinstance(current, dict) else {}), **fields}
    return data


class HookSettings(NamedTuple):
    disabled: bool
    budget_chars: int
    max_episodes: int
    min_keyword_hits: int
    daemon_timeout: float
    salience: SalienceWeights


def hook_settings(environ: Mapping[str, str] | None = None) -> HookSettings:
    """The knobs a hook reads, from the same layers as config.py; an unreadable file counts as empty."""
    try:
        data = read_toml(paths.config_path())
    except (OSError, InvalidInput):
        data = {}
    doc = layered(data, os.environ if environ is None else environ, HOOK_SECTIONS)
    general = doc.get("general")
    flag = general.get("disabled") if isinstance(general, dict) else None
    return HookSettings(
        disabled=flag is True or (isinstance(flag, str) and flag.strip().lower() in TRUE),
        budget_chars=int(BUDGET_CHARS.read(doc)),
        max_episodes=int(MAX_EPISODES.read(doc)),
        min_keyword_hits=int(MIN_KEYWORD_HITS.read(doc)),
        daemon_timeout=DAEMON_TIMEOUT.read(doc),
        salience=SalienceWeights(**{name: knob.read(doc) for name, knob in SALIENCE.items()}),
    )
