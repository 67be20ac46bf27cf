"""Why an episode has its utility: the posterior, every evidence row, totals per source, links, retirement,
the injection record, and the salience (the factor ranking multiplies relevance by) right now; and the outcome
links, the prompts of later turns that changed its files (query evidence, not utility)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.retrieve import salience_parts
from tempera.core.utility import feedback_history

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def explain(mem: "Memory", episode_id: str, *, now: datetime | None = None) -> dict[str, Any]:
    ep = mem.store.get(episode_id)
    db, u = mem.db, ep.utility
    rows = feedback_history(db, ep.id)
    by_source: dict[str, dict[str, float]] = {}
    for r in rows:
        agg = by_source.setdefault(r["source"], {"helpful": 0.0, "unhelpful": 0.0, "rows": 0})
        agg[r["signal"]] += r["weight"]
        agg["rows"] += 1
    salience, fresh, recency = salience_parts(ep, mem.config.retrieval, now or datetime.now(timezone.utc))
    links = [
        {"src_id": s, "dst_id": d, "relationship": rel, "weight": w}
        for s, d, rel, w in db.query(
            "SELECT src_id, dst_id, relationship, weight FROM episode_links "
            "WHERE src_id = ? OR dst_id = ? ORDER BY created_at",
            (ep.id, ep.id),
        )
    ]
    outcomes = [
        {"session_id": sid, "src_id": src, "weight": w, "prompt_terms": terms}
        for sid, src, w, terms in db.query(
            "SELECT session_id, src_id, weight, terms FROM outcome_links WHERE episode_id = ? ORDER BY created_at",
            (ep.id,),
        )
    ]
    retired = db.one(
        "SELECT reason, into_id, detail, retired_at FROM episode_retirements WHERE episode_id = ?", (ep.id,)
    )
    injected = db.one(
        "SELECT COUNT(*), COUNT(evaluated_at), COALESCE(SUM(used >= 1), 0) FROM injections WHERE episode_id = ?",
        (ep.id,),
    )
    return {
        "id": ep.id,
        "summary": ep.summary,
        "project": ep.project_name,
        "outcome": ep.outcome.status,
        "utility": round(u.value, 4),
        "helpful": round(u.helpful, 4),
        "unhelpful": round(u.unhelpful, 4),
        "posterior": f"(1 + {u.helpful:.3f}) / (2 + {u.helpful:.3f} + {u.unhelpful:.3f}) = {u.value:.4f}",
        "verification": ep.outcome.verification.value,
        "verification_weight": ep.outcome.verification.weight,
        "outcome_evidence": ep.outcome.evidence,
        "commit": ep.outcome.commit,
        "scope": str(ep.scope),
        "freshness": round(fresh, 4),
        "recency": round(recency, 4),
        "salience": round(salience, 4),
        "retrievals": u.retrieval_count,
        "last_useful_at": u.last_useful_at.isoformat() if u.last_useful_at else None,
        "injections": {"total": injected[0], "judged": injected[1], "used": injected[2]},
        "by_source": by_source,
        "evidence": rows,
        "links": links,
        "outcome_links": outcomes,  # later turns that changed its files: evidence for prompts like theirs
        "retired": (
            {"reason": retired[0], "into_id": retired[1], "detail": json.loads(retired[2]), "at": retired[3]}
            if retired
            else None
        ),
    }
