"""Hybrid retrieval: FTS5 BM25 and sqlite-vec KNN (and, when the prompt names files or code identifiers, the
episodes naming them and those that touched that code, core/symbols.py), fused by RRF, scaled by salience,
diversified by MMR.

score = relevance x salience, a bounded factor of learned utility, verification and freshness (core/ranking.py).
The utility is the same number feedback, propagation and credit update, so learning reaches the ranking.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core import ranking, standing, symbols, textsearch, timeq, utility
from tempera.core.config import RetrievalConfig
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput
from tempera.core.models import Episode
from tempera.core.vecindex import TRANSFERABLE

if TYPE_CHECKING:
    import numpy as np

MODES = ("keyword", "vector", "hybrid")


@dataclass
class Hit:
    episode: Episode
    score: float = 0.0
    relevance: float = 0.0
    salience: float = 0.0
    similarity: float | None = None  # cosine, when the vector index saw it
    standing: float | None = None  # the cosine against the store's background of unrelated pairs (core/standing.py)
    bm25: float | None = None  # positive: higher is better
    keyword_rank: int | None = None
    vector_rank: int | None = None
    names_rank: int | None = None  # among the episodes naming the prompt's files and identifiers
    code_rank: int | None = None  # among the episodes that touched the code the prompt names (core/symbols.py)
    freshness: float = 1.0
    recency: float = 1.0
    matched_terms: int = 0
    vector: Any = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        ep = self.episode
        return {
            "id": ep.id,
            "score": round(self.score, 4),
            "relevance": round(self.relevance, 4),
            "salience": round(self.salience, 4),
            "utility": round(ep.utility.value, 4),
            "verification": ep.outcome.verification.value,
            "freshness": round(self.freshness, 4),
            "recency": round(self.recency, 4),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "bm25": None if self.bm25 is None else round(self.bm25, 4),
            "summary": ep.summary,
            "task_type": ep.intent.task_type,
            "outcome": ep.outcome.status,
            "project": ep.project_name,
            "project_id": ep.project_id,
            "session_id": ep.session_id,
            "scope": str(ep.scope),
            "created_at": ep.created_at.isoformat(),
            "updated_at": ep.updated_at.isoformat(),
            "files_modified": ep.context.files_modified,
            "source": ep.source.model_dump(),
        }


def freshness(ep: Episode, now: datetime) -> float:
    """Scope-aware decay since the episode was last confirmed useful (or created); expired workarounds are gone."""
    scope = ep.scope
    return ranking.freshness(scope.decay_rate, ep.utility.last_useful_at or ep.created_at, now, scope.expires)


def salience_parts(ep: Episode, cfg: RetrievalConfig, now: datetime) -> tuple[float, float, float]:
    """(salience, freshness, recency) of one episode: the factor its relevance is multiplied by, and its age parts."""
    return ranking.salience_parts(
        cfg.salience_weights(),
        now,
        utility=ep.utility.value,
        verification_weight=ep.outcome.verification.weight,
        decay_rate=ep.scope.decay_rate,
        created=ep.created_at,
        last_useful=ep.utility.last_useful_at,
        expires=ep.scope.expires,
    )


def _keyword(store: EpisodeStore, terms: list[str], project_id: str, cross: bool, n: int) -> list[tuple[int, float]]:
    match = textsearch.fts_query(terms, project_id, transferable=cross)
    if match is None:
        return []
    rows = store.db.query(
        "SELECT rowid, -bm25(episodes_fts) FROM episodes_fts WHERE episodes_fts MATCH ? "
        "ORDER BY bm25(episodes_fts) LIMIT ?",
        (match, n),
    )
    return [(int(r[0]), float(r[1])) for r in rows]


def _vector(
    store: EpisodeStore, qvec: "np.ndarray", project_id: str, cross: bool, n: int
) -> tuple[list[tuple[int, float]], dict[int, "np.ndarray"], standing.Background]:
    """KNN hits (rowid, cosine) with the vectors the index handed back (vecindex.py `VectorIndex.nearest`), and
    the project's background. The transferable scan runs only when another project has transferable episodes at
    all."""
    partitions = [project_id]
    if cross and store.db.one(
        "SELECT 1 FROM episodes WHERE transferable = 1 AND project_id != ? LIMIT 1", (project_id,)
    ):
        partitions.append(TRANSFERABLE)
    found, vectors = store.vectors.nearest(qvec, partitions, n)
    return found, vectors, store.vectors.background(project_id)


def _selective(store: EpisodeStore, names: list[str], project_id: str, cross: bool, n: int) -> list[str]:
    """The names fewer than `n` (the candidate pool) episodes mention. A file that most work touches (a hub, a
    config file) does not pick out the episodes about the prompt: its list would be n of them in order of
    document length, outvoting the episodes that match the prompt's other words."""
    out = []
    for name in names:
        match = textsearch.fts_query([name], project_id, transferable=cross)
        if (
            store.db.one(
                "SELECT count(*) FROM (SELECT 1 FROM episodes_fts WHERE episodes_fts MATCH ? LIMIT ?)", (match, n)
            )[0]
            < n
        ):
            out.append(name)
    return out


