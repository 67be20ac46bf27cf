"""Refitting hybrid fusion's knobs (RetrievalConfig: the BM25 list's full weight and coverage power, `rrf_k`) on the
user's own feedback: `tempera learn refit-fusion`. `evals/fit_fusion.py` fitted the shipped values on LoCoMo and the
coding fixture; this fits them on labelled prompts, split by session in time order as `tempera learn refit-gate` is
(inject/heldout.py). Two label sources, each a function returning rows of one list (SOURCES):

- verdicts: the prompts whose injected episodes capture judged used. A biased sample: only episodes the fusion in use
  (and the gate after it) put in front of the agent have verdicts, so every relevant episode is one the current
  fusion already ranked high, and one a grid point would have ranked first but that was never shown counts as not
  relevant. The refit is pulled toward the fusion in use.
- links: the prompts outcome links were written for (core/learning/outcomes.py): the earlier episodes that changed a
  file the prompt's turns went on to change, shown or not. The fusion in use had no hand in them, and a fresh
  `tempera import` has them with no injection at all.

The sources stay apart, one row each, rather than a union per prompt: they ask at different times with different
texts (the injection log's prompt, cut to 500 characters, when the hook ran; the episode's prompt when its turn
began), so a join would have to match texts, and apart the report can say what each source gave. A prompt with
both is counted once per source; both rows are of one session, so the split keeps them on one side.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tempera.core.config import RetrievalConfig
from tempera.core.db import Database
from tempera.core.errors import InvalidInput
from tempera.core.retrieve import retrieve
from tempera.inject.heldout import HELD_OUT_SHARE, split_by_session
from tempera.transcripts.draft import asked_prompt

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.episodes import EpisodeStore

GRID: dict[str, tuple[float, ...]] = {
    "hybrid_keyword_max_weight": (2.0, 3.0, 4.0, 5.0),
    "hybrid_keyword_coverage_power": (1.5, 2.0, 2.5, 3.0),
    "rrf_k": (10, 20, 40),
}
LIMIT = 10  # MRR@10
HIT_AT = 5  # hit@5
MIN_FIT_QUERIES = 20  # fewer, and the best of the grid's points on them is mostly chance
MIN_HELD_OUT_QUERIES = 10  # fewer, and one query moving one rank decides the comparison


@dataclass(frozen=True)
class Labelled:
    """One prompt and the episodes relevant to it (a label source's row)."""

    session_id: str
    created_at: str  # when it was asked: retrieval's `now`; only episodes created before it compete
    project_id: str
    prompt: str
    relevant: frozenset[str]
    source: str  # the SOURCES key it came from


def judged_prompts(db: Database, project_id: str | None = None) -> list[Labelled]:
    """The prompts whose injections capture judged, oldest first, each with the injected episodes judged used as
    its relevant ones (none when every one was ignored). The prompt is the log's: redacted, its first 500
    characters (inject/injectlog.py)."""
    rows = db.query(
        "SELECT session_id, MIN(created_at), project_id, prompt, GROUP_CONCAT(CASE WHEN used > 0 THEN episode_id END) "
        "FROM injections WHERE event = 'UserPromptSubmit' AND prompt IS NOT NULL AND evaluated_at IS NOT NULL "
        "AND (? IS NULL OR project_id = ?) GROUP BY session_id, project_id, prompt ORDER BY 2",
        (project_id, project_id),
    )
    return [
        Labelled(s, at, p, prompt, frozenset((used or "").split(",")) - {""}, "verdicts")
        for s, at, p, prompt, used in rows
    ]


def linked_prompts(db: Database, project_id: str | None = None) -> list[Labelled]:
    """The prompts with outcome links, oldest first, each with its linked (earlier, other sessions') episodes as
    its relevant ones, whatever a link's weight. The prompt is the one the link's later episode began with, as the
    hook retrieved with it (`asked_prompt`: redacted, whole, without the prompts folded in after it), asked when
    that episode was created."""
    rows = db.query(
        "SELECT l.session_id, e.created_at, e.project_id, json_extract(e.data, '$.intent.raw_prompt'), "
        "GROUP_CONCAT(l.episode_id) FROM outcome_links l JOIN episodes e ON e.id = l.src_id "
        "WHERE (? IS NULL OR e.project_id = ?) GROUP BY l.src_id ORDER BY 2",
        (project_id, project_id),
    )
    return [
        Labelled(s, at, p, asked_prompt(raw or ""), frozenset(linked.split(",")), "links")
        for s, at, p, raw, linked in rows
    ]


SOURCES: dict[str, Callable[[Database, str | None], list[Labelled]]] = {
    "verdicts": judged_prompts,
    "links": linked_prompts,
}


def shown_before(db: Database) -> dict[str, dict[str, str]]:
    """session -> episode -> when it was first injected there: the hook shows an episode once in a session (again
    only after a compaction empties the context, which the refit leaves aside), so at a later prompt it is out of
    the running whatever its rank."""
    out: dict[str, dict[str, str]] = {}
    for session_id, episode_id, first in db.query(
        "SELECT session_id, episode_id, MIN(created_at) FROM injections GROUP BY session_id, episode_id"
    ):
        out.setdefault(session_id, {})[episode_id] = first
    return out


def source_counts(by: dict[str, int], judged: int) -> str:
    """What each source gave, in words: the refusal's and the report's."""
    words = {
        "verdicts": f"from verdicts (an injected episode judged used, of {judged} judged prompts)",
        "links": "from outcome links (earlier episodes that changed the files its turns changed)",
    }
    return ", ".join(f"{n} {words[name]}" for name, n in by.items())


@dataclass(frozen=True)
class Figures:
    """How well one fusion ranks the relevant episodes of some prompts."""

    queries: int
    mrr: float  # of the best relevant episode, @LIMIT
    hit_at_5: float


def figures(ranks: list[int | None]) -> Figures:
    """From each prompt's rank of its best relevant episode (None: not in the top LIMIT)."""
    n = max(1, len(ranks))
    return Figures(
        queries=len(ranks),
        mrr=round(sum(1 / r for r in ranks if r) / n, 4),
        hit_at_5=round(sum(1 for r in ranks if r and r <= HIT_AT) / n, 4),
    )


@dataclass(frozen=True)
class _Query:
    label: Labelled
    vector: "np.ndarray"
    asked: datetime
    out: frozenset[str]  # shown earlier in the session


def _rank(store: "EpisodeStore", q: _Query, cfg: RetrievalConfig) -> int | None:
    """The rank of the best relevant episode among those created before the prompt and not shown earlier in its
    session, in hybrid's order; None outside the top LIMIT. Later episodes still take places in the BM25 and
    vector lists fused (the indexes cannot be asked as of a time); they are dropped from the fused order."""
    hits = retrieve(
        store,
        q.label.prompt,
        project_id=q.label.project_id,
        cfg=cfg,
        limit=cfg.candidates,
        mode="hybrid",
        cross_project=True,
        now=q.asked,
        query_vector=q.vector,
    )
    ranked = [h.episode.id for h in hits if h.episode.created_at < q.asked and h.episode.id not in q.out]
    return next((i for i, e in enumerate(ranked[:LIMIT], 1) if e in q.label.relevant), None)


@dataclass(frozen=True)
class FusionRefit:
    """What `tempera learn refit-fusion` reports: the counts, the chosen point, current and refit on both parts."""

    judged_prompts: int  # with verdicts, a used episode or not
    labelled: int
    labelled_by: dict[str, int]  # source -> labelled prompts it gave
    fit_sessions: int
    held_out_sessions: int
    grid: dict[str, list[float]]
    current: dict[str, float]
    refit: dict[str, float]
    fit_current: Figures
    fit_refit: Figures
    held_out_current: Figures
    held_out_refit: Figures

    @property
    def better(self) -> bool:
        """A strictly higher held-out MRR (on at least MIN_HELD_OUT_QUERIES prompts, which `refit` demands); a
        tie keeps the fusion in use."""
        return self.held_out_refit.mrr > self.held_out_current.mrr

    @property
    def changed(self) -> dict[str, float]:
        """The keys whose refit value differs from the current one: what --write sets."""
        return {k: v for k, v in self.refit.items() if v != self.current[k]}

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "better": self.better, "changed": self.changed}


