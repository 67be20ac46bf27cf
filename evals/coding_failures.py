"""Why hybrid misses rank 1 on the coding eval: per query whose first relevant episode is not hybrid's first, where
that episode sits in the BM25 and the vector list (with scores), what outranked it and why, and which retrieval
step, turned off alone, would give it rank 1.

    python evals/coding_failures.py [--set KEY=VALUE ...] [--quiet]

The shipped fixture (`evals/fixtures/queries.jsonl`) over the shipped corpus (`evals/corpus/episodes.jsonl`) in a
scratch data dir, retrieval in this process through `core/retrieve.py` with the product's config (as
`tempera eval run` ranks). For each miss: the relevant episode hybrid ranks best, its BM25 (over the best hit's),
keyword rank, cosine, vector rank, the query terms it holds; then every hit above it with the same numbers,
relevance and salience. The step attribution re-runs hybrid with one step off at a time (MMR, the time step,
salience, the names list, the BM25 hits' coverage weights) and counts the misses each change would put at rank 1,
and the hits it would lose.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_failures import neutral_salience, settings  # noqa: E402

from tempera.core import textsearch  # noqa: E402
from tempera.core.config import RetrievalConfig  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.retrieve import Hit, retrieve  # noqa: E402
from tempera.evaluation import harness  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LIMIT = 10  # as harness.evaluate asks


def ranked(mem: Memory, q: harness.Query, cfg: RetrievalConfig, mode: str = "hybrid", limit: int = LIMIT) -> list[Hit]:
    return retrieve(
        mem.store,
        q.query,
        project_id=mem.store.projects.resolve(q.project).id,
        cfg=cfg,
        limit=limit,
        mode=mode,
        cross_project="cross-project" in q.tags,
    )


def first_relevant(hits: list[Hit], q: harness.Query) -> int | None:
    return next((i for i, h in enumerate(hits, 1) if q.grades.get(h.episode.id, 0) > 0), None)


def variants(cfg: RetrievalConfig) -> dict[str, RetrievalConfig]:
    """One step off at a time."""
    return {
        "no MMR": cfg.model_copy(update={"mmr_lambda": 1.0}),
        "no time step": cfg.model_copy(update={"time_in_questions": False}),
        "neutral salience": neutral_salience(cfg),
        "no names list": cfg.model_copy(update={"hybrid_names_weight": 0.0}),
        "BM25 hits unweighted": cfg.model_copy(update={"hybrid_keyword_coverage_power": 0.0}),
    }


def _terms(h: Hit, terms: list[str]) -> str:
    body = {textsearch.stem(t) for t in textsearch.term_set(h.episode.search_text())}
    return ",".join(t for t in terms if textsearch.stem(t) in body)


def _line(mark: str, rank: int | str, h: Hit, top_bm25: float, terms: list[str]) -> str:
    cos = "  -  " if h.similarity is None else f"{h.similarity:.3f}"
    return (
        f"  {mark}{rank!s:>2} kw {h.keyword_rank or '-'!s:>2} bm25 {(h.bm25 or 0) / top_bm25:.2f}  vec "
        f"{h.vector_rank or '-'!s:>2} cos {cos}  nm {h.names_rank or '-'!s:>2}  rel {h.relevance:.3f} sal "
        f"{h.salience:.3f} score {h.score:.4f}  [{_terms(h, terms)}]  {h.episode.summary[:60]!r}"
    )


def cause(rel: Hit, above: list[Hit]) -> str:
    """A one-line class of the miss, from the numbers the lists gave (the first hit above is the rival)."""
    rival = above[0]
    if rel.relevance >= rival.relevance:
        return "salience or a later step (relevance not lower)"
    kw_first = rival.keyword_rank is not None and (rel.keyword_rank is None or rival.keyword_rank < rel.keyword_rank)
    vec_first = rival.vector_rank is not None and (rel.vector_rank is None or rival.vector_rank < rel.vector_rank)
    if kw_first and vec_first:
        return "both lists rank the rival higher"
    if kw_first:
        return "BM25 ranks the rival higher"
    if vec_first:
        return "vector list ranks the rival higher"
    return "names list or ties"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE retrieval setting for every run")
    ap.add_argument("--quiet", action="store_true", help="only the counts, not each miss")
    a = ap.parse_args()
    os.environ["TEMPERA_DATA_DIR"] = tempfile.mkdtemp(prefix="coding-failures-")
    queries = harness.load_fixture(REPO / "evals" / "fixtures" / "queries.jsonl")
    cfg = settings(a.set)
    steps = variants(cfg)
    with Memory() as mem:
        harness.load_corpus(mem, REPO / "evals" / "corpus" / "episodes.jsonl")
        assert mem.store.vectors.embedder is not None
        causes: Counter[str] = Counter()
        won: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        rr: list[float] = []
        for q in queries:
            hits = ranked(mem, q, cfg)
            first = first_relevant(hits, q)
            rr.append(1 / first if first else 0.0)
            for name, vcfg in steps.items():
                vfirst = first_relevant(ranked(mem, q, vcfg), q)
                if first != 1 and vfirst == 1:
                    won[name] += 1
                if first == 1 and vfirst != 1:
                    lost[name] += 1
            if first == 1:
                continue
            terms = textsearch.query_terms(q.query)
            deep = ranked(mem, q, cfg, limit=cfg.candidates)
            top_bm25 = max((h.bm25 or 0.0) for h in deep) or 1.0
            at = first_relevant(deep, q)
            if at is None:
                causes["relevant in neither list"] += 1
                if not a.quiet:
                    print(f"\n{q.id} [{','.join(q.tags)}] {q.query!r}: no relevant episode in either list")
                continue
            rel = deep[at - 1]
            if rel.similarity is None:  # below the vector floor: its cosine all the same
                qv = mem.store.vectors.embedder.embed_query(q.query)
                rel.similarity = float(mem.store.vectors.embedder.embed([rel.episode.embed_text()])[0] @ qv)
            why = cause(rel, deep[: at - 1])
            causes[why] += 1
            if a.quiet:
                continue
            print(f"\n{q.id} [{','.join(q.tags)}] {q.query!r}: first relevant at {first} ({why})")
            print(f"  terms: {','.join(terms)}")
            for i, h in enumerate(deep[: at - 1], 1):
                print(_line(" ", i, h, top_bm25, terms))
            print(_line("*", at, rel, top_bm25, terms))
    print(f"\n{len(queries)} queries, hybrid MRR {sum(rr) / len(rr):.3f}; {sum(1 for r in rr if r < 1)} not at rank 1")
    print("causes (the first hit above the relevant one against it):")
    for k, v in causes.most_common():
        print(f"  {v:>3}  {k}")
    print("one step off: misses put at rank 1 / rank-1 hits lost")
    for name in steps:
        print(f"  {name:<20} +{won[name]} / -{lost[name]}")


if __name__ == "__main__":
    main()
