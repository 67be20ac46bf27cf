"""How evidence shapes a score: `score = relevance x salience`, where salience is a bounded factor around 1.

salience = (1 + utility_effect x 2(utility - 0.5)) x (1 + verification_effect x verified)
           x (freshness_floor + (1 - freshness_floor) x freshness) x recency

where verified runs from 0 (untested) to 1 (the best state, stable_no_revert).

A multiplier, not an additive term, so evidence moves ranks among comparably relevant episodes at any age: an
untested episode (utility 0.5, untested) is neutral, and decay can cost at most `1 - freshness_floor`, so stale
knowledge loses to fresh knowledge of equal relevance without vanishing.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from tempera.core import defaults

_UNTESTED = defaults.VERIFICATION_WEIGHTS["untested"]
_BEST = max(defaults.VERIFICATION_WEIGHTS.values())


class SalienceWeights(NamedTuple):
    """The knobs of `salience_parts` (RetrievalConfig holds them with their descriptions)."""

    utility_effect: float = defaults.UTILITY_EFFECT
    verification_effect: float = defaults.VERIFICATION_EFFECT
    freshness_floor: float = defaults.FRESHNESS_FLOOR
    recency_weight: float = 0.0
    recency_halflife_days: float = 30.0


def freshness(decay_rate: float, anchor: datetime, now: datetime, expires: datetime | None = None) -> float:
    """(1 - decay_rate)^days since the anchor (last confirmed useful, else created); 0 past an expiry
    (only workarounds have one)."""
    if expires is not None and expires <= now:
        return 0.0
    return (1.0 - decay_rate) ** _days(anchor, now)


def salience_parts(
    w: SalienceWeights,
    now: datetime,
    *,
    utility: float,
    verification_weight: float,
    decay_rate: float,
    created: datetime,
    last_useful: datetime | None,
    expires: datetime | None,
) -> tuple[float, float, float]:
    """(salience, freshness, recency): the factor a relevance is multiplied by, within
    [(1 - utility_effect) x freshness_floor x (1 - recency_weight), (1 + utility_effect) x (1 + verification_effect)],
    and the two age parts it used."""
    fresh = freshness(decay_rate, last_useful or created, now, expires)
    recent = (1 - w.recency_weight) + w.recency_weight * 0.5 ** (_days(created, now) / w.recency_halflife_days)
    verified = max(0.0, verification_weight - _UNTESTED) / ((_BEST - _UNTESTED) or 1.0)
    evidence = (1 + w.utility_effect * 2 * (utility - 0.5)) * (1 + w.verification_effect * verified)
    return evidence * (w.freshness_floor + (1 - w.freshness_floor) * fresh) * recent, fresh, recent


def _days(start: datetime, end: datetime) -> float:
    return max(0.0, (end - start).total_seconds() / 86400.0)
