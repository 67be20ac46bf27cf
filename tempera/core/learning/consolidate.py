"""Consolidation without loss: near-duplicate episodes of one project become one.

The survivor is the stronger of the two (success over partial over failure over unknown, then verification,
then evidence, then age). It gains the other's text (appended, never replacing its own), the union of files,
commands, errors, tags, sources and alternatives, the better outcome and verification, and its direct evidence
rows (explicit, implicit: moved, so both histories stay and the utility is recomputed over both). Derived
evidence involving the absorbed episode is dropped for the next propagation pass to recompute. The absorbed
episode is not deleted: it gets a `consolidated` link to the survivor and is retired (out of FTS and vectors).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tempera.core.db import Database
from tempera.core.learning.evidence import DERIVED_SOURCES, DIRECT_SOURCES
from tempera.core.learning.graph import SimilarityGraph, vectors_missing
from tempera.core.learning.retire import retire
from tempera.core.models import Episode
from tempera.core.utility import recompute

if TYPE_CHECKING:
    from tempera.core.memory import Memory

OUTCOME_RANK = {"success": 3, "partial": 2, "failure": 1, "unknown": 0}
DIRECT, DERIVED = ",".join("?" * len(DIRECT_SOURCES)), ",".join("?" * len(DERIVED_SOURCES))


@dataclass
class Merge:
    keep_id: str
    absorbed_id: str
    similarity: float
    keep_summary: str
    absorbed_summary: str


@dataclass
class ConsolidationReport:
    threshold: float
    dry_run: bool
    merges: list[Merge] = field(default_factory=list)
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _strength(ep: Episode) -> tuple[int, int, float, float]:
    return (
        OUTCOME_RANK.get(ep.outcome.status, 0),
        ep.outcome.verification.rank,
        ep.utility.helpful + ep.utility.unhelpful,
        -ep.created_at.timestamp(),
    )


def _union(a: list[Any], b: list[Any]) -> list[Any]:
    return list(dict.fromkeys([*a, *b]))


def merged_episode(keep: Episode, gone: Episode, *, max_summary_chars: int) -> Episode:
    """`keep` enriched with everything `gone` knows; nothing of `keep` is replaced by something weaker."""
    m = keep.model_copy(deep=True)
    addition = f"\n\nAlso: {gone.summary}"
    if gone.summary not in m.summary and len(m.summary) + len(addition) <= max_summary_chars:
        m.summary += addition
    m.intent.domains = _union(m.intent.domains, gone.intent.domains)
    m.intent.claim = m.intent.claim or gone.intent.claim
    m.intent.extracted = m.intent.extracted or gone.intent.extracted
    for name in ("files_read", "files_modified", "tools", "commands"):
        setattr(m.context, name, _union(getattr(m.context, name), getattr(gone.context, name)))
    seen = {e.fingerprint or e.message for e in m.context.errors}
    m.context.errors += [e for e in gone.context.errors if (e.fingerprint or e.message) not in seen]
    o, g = m.outcome, gone.outcome
    if OUTCOME_RANK.get(g.status, 0) > OUTCOME_RANK.get(o.status, 0):
        o.status = g.status
    o.tests_before = g.tests_before + o.tests_before
    o.tests_after = g.tests_after + o.tests_after
    o.commit = o.commit or g.commit
    o.verification = max(o.verification, g.verification, key=lambda s: s.rank)
    o.evidence = _union(o.evidence, g.evidence)
    m.tags = _union(m.tags, gone.tags)
    m.alternatives_considered = _union(m.alternatives_considered, gone.alternatives_considered)
    m.source.record_uuids = _union(m.source.record_uuids, gone.source.record_uuids)
    m.source.transcript_path = m.source.transcript_path or gone.source.transcript_path
    return m


def _drop_derived(db: Database, gone_id: str) -> set[str]:
    """Derived evidence on or from the absorbed episode is dropped (the next propagation pass recomputes it for
    the survivor); returns the episodes whose utility must be recomputed."""
    where = f"source IN ({DERIVED}) AND (episode_id = ? OR json_extract(evidence, '$.origin') = ?)"
    params = (*DERIVED_SOURCES, gone_id, gone_id)
    touched = {r[0] for r in db.query(f"SELECT DISTINCT episode_id FROM feedback_events WHERE {where}", params)}
    db.execute(f"DELETE FROM feedback_events WHERE {where}", params)
    return touched


def _absorb(mem: "Memory", keep: Episode, gone: Episode, similarity: float) -> None:
    db = mem.db
    merged = merged_episode(keep, gone, max_summary_chars=mem.config.capture.max_summary_chars)
    merged.outcome.evidence.append(
        f"consolidated {gone.id} (similarity {similarity:.3f}, "
        f"source {gone.source.transcript_path or gone.source.origin})"
    )
    with db.transaction():
        mem.store.update(merged)
        db.execute(
            f"UPDATE feedback_events SET episode_id = ? WHERE episode_id = ? AND source IN ({DIRECT})",
            (keep.id, gone.id, *DIRECT_SOURCES),
        )
        stale = _drop_derived(db, gone.id)
        latest = max((t for t in (keep.utility.last_useful_at, gone.utility.last_useful_at) if t), default=None)
        db.execute(
            "UPDATE episodes SET retrieval_count = retrieval_count + ?, last_useful_at = ? WHERE id = ?",
            (gone.utility.retrieval_count, latest.isoformat() if latest else None, keep.id),
        )
        for src, dst in (("src_id", "dst_id"), ("dst_id", "src_id")):
            db.execute(
                f"INSERT OR IGNORE INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
                f"SELECT CASE WHEN {src} = :gone THEN :keep ELSE {src} END, "
                f"CASE WHEN {dst} = :gone THEN :keep ELSE {dst} END, relationship, weight, created_at "
                f"FROM episode_links WHERE {src} = :gone AND {dst} != :keep",
                {"gone": gone.id, "keep": keep.id},
            )
        db.execute("DELETE FROM episode_links WHERE src_id = ? OR dst_id = ?", (gone.id, gone.id))
        db.execute(
            "INSERT INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
            "VALUES (?, ?, 'consolidated', 1.0, ?)",
            (gone.id, keep.id, merged.updated_at.isoformat()),
        )
        for episode_id in stale | {keep.id, gone.id}:
            recompute(db, episode_id)
        retire(mem.store, gone.id, "consolidated", into_id=keep.id, detail={"similarity": round(similarity, 4)})


def consolidate(
    mem: "Memory", *, project_id: str | None = None, dry_run: bool = False, threshold: float | None = None
) -> ConsolidationReport:
    """Merge every pair of live episodes of one project with cosine >= threshold, most similar first (a
    survivor may absorb several; pairs with an already absorbed episode wait for the next run)."""
    threshold = mem.config.storage.consolidation_threshold if threshold is None else threshold
    report = ConsolidationReport(threshold=threshold, dry_run=dry_run)
    missing = vectors_missing(mem.store)
    if missing:
        report.skipped = missing
        return report
    graph = SimilarityGraph(mem.store, k=5, threshold=threshold, project_id=project_id)
    pairs: dict[tuple[str, str], float] = {}
    for node in graph.nodes.values():
        for other, sim in graph.neighbours(node):
            key = (node.id, other.id) if node.id < other.id else (other.id, node.id)
            pairs[key] = max(pairs.get(key, 0.0), sim)
    absorbed: set[str] = set()
    for (a_id, b_id), sim in sorted(pairs.items(), key=lambda kv: -kv[1]):
        if a_id in absorbed or b_id in absorbed:
            continue
        a, b = mem.store.get(a_id), mem.store.get(b_id)
        keep, gone = (a, b) if _strength(a) >= _strength(b) else (b, a)
        report.merges.append(Merge(keep.id, gone.id, round(sim, 4), keep.summary[:160], gone.summary[:160]))
        absorbed.add(gone.id)
        if not dry_run:
            _absorb(mem, keep, gone, sim)
    return report