def _vector_matches(
    found: list[tuple[int, float]], background: standing.Background, cfg: RetrievalConfig, mode: str
) -> list[tuple[int, float]]:
    """The KNN hits that count: standing (core/standing.py) >= `min_standing`, and in hybrid also those within
    `hybrid_vector_window` of the best hit's, down to half the floor. A paraphrase scores ~0.2-0.3 against long
    episode text in MiniLM space even when it is the nearest (the coding eval's paraphrases), a standing of 3-4: a
    fixed floor alone drops the whole list and leaves the ranking to a couple of generic shared words, while its
    nearest hits still say which is closest. Below half the floor is what unrelated prompts score (~0.1 in MiniLM, a
    standing of 2): a query about nothing stored finds nothing. On standings, so every model draws the same line."""
    floor = cfg.min_standing
    if mode == "hybrid" and found and cfg.hybrid_vector_window > 0:
        floor = max(floor / 2, min(floor, background.standing(found[0][1]) - cfg.hybrid_vector_window))
    return [(r, s) for r, s in found if background.standing(s) >= floor]


MAX_COSINE_FLOOR = 0.99  # a wide background's standing line may lie past 1: only identical texts repeat then


def _mmr(hits: list[Hit], lam: float, limit: int, floor: float, cosine_floor: float) -> list[Hit]:
    """Greedy MMR over the blended score. Redundancy counts only the part of the similarity (embeddings above
    `cosine_floor`, else term overlap above `floor`): texts on one topic score ~0.5 in MiniLM space without repeating
    each other, and penalising that pushes relevant hits down; near-duplicates are what MMR is for."""
    if lam >= 1.0 or len(hits) <= 1:
        return hits[:limit]
    redundancy = _redundancy(hits, floor, cosine_floor)
    scores = [lam * h.score for h in hits]
    penalty = [0.0] * len(hits)
    chosen: list[int] = []
    pool = list(range(len(hits)))
    while pool and len(chosen) < limit:
        best = max(pool, key=lambda i: scores[i] - (1 - lam) * penalty[i])
        chosen.append(best)
        pool.remove(best)
        penalty = [max(p, r) for p, r in zip(penalty, redundancy[best])]
    return [hits[i] for i in chosen]


def _redundancy(hits: list[Hit], floor: float, cosine_floor: float) -> list[list[float]]:
    """Pairwise similarity above its floor, rescaled to [0, 1]: cosine above `cosine_floor` where both hits have
    vectors (one matrix product), else the Jaccard overlap of their summaries' terms above `floor`."""
    import numpy as np

    n = len(hits)
    has = [h.vector is not None for h in hits]
    sims = np.zeros((n, n), dtype=np.float32)
    if any(has):
        idx = [i for i in range(n) if has[i]]
        m = np.stack([hits[i].vector for i in idx])
        sims[np.ix_(idx, idx)] = m @ m.T
    if not all(has):
        terms = [set(textsearch.query_terms(h.episode.summary, limit=80)) for h in hits]
        for i in range(n):
            for j in range(n):
                if not (has[i] and has[j]) and terms[i] and terms[j]:
                    sims[i, j] = len(terms[i] & terms[j]) / len(terms[i] | terms[j])
    both = np.outer(has, has)
    lines = np.where(both, cosine_floor, floor)
    return (np.maximum(0.0, sims - lines) / (1.0 - lines)).tolist()


