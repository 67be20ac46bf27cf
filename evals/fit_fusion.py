"""Fit hybrid fusion's knobs (`RetrievalConfig`; by default the BM25 hits' full weight and coverage power) on dev
data, and say how the fit carries over to data it did not see.

    python evals/fit_fusion.py --data ../shared/data/locomo/locomo-dev5.json --workdir DIR
                               [--grid KEY=V1,V2,... ...] [--set KEY=VALUE ...]

DIR is a `evals/locomo.py --workdir DIR` run (its data dir with embeddings is reused). The coding fixture
(`evals/fixtures/queries.jsonl` over `evals/corpus/episodes.jsonl`) is loaded into a scratch data dir. Every grid
point ranks every question once, in process, through `core/retrieve.py`. The objective of a grid point is LoCoMo
hybrid (recall_any@5 + recall_any@10) / 2 on the conversations fitted on plus the coding fixture's hybrid MRR on its
even lines (0-based). Reported: leave one LoCoMo conversation out (the point best on four conversations and the even
coding lines, scored on the fifth; the mean over the five held-out conversations), and the point best on all five
and the even lines (the shipped defaults), scored on the odd coding lines and on the whole. `tempera learn refit-fusion`
(tempera/inject/fusionfit.py) refits the same knobs on a user's own judged prompts.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_failures import first_hit, leave_one_out, load, parser, recall, setting, settings  # noqa: E402

from tempera.core.config import RetrievalConfig  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.retrieve import retrieve  # noqa: E402
from tempera.evaluation import harness  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GRID = {"hybrid_keyword_coverage_power": [1.5, 2.0, 2.5, 3.0], "hybrid_keyword_max_weight": [3.0, 4.0]}
Point = tuple[Any, ...]


def coding_rr(cfgs: dict[Point, RetrievalConfig]) -> tuple[dict[Point, list[float]], list[float]]:
    """Per grid point, each fixture query's hybrid reciprocal rank (fixture order); and keyword's."""
    os.environ["TEMPERA_DATA_DIR"] = tempfile.mkdtemp(prefix="fit-fusion-coding-")
    queries = harness.load_fixture(REPO / "evals" / "fixtures" / "queries.jsonl")
    with Memory() as mem:
        harness.load_corpus(mem, REPO / "evals" / "corpus" / "episodes.jsonl")
        out = {}
        for point, cfg in cfgs.items():
            mem.config.retrieval = cfg
            out[point] = [r["mrr"] for r in harness.evaluate(mem, queries, mode="hybrid", k=5)["per_query"]]
        kw = [r["mrr"] for r in harness.evaluate(mem, queries, mode="keyword", k=5)["per_query"]]
    return out, kw


def locomo_ranks(
    data: Path, workdir: Path, cfgs: dict[Point, RetrievalConfig]
) -> tuple[list[str], dict[Point, list[int | None]], list[int | None]]:
    """Per grid point, each question's first evidence rank in hybrid (the questions' conversations); and keyword's."""
    mem, queries, units = load(data, workdir)
    assert mem.store.vectors.embedder is not None
    vecs = [mem.store.vectors.embedder.embed_query(q["query"]) for q in queries]

    def ranks(cfg: RetrievalConfig, mode: str) -> list[int | None]:
        return [
            first_hit(
                retrieve(
                    mem.store,
                    q["query"],
                    project_id=q["project"],
                    cfg=cfg,
                    limit=10,
                    mode=mode,
                    now=q["now"],
                    query_vector=v,
                ),
                q,
                units,
            )
            for q, v in zip(queries, vecs)
        ]

    out = {}
    for n, (point, cfg) in enumerate(cfgs.items(), 1):
        out[point] = ranks(cfg, "hybrid")
        print(f"  locomo {n}/{len(cfgs)} {point}: any@5 {recall(out[point], 5):.3f} @10 {recall(out[point], 10):.3f}")
    kw = ranks(next(iter(cfgs.values())), "keyword")
    mem.close()
    return [q["sample"] for q in queries], out, kw


def _locomo_score(ranks: list[int | None]) -> float:
    return (recall(ranks, 5) + recall(ranks, 10)) / 2


def _mean(xs: list[float]) -> float:
    return sum(xs) / max(1, len(xs))


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--grid", action="append", default=[], help="KEY=V1,V2,... (replaces the default grid)")
    a = ap.parse_args()
    grid = GRID
    if a.grid:
        grid = {k: [setting(k, v) for v in vs.split(",")] for k, _, vs in (g.partition("=") for g in a.grid)}
    base = settings(a.set)
    keys = list(grid)
    cfgs = {p: base.model_copy(update=dict(zip(keys, p))) for p in itertools.product(*grid.values())}
    print(f"{len(cfgs)} grid points over {', '.join(keys)}")
    code, code_kw = coding_rr(cfgs)
    even = [i for i in range(len(code_kw)) if i % 2 == 0]
    odd = [i for i in range(len(code_kw)) if i % 2 == 1]

    def code_mrr(p: Point, idx: list[int]) -> float:
        return _mean([code[p][i] for i in idx])

    samples, loc, loc_kw = locomo_ranks(a.data, a.workdir, cfgs)
    print("\nleave one LoCoMo conversation out (objective: LoCoMo fit conversations + coding even lines)")
    leave_one_out(samples, loc, loc_kw, lambda p, fit: _locomo_score([loc[p][i] for i in fit]) + code_mrr(p, even))
    whole = list(range(len(code_kw)))
    ranked = sorted(cfgs, key=lambda p: -(_locomo_score(loc[p]) + code_mrr(p, even)))
    print(f"\nall five conversations + even coding lines, best first ({', '.join(keys)}):")
    for p in ranked[:10]:
        print(
            f"  {p}: LoCoMo any@5 {recall(loc[p], 5):.3f} @10 {recall(loc[p], 10):.3f}; coding MRR even "
            f"{code_mrr(p, even):.3f} odd {code_mrr(p, odd):.3f} whole {code_mrr(p, whole):.3f}"
        )
    print(
        f"  keyword: LoCoMo any@5 {recall(loc_kw, 5):.3f} @10 {recall(loc_kw, 10):.3f}; coding MRR {_mean(code_kw):.3f}"
    )
    print(f"shipped: {dict(zip(keys, ranked[0]))}")


if __name__ == "__main__":
    main()
