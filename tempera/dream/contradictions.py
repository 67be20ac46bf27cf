"""Contradictions the dream cycle knows about, for `tempera learn contradict --list` and the phase report.

Two sources. Episode pairs judged by the contradict phase (rows of `contradiction_checks`): a pair counts while both
episodes are live and the verdict's confidence reaches `dream.contradict_min_confidence`; the share of judged pairs
that contradict is reported with a Wilson 95% interval, because a rate from a few dozen pairs is mostly
uncertainty. And the fact graph, read live: stance entities (:subject + :polarity, see tempera.facts.entity_types)
that are valid now and hold the same subject with opposite polarity in the same project (:project). A stance of one
project says nothing about another's; a global stance (no :project) holds in every project, so it conflicts with
any project's opposite stance.
"""

from __future__ import annotations

from typing import Any

from tempera.core.db import Database, apply_migrations
from tempera.core.selfimprove.calibration import wilson
from tempera.dream.schema import MIGRATIONS

POSITIVE = frozenset({"for", "pro", "yes", "use", "prefer", "allow", "require", "support", "keep", "adopt", "true"})
NEGATIVE = frozenset(
    {"against", "con", "no", "avoid", "reject", "forbid", "disallow", "deny", "drop", "remove", "never", "false"}
)
_LIVE = (
    "a_id IN (SELECT id FROM episodes) AND b_id IN (SELECT id FROM episodes) "
    "AND a_id NOT IN (SELECT episode_id FROM episode_retirements) "
    "AND b_id NOT IN (SELECT episode_id FROM episode_retirements)"
)


def opposite(a: str, b: str) -> bool:
    pa, pb = a.lstrip(":").lower(), b.lstrip(":").lower()
    return (pa in POSITIVE and pb in NEGATIVE) or (pa in NEGATIVE and pb in POSITIVE)


def episode_conflicts(db: Database, min_confidence: float) -> list[dict[str, Any]]:
    apply_migrations(db, MIGRATIONS)
    rows = db.query(
        "SELECT c.a_id, c.b_id, c.similarity, c.confidence, c.claim, c.judged_by, c.model, c.created_at, "
        "a.summary, b.summary, a.outcome, b.outcome, COALESCE(p.name, a.project_id) "
        "FROM contradiction_checks c JOIN episodes a ON a.id = c.a_id JOIN episodes b ON b.id = c.b_id "
        f"LEFT JOIN projects p ON p.id = a.project_id WHERE c.contradicts = 1 AND c.confidence >= ? "
        f"AND {_LIVE} ORDER BY c.confidence DESC, c.similarity DESC",
        (min_confidence,),
    )
    return [
        {
            "a_id": r[0],
            "b_id": r[1],
            "similarity": r[2],
            "confidence": r[3],
            "claim": r[4],
            "judged_by": r[5],
            "model": r[6],
            "judged_at": r[7],
            "a_summary": r[8].splitlines()[0],
            "b_summary": r[9].splitlines()[0],
            "a_outcome": r[10],
            "b_outcome": r[11],
            "project": r[12],
        }
        for r in rows
    ]


def contradiction_rate(db: Database, min_confidence: float) -> dict[str, Any]:
    """Share of judged live pairs that contradict, with its Wilson 95% interval."""
    apply_migrations(db, MIGRATIONS)
    n, k = db.one(
        f"SELECT COUNT(*), COALESCE(SUM(contradicts = 1 AND confidence >= ?), 0) FROM contradiction_checks "
        f"WHERE {_LIVE}",
        (min_confidence,),
    )
    low, high = wilson(int(k), int(n))
    return {
        "pairs": int(n),
        "contradictions": int(k),
        "rate": (k / n) if n else None,
        "ci95": [round(low, 4), round(high, 4)],
    }


def fact_conflicts(db: Database) -> list[dict[str, Any]]:
    """Currently valid stance entities of one project holding the same subject (case-insensitive) with opposite
    polarity, and entities holding two opposite polarities at once; `project` / `project_id` say which project
    (None when both are global stances)."""
    from tempera.facts import FactStore

    store = FactStore(db)
    stances = store.query("[:find ?e ?s ?p :where [?e :subject ?s] [?e :polarity ?p]]").rows
    described = {str(e): d for e, d in store.query("[:find ?e ?d :where [?e :description ?d]]").rows}
    project_of = {str(e): str(p) for e, p in store.query("[:find ?e ?p :where [?e :project ?p]]").rows}
    names = dict(db.query("SELECT id, name FROM projects"))
    by_subject: dict[str, list[tuple[str, str]]] = {}
    for entity, subject, polarity in stances:
        by_subject.setdefault(" ".join(str(subject).lower().split()), []).append((str(entity), str(polarity)))
    out = []
    for subject, held in sorted(by_subject.items()):
        for i, (e1, p1) in enumerate(held):
            for e2, p2 in held[i + 1 :]:
                j1, j2 = project_of.get(e1), project_of.get(e2)
                if opposite(p1, p2) and (j1 is None or j2 is None or j1 == j2):
                    project = j1 or j2
                    out.append(
                        {
                            "subject": subject,
                            "project_id": project,
                            "project": names.get(project, project) if project else None,
                            "a": e1,
                            "a_polarity": p1,
                            "a_description": described.get(e1, ""),
                            "b": e2,
                            "b_polarity": p2,
                            "b_description": described.get(e2, ""),
                        }
                    )
    return out
