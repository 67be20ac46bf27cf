"""The few settings a hook needs, read from config.toml and env with the standard library only."""

from __future__ import annotations

import os
import tomllib
from typing import Any, NamedTuple

from tempera.core import defaults, paths
from tempera.core.ranking import SalienceWeights

TRUE = {"1", "true", "yes", "on"}


class HookSettings(NamedTuple):
    disabled: bool
    budget_chars: int
    max_episodes: int
    min_keyword_hits: int
    daemon_timeout: float
    salience: SalienceWeights = SalienceWeights()  # [retrieval]'s knobs: the keyword path ranks as the daemon does
    daemon_failed: bool = False  # the relay asked the daemon already and got no answer


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    v = doc.get(name)
    return v if isinstance(v, dict) else {}


def _num(raw: Any, default: float, lo: float, hi: float) -> float:
    try:
        v = float(raw)
    except (TypeError, ValueError):
        return default
    return min(hi, max(lo, v))


def load() -> HookSettings:
    try:
        with paths.config_path().open("rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        doc = {}
    general = _section(doc, "general")
    env = os.environ
    disabled = (env.get("TEMPERA_DISABLE", "").lower() in TRUE
                or env.get("TEMPERA_GENERAL__DISABLED", "").lower() in TRUE or general.get("disabled") is True)

    def pick(section: str, key: str, default: float, lo: float, hi: float) -> float:
        raw = env.get(f"TEMPERA_{section.upper()}__{key.upper()}", _section(doc, section).get(key, default))
        return _num(raw, default, lo, hi)

    base = SalienceWeights()

    def unit(name: str) -> float:
        return pick("retrieval", name, getattr(base, name), 0.0, 1.0)

    return HookSettings(
        disabled=disabled,
        budget_chars=int(pick("inject", "budget_chars", defaults.INJECT_BUDGET_CHARS, 200, 9000)),
        max_episodes=int(pick("inject", "max_episodes", defaults.INJECT_MAX_EPISODES, 0, 20)),
        min_keyword_hits=int(pick("inject", "min_keyword_hits", defaults.INJECT_MIN_KEYWORD_HITS, 1, 50)),
        daemon_timeout=pick("inject", "daemon_timeout_seconds", defaults.HOOK_DAEMON_TIMEOUT_SECONDS, 0.05, 30),
        salience=SalienceWeights(
            unit("utility_effect"), unit("verification_effect"), unit("freshness_floor"), unit("recency_weight"),
            pick("retrieval", "recency_halflife_days", base.recency_halflife_days, 0.01, 1e6)),
    )