def refit(
    store: "EpisodeStore",
    current: RetrievalConfig,
    *,
    project_id: str | None = None,
    sources: tuple[str, ...] = tuple(SOURCES),
    grid: dict[str, tuple[float, ...]] = GRID,
    progress: Callable[[str], None] = lambda _: None,
) -> FusionRefit:
    """Choose the grid point with the best MRR on the earlier sessions' prompts labelled by `sources` and compare it
    with `current` on the latest ones; InvalidInput, saying the numbers, when there are too few labels or no model."""
    rows = [q for name in sources for q in SOURCES[name](store.db, project_id)]
    judged = sum(q.source == "verdicts" for q in rows)  # judged prompts, with a used episode or not
    labelled = [q for q in rows if q.relevant]
    by = {name: sum(q.source == name for q in labelled) for name in sources}
    fit, held = split_by_session(labelled)
    if len(fit) < MIN_FIT_QUERIES or len(held) < MIN_HELD_OUT_QUERIES:
        raise InvalidInput(
            f"too few labelled prompts to refit fusion: it needs {MIN_FIT_QUERIES} in the earlier sessions it fits "
            f"on and {MIN_HELD_OUT_QUERIES} in the later sessions ({HELD_OUT_SHARE:.0%} of the prompts) it checks "
            f"on; there are {len(fit)} and {len(held)} ({source_counts(by, judged)})"
        )
    status = store.vectors.status()
    if store.vectors.embedder is None or status.state != "ok":
        raise InvalidInput(
            f"refit-fusion ranks in hybrid mode, which needs the embedding model of the database's vectors: "
            f"{status.detail or status.state} "
            "(tempera models show; tempera memory index --reindex after a model change)"
        )
    from tempera.core.vecindex import VectorCache

    store.vectors.cache = store.vectors.cache or VectorCache()  # thousands of searches: the daemon's in-memory KNN
    shown = shown_before(store.db)
    embedder = store.vectors.embedder
    prompts = sorted({q.prompt for q in labelled})  # a prompt both sources label is embedded once
    progress(f"embedding {len(prompts)} prompts")
    vectors = dict(zip(prompts, (embedder.embed_query(p) for p in prompts)))

    def query(q: Labelled) -> _Query:
        out = frozenset(e for e, at in shown.get(q.session_id, {}).items() if at < q.created_at)
        return _Query(q, vectors[q.prompt], datetime.fromisoformat(q.created_at), out)

    fit_q, held_q = [query(q) for q in fit], [query(q) for q in held]

    def ranks(cfg: RetrievalConfig, part: list[_Query]) -> list[int | None]:
        return [_rank(store, q, cfg) for q in part]

    # query evidence reads the verdicts and the links, the very labels: left on, a prompt is ranked by its own label
    base = current.model_copy(update={"query_evidence_effect": 0.0})
    keys = list(grid)
    now = {k: getattr(current, k) for k in keys}
    points = [dict(zip(keys, p)) for p in itertools.product(*grid.values())]
    scored = []
    for i, point in enumerate(points, 1):
        scored.append((figures(ranks(base.model_copy(update=point), fit_q)), point))
        progress(f"grid point {i}/{len(points)}: {point} fit MRR {scored[-1][0].mrr:.3f}")
    # the best fit MRR; among equals the point nearest the fusion in use, so a tie changes nothing it need not
    best_fit, best = min(scored, key=lambda s: (-s[0].mrr, sum(s[1][k] != now[k] for k in keys)))
    chosen = base.model_copy(update=best)
    progress("held-out sessions: current and refit")
    return FusionRefit(
        judged_prompts=judged,
        labelled=len(labelled),
        labelled_by=by,
        fit_sessions=len({q.session_id for q in fit}),
        held_out_sessions=len({q.session_id for q in held}),
        grid={k: list(v) for k, v in grid.items()},
        current=now,
        refit=best,
        fit_current=figures(ranks(base, fit_q)),
        fit_refit=best_fit,
        held_out_current=figures(ranks(base, held_q)),
        held_out_refit=figures(ranks(chosen, held_q)),
    )
