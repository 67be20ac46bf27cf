"""Exporting memory with the fact graph: core's episode export (`core/export.py`) plus every assertion and
retraction of the graph, which core cannot read itself. The CLI (`tempera memory export`) and the browser both call
this."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from tempera.core import export as exporting
from tempera.core.db import Database
from tempera.facts.edn import to_edn
from tempera.facts.store import FactStore
from tempera.facts.values import decode_entity

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def fact_records(db: Database) -> Iterator[dict[str, Any]]:
    """Every assertion and retraction of the fact graph, entity by entity, with valid and transaction time."""
    store = FactStore(db)
    for (entity,) in db.query("SELECT DISTINCT e FROM fact_datoms ORDER BY e"):
        history = store.history(decode_entity(entity))
        for row in history.rows:
            rec = dict(zip(history.columns, row))
            yield {
                "entity": entity,
                "op": rec["op"],
                "attribute": str.__str__(rec["attribute"]),
                "value": to_edn(rec["value"]),
                "valid_from": rec["valid-from"],
                "valid_to": rec["valid-to"],
                "tx": rec["tx"],
                "at": rec["at"],
                "reason": rec["reason"],
            }


def export(
    mem: "Memory", out: TextIO, fmt: str, *, project: str | None = None, facts: bool = True
) -> exporting.ExportCounts:
    """Episodes (of one project, or all) and, unless `facts` is off or a project is named, the fact graph."""
    project_id = mem.store.projects.resolve(project).id if project else None
    records = fact_records(mem.db) if facts and project_id is None else iter(())
    return exporting.export(out, fmt, exporting.episodes(mem.db, project_id), records)
