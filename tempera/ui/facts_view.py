"""The fact graph for one entity: its facts as of a transaction (or time) and valid at a moment, and its history.

Shown only when the facts package opens; its errors (a bad date, an unknown entity form) are shown as text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempera.core.errors import TemperaError

if TYPE_CHECKING:
    from tempera.core.memory import Memory

QUERY = "[:find ?a ?v :in ?e {options} :where [?e ?a ?v]]"


def _edn_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _options(as_of: str, valid_at: str) -> str:
    """`:as-of` takes a transaction number or an ISO time; `:valid-at` an ISO time, or `any` for every valid time
    (empty: valid now)."""
    opts = []
    if as_of:
        opts.append(f":as-of {int(as_of)}" if as_of.isdigit() else f":as-of {_edn_string(as_of)}")
    if valid_at.lower() == "any":
        opts.append(":any-valid-time")
    elif valid_at:
        opts.append(f":valid-at {_edn_string(valid_at)}")
    return " ".join(opts)


def fact_page(mem: "Memory", entity: str, as_of: str, valid_at: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "entity": entity,
        "as_of": as_of,
        "valid_at": valid_at,
        "entities": [],
        "facts": None,
        "history": None,
        "error": None,
        "available": True,
        "tx": 0,
    }
    try:
        from tempera.facts import FactStore
        from tempera.facts.edn import to_edn
        from tempera.facts.values import decode_entity

        store = FactStore(mem.db)
    except Exception as exc:  # the fact graph is another part's work in progress: the page says why it is absent
        out.update(available=False, error=f"the fact graph is unavailable: {exc}")
        return out
    out["tx"] = store.current_tx()
    out["entities"] = [
        r[0] for r in mem.db.query("SELECT e, COUNT(*) FROM fact_datoms GROUP BY e ORDER BY COUNT(*) DESC, e LIMIT 300")
    ]
    if not entity:
        return out
    try:
        key = decode_entity(entity.strip())
        query = QUERY.format(options=_options(as_of.strip(), valid_at.strip()))
        result = store.query(query, [key])
        out["query"] = query
        out["facts"] = sorted((str.__str__(a), to_edn(v)) for a, v in result.rows)
        history = store.history(key)
        out["history"] = [
            {**dict(zip(history.columns, row)), "attribute": str.__str__(row[3]), "value": to_edn(row[4])}
            for row in history.rows
        ]
    except (TemperaError, ValueError) as exc:
        out["error"] = str(exc)
    return out