def retrieve(
    store: EpisodeStore,
    query: str,
    *,
    project_id: str,
    cfg: RetrievalConfig,
    limit: int = 5,
    mode: str | None = None,
    cross_project: bool = False,
    now: datetime | None = None,
    query_vector: "np.ndarray | None" = None,
    embed_text: str | None = None,
) -> list[Hit]:
    """Ranked hits for the query within a project (plus transferable episodes of others when asked). The query's
    vector is `query_vector`, else that of `embed_text` (a long prompt's title, `inject/longprompt.py`), else the
    query's."""
    mode = mode or cfg.mode
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
    if not query or not query.strip():
        raise InvalidInput("the query is empty; say what to look for")
    if limit < 1:
        raise InvalidInput("limit must be at least 1")
    asked = now or datetime.now().astimezone()  # calendar words ("yesterday") are the user's local days
    now = now or datetime.now(timezone.utc)
    n = max(cfg.candidates, limit * 3)
    status = store.vectors.status()
    use_vec = mode in ("vector", "hybrid") and status.state == "ok"
    if mode == "vector" and not use_vec:
        raise InvalidInput(f"vector mode is unavailable: {status.detail or status.state}")
    use_kw = mode in ("keyword", "hybrid")

    terms = textsearch.query_terms(query)
    kw = _keyword(store, terms, project_id, cross_project, n) if use_kw else []
    vec: list[tuple[int, float]] = []
    vectors: dict[int, np.ndarray] = {}
    if use_vec:
        assert store.vectors.embedder is not None
        qvec = query_vector if query_vector is not None else store.vectors.embedder.embed_query(embed_text or query)
        found, vectors, background = _vector(store, qvec, project_id, cross_project, n)
        vec = _vector_matches(found, background, cfg, mode)
    names = (
        _selective(store, textsearch.name_terms(query), project_id, cross_project, n)
        if mode == "hybrid" and cfg.hybrid_names_weight > 0
        else []
    )
    named = _keyword(store, names, project_id, cross_project, n) if names else []
    code = symbols.code_hits(store.db, query, project_id, n) if mode == "hybrid" and cfg.hybrid_code_weight > 0 else []
    episodes = store.get_many_by_rowid({r for r, _ in (*kw, *vec, *named, *code)})
    hits: dict[int, Hit] = {}
    for rank, (rowid, s) in enumerate(kw, 1):
        if rowid in episodes:
            h = hits.setdefault(rowid, Hit(episodes[rowid]))
            h.bm25, h.keyword_rank = s, rank
    for rank, (rowid, s) in enumerate(vec, 1):
        if rowid in episodes:
            h = hits.setdefault(rowid, Hit(episodes[rowid]))
            h.similarity, h.vector_rank = s, rank
    for rank, (rowid, _) in enumerate(named, 1):
        if rowid in episodes:
            hits.setdefault(rowid, Hit(episodes[rowid])).names_rank = rank
    for rank, (rowid, _) in enumerate(code, 1):
        if rowid in episodes:
            hits.setdefault(rowid, Hit(episodes[rowid])).code_rank = rank

    top_bm25 = max((s for _, s in kw), default=1.0) or 1.0
    lists: list[tuple[float, dict[int, float]]] = []
    if mode == "hybrid":
        coverage = _coverage(store, textsearch.query_words(query), kw, project_id, cross_project)
        if use_vec and cfg.hybrid_vote_margin > 0 and coverage:
            rowid_of = {episodes[r].id: r for r in coverage if r in episodes}
            leaning = {rowid_of[e]: v for e, v in utility.explicit_leaning(store.db, list(rowid_of)).items()}
            if leaning:
                standings = {r: background.standing(c) for r, c in vec}
                coverage = _coverage_by_votes(coverage, standings, leaning, cfg.hybrid_vote_margin)
        lists = _fusion_lists(cfg, kw, vec if use_vec else None, named, code, coverage)
    for rowid, h in hits.items():
        if mode == "hybrid":
            h.relevance = rrf(rowid, lists, cfg.rrf_k)
        elif mode == "vector":
            h.relevance = max(0.0, h.similarity or 0.0)
        else:
            h.relevance = (h.bm25 or 0.0) / top_bm25
        h.salience, h.freshness, h.recency = salience_parts(h.episode, cfg, now)
        h.score = h.relevance * h.salience
    if cfg.query_evidence_effect > 0:
        ids = [h.episode.id for h in hits.values()]
        for h, e in zip(hits.values(), _query_evidence(store, terms, ids, cfg.outcome_link_weight)):
            h.score *= 1 + cfg.query_evidence_effect * e
    ranked = sorted(hits.values(), key=lambda h: -h.score)
    if cfg.time_in_questions:
        ranked = _in_time(store, query, ranked, project_id, cfg, asked, n)
    ranked = ranked[: max(limit * 4, 20)]
    if use_vec:  # without a cache, hits only BM25 found keep no vector; MMR compares their terms
        near = dict(found)
        for rowid, h in hits.items():
            h.vector = store.vectors.vector(rowid, vectors)
            if h.similarity is None:  # found by words, or below the floor: its cosine says how near it still is
                h.similarity = near[rowid] if rowid in near else None if h.vector is None else float(h.vector @ qvec)
            if h.similarity is not None:
                h.standing = background.standing(h.similarity)
    # a cosine counts as repeating another above the same standing on every model (bge-small's unrelated pairs
    # score ~0.5, where MiniLM's near-duplicates start at 0.7)
    cosine_floor = (
        min(MAX_COSINE_FLOOR, background.cosine(cfg.mmr_redundancy_standing)) if use_vec else MAX_COSINE_FLOOR
    )
    chosen = _mmr(ranked, cfg.mmr_lambda, limit, cfg.mmr_redundancy_floor, cosine_floor)
    for h in chosen:
        h.matched_terms = _matched(h.episode, terms)
    return chosen


