"""Where settings come from: config.toml, then TEMPERA_SECTION__KEY env vars (and TEMPERA_DISABLE), layered into one
document that `core/config.py` validates (its one reader, `load_config`); the parse is kept while the file is
unchanged, so that long-lived processes read it per call at the cost of a stat. Standard library only.
`hooks/relay.py` reads one value itself (the daemon timeout, a copy pinned by tests/hooks/test_entry_fuzz.py).
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tempera.core import paths
from tempera.core.errors import InvalidInput

ENV_PREFIX = "TEMPERA_"
KILL_SWITCH_ENV = "TEMPERA_DISABLE"  # the short spelling of TEMPERA_GENERAL__DISABLED
TRUE = frozenset({"1", "true", "yes", "on"})


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
