"""Audit the current graph against the entity types; with fix, retract what is invalid (history is kept).

A fix retracts the offending facts of a wrong-type or unknown attribute, and the whole current state of an
entity that lacks a required attribute, in one transaction whose reason lists the violations.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tempera.facts.entity_types import TYPES, Violation, validate
from tempera.facts.store import FactStore
from tempera.facts.values import Keyword, Value, decode


@dataclass
class AuditReport:
    audited: int
    violations: list[Violation] = field(default_factory=list)
    retracted: int = 0
    tx: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "audited": self.audited,
            "retracted": self.retracted,
            "tx": self.tx,
            "violations": [
                {"entity": str(v.entity), "kind": v.kind, "attribute": v.attribute, "detail": v.detail}
                for v in self.violations
            ],
        }


def current_states(store: FactStore) -> dict[Keyword, dict[str, list[Value]]]:
    """The current (not retracted, valid now) attributes of every entity of a known type."""
    now = int(time.time() * 1000)
    prefixes = " OR ".join("e GLOB ?" for _ in TYPES)
    rows = store.db.query(
        f"SELECT e, a, vt, v FROM fact_datoms WHERE retracted_tx IS NULL AND valid_from <= ? "
        f"AND (valid_to IS NULL OR valid_to > ?) AND ({prefixes}) ORDER BY e, a, id",
        [now, now, *(f":{name}/*" for name in TYPES)],
    )
    states: dict[Keyword, dict[str, list[Value]]] = {}
    for e, a, vt, v in rows:
        states.setdefault(Keyword(e), {}).setdefault(a, []).append(decode(vt, v))
    return states


def audit(store: FactStore, *, fix: bool = False) -> AuditReport:
    states = current_states(store)
    report = AuditReport(audited=len(states))
    doomed: list[tuple[Keyword, Keyword, Value]] = []
    for entity, state in states.items():
        found = validate(entity, state)
        report.violations += found
        if any(v.kind == "missing-required" for v in found):
            doomed += [(entity, Keyword(a), value) for a, values in state.items() for value in values]
        else:
            doomed += [(entity, Keyword(v.attribute), value) for v in found for value in v.values]
    if fix and doomed:
        reason = "audit: " + "; ".join(f"{v.entity} {v.detail}" for v in report.violations)
        result = store.retract(doomed, reason=reason[:2000])
        report.retracted, report.tx = result.retracted, result.tx
    return report
