"""Multi-hop Bellman propagation over the similarity graph, moving every neighbour *toward* its source.

Sources are episodes with at least `source_min_evidence` of direct (explicit + implicit) evidence; their values
stay fixed. From each source a breadth-first walk reaches episodes up to `max_propagation_depth` hops away over
KNN edges with cosine >= `propagation_threshold` (never through another source); a path's similarity is the
product of its edges. Hop by hop, an episode j reached from source i at hop d with path similarity s gets

    pseudo-evidence  alpha * gamma^d * s * |u_i - u_j|   on the helpful side if u_i > u_j, else unhelpful,

with u_j its value after the previous hops. A helpful source lifts its neighbours, an unhelpful one lowers them,
equal values change nothing, and one source cannot carry a neighbour past itself (its pseudo-evidence moves u_j
by at most alpha/2 of their gap). The walk stops once the largest change of a hop is below epsilon (converged), when no
episode is left to reach (converged), or at the depth limit (reported as not converged).

Idempotence: each run first drops every `propagation` row of its scope, computes from the remaining evidence,
and writes the new rows, so propagated evidence is a function of the direct evidence and the graph, never an
accumulation over runs. `--temporal` first recomputes temporal credit the same way; link shares are always
recomputed (they catch up with explicit feedback given since the last run).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tempera.core.config import BellmanConfig
from tempera.core.learning.chaining import share_all
from tempera.core.learning.credit import credit_all
from tempera.core.learning.evidence import DIRECT_SOURCES, Evidence, replace_evidence, totals
from tempera.core.learning.graph import Node, SimilarityGraph, vectors_missing
from tempera.core.utility import posterior_mean

if TYPE_CHECKING:
    from tempera.core.memory import Memory


@dataclass
class HopStats:
    hop: int
    updates: int
    max_change: float


@dataclass
class PropagationReport:
    sources: int = 0
    hops: list[HopStats] = field(default_factory=list)
    updated_episodes: int = 0
    evidence_rows: int = 0
    converged: bool = True
    stopped_by: str = "nothing to propagate"
    temporal_rows: int | None = None
    link_shares: int = 0
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _reach(graph: SimilarityGraph, source: Node, sources: set[str], depth: int) -> list[dict[Node, float]]:
    """Per hop 1..depth, the episodes first reached from `source` and their best path similarity."""
    layers: list[dict[Node, float]] = []
    frontier, seen = {source: 1.0}, {source.id}
    for _ in range(depth):
        nxt: dict[Node, float] = {}
        for node, path_sim in frontier.items():
            for other, sim in graph.neighbours(node):
                if other.id not in seen and other.id not in sources:
                    nxt[other] = max(nxt.get(other, 0.0), path_sim * sim)
        if not nxt:
            break
        layers.append(nxt)
        seen.update(n.id for n in nxt)
        frontier = nxt
    return layers


def _walk_hops(
    cfg: BellmanConfig,
    by_hop: dict[int, list[tuple[str, str, float]]],
    value: dict[str, float],
    base: dict[str, tuple[float, float]],
    report: PropagationReport,
) -> list[Evidence]:
    """Apply the hops in order (Jacobi within a hop: every gap is measured before the hop), filling `report`."""
    added: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    rows: list[Evidence] = []
    for hop in sorted(by_hop):
        before = dict(value)
        updates = 0
        for target, sid, sim in by_hop[hop]:
            gap = value[sid] - before[target]
            size = cfg.alpha * cfg.gamma**hop * sim * abs(gap)
            if size <= 0:
                continue
            updates += 1
            added[target][0 if gap > 0 else 1] += size
            rows.append(
                Evidence(
                    target,
                    "helpful" if gap > 0 else "unhelpful",
                    size,
                    {
                        "origin": sid,
                        "hop": hop,
                        "similarity": round(sim, 4),
                        "source_value": round(value[sid], 4),
                        "value_before": round(before[target], 4),
                    },
                )
            )
        for target in {t for t, _, _ in by_hop[hop]}:
            h, u = base.get(target, (0.0, 0.0))
            value[target] = posterior_mean(h + added[target][0], u + added[target][1])
        report.hops.append(HopStats(hop, updates, max(abs(value[t] - before[t]) for t, _, _ in by_hop[hop])))
        if report.hops[-1].max_change < cfg.epsilon:
            report.stopped_by = "largest change below epsilon"
            break
    else:
        if by_hop and max(by_hop) == cfg.max_propagation_depth:
            report.converged, report.stopped_by = False, "maximum depth"
        elif by_hop:
            report.stopped_by = "no further neighbours"
    report.updated_episodes = len(added)
    report.evidence_rows = len(rows)
    return rows


def propagate(mem: "Memory", *, project_id: str | None = None, temporal: bool = False) -> PropagationReport:
    """One full propagation pass (of one project, or of all, each within its own project's graph)."""
    cfg = mem.config.bellman
    report = PropagationReport()
    if temporal:
        report.temporal_rows = credit_all(mem, project_id)
    report.link_shares = share_all(mem, project_id)
    missing = vectors_missing(mem.store)
    if missing:
        report.skipped, report.converged, report.stopped_by = missing, False, "no vectors"
        return report
    graph = SimilarityGraph(mem.store, k=cfg.neighbours, threshold=cfg.propagation_threshold, project_id=project_id)
    base = totals(mem.db, exclude=("propagation",), project_id=project_id)
    direct = totals(mem.db, sources=DIRECT_SOURCES, project_id=project_id)
    sources = {eid for eid, (h, u) in direct.items() if h + u >= cfg.source_min_evidence and eid in graph.by_id}
    report.sources = len(sources)
    by_hop: dict[int, list[tuple[str, str, float]]] = defaultdict(list)
    for sid in sorted(sources):
        for hop, layer in enumerate(_reach(graph, graph.by_id[sid], sources, cfg.max_propagation_depth), 1):
            by_hop[hop] += [(node.id, sid, sim) for node, sim in layer.items()]
    value = {eid: posterior_mean(*base.get(eid, (0.0, 0.0))) for eid in graph.by_id}
    rows = _walk_hops(cfg, by_hop, value, base, report)
    replace_evidence(mem.db, "propagation", rows, project_id=project_id)
    return report
