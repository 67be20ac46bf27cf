"""Why hybrid loses to keyword at @5 on LoCoMo: per question where keyword has an evidence turn in its top 5 and
hybrid does not, what took hybrid's five slots, and which retrieval step pushed keyword's hit out.

    python evals/locomo_failures.py --data ../shared/data/locomo/locomo-dev5.json --workdir DIR [--set KEY=VALUE]
                                    [--cv KEY=V1,V2,...] [--show 20]

DIR is a `evals/locomo.py --workdir DIR` run (its data dir with embeddings is reused, nothing is imported again).
Retrieval runs in this process through `core/retrieve.py` with the product's config, each question asked at its
conversation's last session as in `evals/locomo.py`. The step attribution re-runs hybrid with one step off at a
time (MMR: `mmr_lambda` 1; the time step: `time_in_questions` off; salience: every factor 1) and counts the lost
questions that each change wins back. For each slot that a lost question's hybrid top 5 gave to a non-evidence
unit it prints which lists held that unit (keyword / vector / names rank), its BM25 over the best, cosine and
salience. `--set` changes retrieval settings for every run; `--cv KEY=V1,V2` picks the value by leave-one-
conversation-out (best hybrid any@5 + any@10 on four conversations, scored on the fifth) and prints the mean
over the five held-out conversations.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import CATEGORIES, asked_at, evidence_ids, write_transcripts  # noqa: E402

from tempera.core.textsearch import query_terms  # noqa: E402
from tempera.core.config import RetrievalConfig, load_config  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.project import project_for_path  # noqa: E402
from tempera.core.retrieve import Hit, retrieve  # noqa: E402

K = (5, 10)


def load(data: Path, workdir: Path) -> tuple[Memory, list[dict[str, Any]], dict[str, dict[str, set[str]]]]:
    """The data dir with embeddings, the questions (categories 1-4) and episode id -> dia_ids per conversation."""
    import os
    import tempfile

    os.environ["TEMPERA_DATA_DIR"] = str(workdir / "data-with")
    mem = Memory()
    scratch = Path(tempfile.mkdtemp(prefix="locomo-failures-"))
    queries, units = [], {}
    for sample in json.loads(data.read_text(encoding="utf-8")):
        cwd, by_uuid, texts = write_transcripts(sample, scratch)
        pid = project_for_path(cwd).id
        sid = sample["sample_id"]
        units[sid] = {
            ep.id: {by_uuid[u] for u in ep.source.record_uuids if u in by_uuid}
            for ep in mem.store.iter_episodes(pid, limit=100000)
        }
        now = asked_at(sample["conversation"])
        for n, item in enumerate(sample["qa"]):
            ev = evidence_ids(item, set(texts))
            if item.get("category") in CATEGORIES and ev:
                queries.append(
                    {"id": f"{sid}#{n}", "sample": sid, "project": pid, "query": item["question"], "evidence": ev}
                    | {"category": CATEGORIES[item["category"]], "now": now}
                )
    return mem, queries, units


def run(mem: Memory, q: dict[str, Any], cfg: RetrievalConfig, mode: str, limit: int = 10) -> list[Hit]:
    return retrieve(mem.store, q["query"], project_id=q["project"], cfg=cfg, limit=limit, mode=mode, now=q["now"])


def first_hit(hits: list[Hit], q: dict[str, Any], units: dict[str, dict[str, set[str]]]) -> int | None:
    """The 1-based rank of the first unit holding an evidence turn."""
    ev = set(q["evidence"])
    dia = units[q["sample"]]
    return next((i for i, h in enumerate(hits, 1) if dia.get(h.episode.id, set()) & ev), None)


def recall(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / max(1, len(ranks))


def neutral_salience(cfg: RetrievalConfig) -> RetrievalConfig:
    return cfg.model_copy(update={"utility_effect": 0.0, "verification_effect": 0.0, "freshness_floor": 1.0})


def analyse(mem: Memory, queries: list[dict[str, Any]], units: Any, cfg: RetrievalConfig, show: int) -> None:
    variants = {
        "hybrid": cfg,
        "no MMR": cfg.model_copy(update={"mmr_lambda": 1.0}),
        "no time step": cfg.model_copy(update={"time_in_questions": False}),
        "neutral salience": neutral_salience(cfg),
        "none of the three": neutral_salience(cfg).model_copy(update={"mmr_lambda": 1.0, "time_in_questions": False}),
    }
    ranks: dict[str, list[int | None]] = defaultdict(list)
    lost: list[tuple[dict[str, Any], list[Hit], list[Hit]]] = []
    for q in queries:
        kw = run(mem, q, cfg, "keyword")
        ranks["keyword"].append(first_hit(kw, q, units))
        hyb = run(mem, q, cfg, "hybrid")
        ranks["vector"].append(first_hit(run(mem, q, cfg, "vector"), q, units))
        for name, vcfg in variants.items():
            ranks[name].append(first_hit(hyb if name == "hybrid" else run(mem, q, vcfg, "hybrid"), q, units))
        if (ranks["keyword"][-1] or 99) <= 5 < (ranks["hybrid"][-1] or 99):
            lost.append((q, kw, hyb))
    print(f"{len(queries)} questions; any@5 / any@10")
    for name, r in ranks.items():
        print(f"  {name:<18} {recall(r, 5):.3f} / {recall(r, 10):.3f}")
    idx = {q["id"]: i for i, q in enumerate(queries)}
    print(f"\n{len(lost)} questions keyword has in its top 5 and hybrid does not; won back at @5 by:")
    for name in variants:
        if name != "hybrid":
            back = sum(1 for q, _, _ in lost if (ranks[name][idx[q["id"]]] or 99) <= 5)
            print(f"  {name:<18} {back}")
    where: Counter[str] = Counter()
    for q, kw, hyb in lost:
        for h in hyb[:5]:
            where[_lists(h)] += 1
    print("\nthe lost questions' hybrid top-5 slots, by the lists that held them:")
    for k, v in where.most_common():
        print(f"  {k:<24} {v}")
    for q, kw, hyb in lost[:show]:
        ev = set(q["evidence"])
        print(
            f"\n[{q['category']}] {q['query']}  (keyword rank {ranks['keyword'][idx[q['id']]]}, hybrid rank "
            f"{ranks['hybrid'][idx[q['id']]]})"
        )
        good = {h.episode.id for h in kw if units[q["sample"]].get(h.episode.id, set()) & ev}
        top_bm25 = max((h.bm25 or 0.0) for h in hyb) or 1.0
        n_terms = len(query_terms(q["query"]))
        for i, h in enumerate(hyb, 1):
            mark = "*" if h.episode.id in good or units[q["sample"]].get(h.episode.id, set()) & ev else " "
            print(
                f"  {mark}{i:>2} {_lists(h):<22} bm25 {(h.bm25 or 0) / top_bm25:.2f} cos "
                f"{h.similarity if h.similarity is not None else float('nan'):.2f} rel {h.relevance:.3f} sal "
                f"{h.salience:.3f} score {h.score:.4f} terms {h.matched_terms}/{n_terms}  {h.episode.summary[:70]!r}"
            )


def _lists(h: Hit) -> str:
    parts = [f"{tag}{r}" for tag, r in (("kw", h.keyword_rank), ("vec", h.vector_rank), ("nm", h.names_rank)) if r]
    return "+".join(parts) or "time step only"


def cross_validate(mem: Memory, queries: list[dict[str, Any]], units: Any, cfg: RetrievalConfig, spec: str) -> None:
    """Leave one conversation out: the value best on four conversations (any@5 + any@10), scored on the fifth."""
    key, _, values = spec.partition("=")
    grid = [setting(key, v) for v in values.split(",")]
    ranks = {
        v: [first_hit(run(mem, q, cfg.model_copy(update={key: v}), "hybrid"), q, units) for q in queries] for v in grid
    }
    kw = [first_hit(run(mem, q, cfg, "keyword"), q, units) for q in queries]
    print(f"\n{key}: whole-set hybrid any@5 / any@10 per value (keyword {recall(kw, 5):.3f} / {recall(kw, 10):.3f})")
    for v in grid:
        print(f"  {v!s:<8} {recall(ranks[v], 5):.3f} / {recall(ranks[v], 10):.3f}")
    leave_one_out(
        [q["sample"] for q in queries], ranks, kw, lambda v, fit: sum(recall([ranks[v][i] for i in fit], k) for k in K)
    )


def leave_one_out(
    samples: list[str],
    ranks: dict[Any, list[int | None]],
    kw: list[int | None],
    objective: Callable[[Any, list[int]], float],
) -> None:
    """For each conversation, the setting (a key of `ranks`, each question's first evidence rank) with the best
    objective on the other conversations' questions (their indexes), scored on it; prints the held-out mean."""
    held: dict[str, list[float]] = defaultdict(list)
    for s in sorted(set(samples)):
        fit = [i for i, x in enumerate(samples) if x != s]
        test = [i for i, x in enumerate(samples) if x == s]
        best = max(ranks, key=lambda v: objective(v, fit))
        for k in K:
            held[f"hybrid@{k}"].append(recall([ranks[best][i] for i in test], k))
            held[f"keyword@{k}"].append(recall([kw[i] for i in test], k))
        print(
            f"  held out {s}: chose {best}; hybrid any@5 {held['hybrid@5'][-1]:.3f} any@10 "
            f"{held['hybrid@10'][-1]:.3f}; keyword {held['keyword@5'][-1]:.3f} / {held['keyword@10'][-1]:.3f}"
        )
    print("  mean over held-out conversations: " + ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in held.items()))