def _query_evidence(store: EpisodeStore, terms: list[str], episode_ids: list[str], link_weight: float) -> list[float]:
    """Per episode, in [-1, 1]: its judged injections (used +1, ignored -1) and its outcome links (+ `link_weight` x
    the link's weight: a later session whose turns changed a file it changed, `core/learning/outcomes.py`), each
    weighted by the Jaccard overlap of its prompt's terms with this query's, shrunk by one pseudo-injection. Global
    utility is a prior over the episode; this says whether it served prompts like this one, so evidence from
    unrelated prompts counts little, and a link reaches episodes that were never shown."""
    if not episode_ids or not terms:
        return [0.0] * len(episode_ids)
    q = set(terms)
    total: dict[str, float] = {}
    mass: dict[str, float] = {}

    def add(episode_id: str, prompt_terms: frozenset[str], value: float, weight: float) -> None:
        sim = textsearch.jaccard(q, prompt_terms)
        total[episode_id] = total.get(episode_id, 0.0) + sim * weight * value
        mass[episode_id] = mass.get(episode_id, 0.0) + sim * weight

    marks = ",".join("?" * len(episode_ids))
    for episode_id, prompt, used in store.db.query(
        "SELECT episode_id, prompt, used FROM injections WHERE used IS NOT NULL AND prompt IS NOT NULL "
        f"AND episode_id IN ({marks})",
        episode_ids,
    ):
        add(episode_id, frozenset(textsearch.query_terms(prompt)), 2 * used - 1, 1.0)  # cached terms
    if link_weight > 0:
        for episode_id, link_terms, weight in store.db.query(
            f"SELECT episode_id, terms, weight FROM outcome_links WHERE episode_id IN ({marks})", episode_ids
        ):
            add(episode_id, frozenset(link_terms.split()), 1.0, link_weight * weight)
    return [total.get(e, 0.0) / (mass.get(e, 0.0) + 1.0) for e in episode_ids]


def _in_time(
    store: EpisodeStore, query: str, ranked: list[Hit], project_id: str, cfg: RetrievalConfig, asked: datetime, n: int
) -> list[Hit]:
    """The time step (core/timeq.py): a prompt about time re-ranks by episode dates; others pass unchanged."""

    def anchor(event: str) -> datetime | None:
        found = _keyword(store, textsearch.query_terms(event), project_id, False, 1)
        eps = store.get_many_by_rowid([found[0][0]]) if found else {}
        return next(iter(eps.values())).created_at if eps else None

    def window_episodes(tq: timeq.TimeQuery) -> list[Hit]:
        have = {h.episode.id for h in ranked}
        out = []
        for ep in store.iter_episodes(project_id, limit=n, since=tq.start, before=tq.end):
            if ep.id not in have:
                h = Hit(ep)
                h.salience, h.freshness, h.recency = salience_parts(ep, cfg, asked)
                h.score = h.salience
                out.append(h)
        return out

    return timeq.apply(ranked, timeq.parse(query, asked, anchor), lambda h: h.episode.created_at, window_episodes)


def _coverage(
    store: EpisodeStore, words: list[list[str]], kw: list[tuple[int, float]], project_id: str, cross: bool
) -> dict[int, float]:
    """rowid -> the share of the query's words (`textsearch.query_words`, each with all its terms) each BM25 hit
    holds, counted by FTS5 itself (one MATCH per word within the search's scope, in one statement), so it matches as
    the Porter index does and costs no Python pass over the hits' texts. The matches are filtered here, not by
    `rowid IN (...)`, which FTS5 answers by a lookup per rowid (10x slower for 50 hits)."""
    if not words or not kw:
        return {}
    ids = {r for r, _ in kw}
    sql = " UNION ALL ".join("SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?" for _ in words)
    matches = [textsearch.fts_query(w, project_id, transferable=cross, every=True) for w in words]
    held = Counter(int(r) for (r,) in store.db.query(sql, matches) if r in ids)
    return {r: held[r] / len(words) for r in ids}