def parser(doc: str) -> argparse.ArgumentParser:
    """The arguments this script and evals/fit_fusion.py share: the data, the reused run, settings for every run."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--workdir", type=Path, required=True, help="an `evals/locomo.py --workdir` run")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE retrieval setting for every run")
    return ap


def settings(items: list[str]) -> RetrievalConfig:
    """The product's retrieval config with `--set KEY=VALUE` items applied."""
    cfg = load_config().retrieval
    for item in items:
        key, _, value = item.partition("=")
        cfg = cfg.model_copy(update={key: setting(key, value)})
    return cfg


def setting(key: str, text: str) -> Any:
    default = RetrievalConfig.model_fields[key].default
    return text.lower() == "true" if isinstance(default, bool) else type(default)(text)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--cv", action="append", default=[], help="KEY=V1,V2,... chosen by leave-one-conversation-out")
    ap.add_argument("--show", type=int, default=20, help="lost questions printed in full")
    ap.add_argument("--no-analysis", action="store_true")
    a = ap.parse_args()
    mem, queries, units = load(a.data, a.workdir)
    cfg = settings(a.set)
    if not a.no_analysis:
        analyse(mem, queries, units, cfg, a.show)
    for spec in a.cv:
        cross_validate(mem, queries, units, cfg, spec)


if __name__ == "__main__":
    main()