def _coverage_by_votes(
    coverage: Mapping[int, float], standings: Mapping[int, float], leaning: Mapping[int, int], margin: float
) -> dict[int, float]:
    """The BM25 coverage of each hit with explicit votes (`leaning`: +1 helpful, -1 unhelpful), taken up to the best
    of the vector matches whose standing (core/standing.py) is above its own by at most `margin`
    (`hybrid_vote_margin`), or down to the least of those below it by at most that. c^power makes a text holding 2
    of 3 query words weigh 0.36 of the BM25 list: relevance 0.43 against 0.91 for texts 0.03 of cosine apart
    ("stabilised" for "fix"), a gap that bounded salience never crosses, so votes could not reorder them (#38). So
    near, the missing word is wording and the votes decide. Only voted hits the embedding itself calls relevant
    move, and only within the margin: an irrelevant text is no vector match (below `min_standing`), and hits without
    votes (every retrieval without them) keep the fitted coverage. Implicit verdicts do not get this reach: over the
    learning replay a third of their moves across such gaps were wrong (docs/experiments/learning-ranks.md)."""
    out = dict(coverage)
    for r, lean in leaning.items():
        s = standings.get(r)
        if s is not None:
            near = [c for o, c in coverage.items() if o in standings and 0 <= (standings[o] - s) * lean <= margin]
            out[r] = max(near) if lean > 0 else min(near)
    return out


def _tied(found: list[tuple[int, float]]) -> dict[int, int]:
    """rowid -> rank in one list, best first, equal scores sharing a rank (two texts holding the same terms score
    the same BM25): the list's order among them is arbitrary, so evidence and freshness decide, whatever the lists'
    weights."""
    out: dict[int, int] = {}
    rank, above = 0, 0.0
    for i, (rowid, s) in enumerate(found, 1):
        if i == 1 or s < above:
            rank = i
        out[rowid], above = rank, s
    return out


def _fusion_lists(
    cfg: RetrievalConfig,
    kw: list[tuple[int, float]],
    vec: list[tuple[int, float]] | None,
    named: list[tuple[int, float]],
    code: list[tuple[int, float]],
    coverage: Mapping[int, float],
) -> list[tuple[float, dict[int, float]]]:
    """Hybrid's lists, each (weight, rowid -> its `rank_terms` term):

    - BM25 (`hybrid_keyword_max_weight`): a hit's term x c^`hybrid_keyword_coverage_power`, c the share of the
      query's words it holds (`_coverage`). BM25 ranks first a text holding one rare word of a paraphrase
      ("authenticated" of eight), and by rank alone that counts as much as a text holding every word of a question.
    - the vector list (1, when vectors are in use: None when not).
    - when the prompt names files or identifiers, the episodes naming them (`hybrid_names_weight`).
    - when it names code the symbol index knows, or the work tree has changed files, the episodes that touched
      them (`hybrid_code_weight`, `core/symbols.py`)."""
    k = cfg.rrf_k
    bm25 = rank_terms(_tied(kw), k, {r: c**cfg.hybrid_keyword_coverage_power for r, c in coverage.items()})
    out = [(cfg.hybrid_keyword_max_weight, bm25)]
    if vec is not None:
        out.append((1.0, rank_terms(_tied(vec), k)))
    if named:
        out.append((cfg.hybrid_names_weight, rank_terms(_tied(named), k)))
    if code:
        out.append((cfg.hybrid_code_weight, rank_terms(_tied(code), k)))
    return out


def rank_terms(ranks: Mapping[Any, int], k: int, evidence: Mapping[Any, float] | None = None) -> dict[Any, float]:
    """key -> its RRF term in one list, 1 / (k + rank), times its `evidence` share (1 when not given)."""
    ev = evidence or {}
    return {key: ev.get(key, 1.0) / (k + rank) for key, rank in ranks.items()}


def rrf(key: Hashable, lists: Sequence[tuple[float, Mapping[Any, float]]], k: int) -> float:
    """Weighted RRF (k = `rrf_k`) of `key` over its `rank_terms` in each (weight, terms) list, normalised to [0, 1]
    (first in every list at full evidence): the hybrid lists and a prompt's hits with its session context's
    (`inject/workcontext.py`)."""
    total = sum(w * terms.get(key, 0.0) for w, terms in lists)
    return total / (sum(w for w, _ in lists) / (k + 1))


def _matched(ep: Episode, terms: list[str]) -> int:
    return textsearch.matched(terms, ep.search_text()) if terms else 0
