"""Fit the hybrid fusion weight (`retrieval.hybrid_bm25_weight`) and check by cross-validation that it carries over.

    python evals/fit_fusion.py [--locomo FILE] [--transcripts DIR] [--workdir DIR] [--json OUT]
                               [--before OLD.json] [--modes-only] [--skip-entire]

Hybrid relevance is `a x BM25 / its maximum for the query + (1 - a) x cosine` (core/retrieve.py).
Each query's candidates (both indexes' top N with their scores and vectors) are fetched once through
`retrieve.candidates`; every `a` of the grid reranks them with `retrieve.rank`, the rest of retrieve(), so a figure
here is what retrieve() returns at that weight (fitting needs a Tempera whose retrieve has them and the
`hybrid_bm25_weight` knob). Keyword, vector and hybrid at the configured weight go through retrieve() itself.

- LoCoMo (`--locomo`, default the shared locomo-dev5.json), imported as evals/locomo.py does; metric
  recall_any@10. Leave one conversation out: fit `a` on the other conversations, score the held-out one.
- entire-cli (`--transcripts`, a folder with entire-cli/ as evals/real_sessions.py reads it), the future-files
  cases of real_sessions.py; metric hit@5. Split by time: fit on the earlier half of the future sessions' prompts,
  score the later half; and the weight fitted on all of LoCoMo, scored on the same later half.

The default to ship is the weight fitted on all LoCoMo conversations. Noise: a two-sided sign test over the
held-out queries (the ones where exactly one of two rankings succeeds) and the per-fold differences.

To refit on your own data, point `--locomo` at conversations in LoCoMo's format and/or `--transcripts` at a folder
whose entire-cli/ holds your sessions.tsv and sessions/, and set the printed default in config.toml
(`[retrieval] hybrid_bm25_weight`). `--modes-only` runs just the retrieve() modes (works on older Tempera, e.g.
`git archive REV tempera | tar -x -C DIR` run with `PYTHONPATH=DIR`); `--before` adds such a run's hybrid as
"old hybrid". `--workdir` keeps (and reuses) the LoCoMo import, e.g. the one evals/locomo.py --workdir kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

import locomo
import real_sessions

from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.core.retrieve import retrieve

GRID = [round(i / 20, 2) for i in range(21)]
LOCOMO_K = 10
MODES = ("keyword", "vector", "hybrid")


@dataclass
class Case:
    id: str
    group: str  # the LoCoMo conversation, or the half of the entire-cli future ("early", "late")
    query: str
    project: str
    relevant: set[str]
    k: int
    scores: dict[str, float] = field(default_factory=dict)  # mode or "a=<weight>" -> hit@k


def hit(ranked: list[str], case: Case) -> float:
    return float(any(e in case.relevant for e in ranked[:case.k]))


def score_cases(mem: Memory, cases: list[Case], fit: bool) -> None:
    """Each case's hit@k per retrieve() mode, and (fit) per grid weight over its candidates fetched once."""
    cfg, now = mem.config.retrieval, datetime.now(timezone.utc)
    for n, c in enumerate(cases, 1):
        for mode in MODES:
            hits = retrieve(mem.store, c.query, project_id=c.project, cfg=cfg, limit=c.k, mode=mode, now=now)
            c.scores[mode] = hit([h.episode.id for h in hits], c)
        if fit:
            from tempera.core.retrieve import candidates, rank  # newer than --modes-only runs may be

            found = candidates(mem.store, c.query, project_id=c.project, cfg=cfg, mode="hybrid",
                               n=max(cfg.candidates, c.k * 3))
            for a in GRID:
                hits = rank(found, cfg.model_copy(update={"hybrid_bm25_weight": a}), mode="hybrid", limit=c.k, now=now)
                c.scores[f"a={a}"] = hit([h.episode.id for h in hits], c)
        if n % 100 == 0:
            real_sessions.log(f"  {n}/{len(cases)} queries")


def locomo_cases(path: Path, work: Path) -> list[Case]:
    """The LoCoMo questions (categories 1-4) as cases, over an import of the conversations (reused if present)."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    convs = {s["sample_id"]: (s, *locomo.write_transcripts(s, work / "projects")) for s in samples}
    data = work / "data-with"
    env = {**os.environ, "TEMPERA_DATA_DIR": str(data)}
    if not (data / "tempera.db").exists():
        real_sessions.log(f"importing {len(samples)} LoCoMo conversations ...")
        locomo.tempera(["import", str(work / "projects"), "--json"], env)
    os.environ["TEMPERA_DATA_DIR"] = str(data)
    cases = []
    with Memory() as mem:
        for sid, (sample, cwd, by_uuid, texts) in convs.items():
            pid = project_for_path(cwd).id
            turns = {e.id: {by_uuid[u] for u in e.source.record_uuids if u in by_uuid}
                     for e in mem.store.iter_episodes(pid)}
            for n, item in enumerate(sample["qa"]):
                ev = set(locomo.evidence_ids(item, set(texts)))
                if item.get("category") in locomo.CATEGORIES and ev:
                    cases.append(Case(f"{sid}#{n}", sid, item["question"], pid,
                                      {e for e, ids in turns.items() if ids & ev}, LOCOMO_K))
    return cases


def entire_cases(transcripts: Path, fit: bool) -> list[Case]:
    """real_sessions.py's future-files cases (each with a relevant past episode), scored inside its sandbox."""
    base = transcripts / "entire-cli"
    rows = real_sessions.load_sessions(base / "sessions.tsv")
    cut = round(len(rows) * real_sessions.PAST_SHARE)
    with real_sessions.sandbox("fit-fusion") as box:
        real_sessions.import_files(box, [base / "sessions" / f"{r['session_id']}.jsonl" for r in rows[:cut]])
        with Memory() as mem:
            pid = box.project_id(mem)
            found = [c for c in real_sessions.future_cases(base, rows[cut:], list(mem.store.iter_episodes(pid)),
                                                           real_sessions.PathMap.of_sessions(rows)) if c["relevant"]]
            half = len(found) // 2
            cases = [Case(c["session_id"], "early" if i < half else "late", c["prompt"], pid, set(c["relevant"]),
                          real_sessions.K) for i, c in enumerate(found)]
            real_sessions.log(f"entire-cli: {len(cases)} cases ...")
            score_cases(mem, cases, fit)
    return cases


# -- fitting and reporting -------------------------------------------------------------------------------------------
def fit(cases: list[Case]) -> float:
    """The grid weight with the best mean; among tied weights the middle one."""
    means = {a: mean(c.scores[f"a={a}"] for c in cases) for a in GRID}
    best = max(means.values())
    tied = [a for a in GRID if means[a] >= best - 1e-12]
    return tied[len(tied) // 2]


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven if neither ranking were better."""
    n, low = wins + losses, min(wins, losses)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2 ** n) if n else 1.0


def compare(name: str, new: list[float], ref: list[float]) -> str:
    wins = sum(1 for x, y in zip(new, ref) if x > y)
    losses = sum(1 for x, y in zip(new, ref) if x < y)
    return (f"new hybrid vs {name}: {mean(new) - mean(ref):+.3f} ({wins} queries won, {losses} lost, "
            f"sign test p = {sign_test(wins, losses):.3f})")


def table(title: str, folds: dict[str, list[Case]], weights: dict[str, float], columns: list[str]) -> dict[str, Any]:
    """Per held-out fold the mean of each column, "new hybrid" at that fold's fitted weight; then the mean over
    folds, the spread of the new-minus-best-single-mode difference over folds and sign tests over the queries."""
    print(f"\n{title}\n{'fold':<12}{'n':>5}{'a':>6}" + "".join(f"{c:>13}" for c in [*columns, "new hybrid"]))
    out: dict[str, Any] = {"folds": {}}
    for g, cs in folds.items():
        row = {c: mean(x.scores[c] for x in cs) for c in columns} | {
            "new hybrid": mean(x.scores[f"a={weights[g]}"] for x in cs), "a": weights[g], "n": len(cs)}
        out["folds"][g] = row
        print(f"{g:<12}{len(cs):>5}{weights[g]:>6.2f}" + "".join(f"{row[c]:>13.3f}" for c in [*columns, "new hybrid"]))
    means = {c: mean(r[c] for r in out["folds"].values()) for c in [*columns, "new hybrid"]}
    out["mean"] = means
    print(f"{'mean':<17}{'':>6}" + "".join(f"{means[c]:>13.3f}" for c in [*columns, "new hybrid"]))
    held = [x for cs in folds.values() for x in cs]
    new = [x.scores[f"a={weights[x.group]}"] for x in held]
    single = max(("keyword", "vector"), key=lambda m: means[m])
    diffs = [r["new hybrid"] - r[single] for r in out["folds"].values()]
    print(f"new hybrid - {single} per fold: " + ", ".join(f"{d:+.3f}" for d in diffs)
          + (f" (sd {pstdev(diffs):.3f})" if len(diffs) > 1 else ""))
    for ref in [single, *(c for c in ("old hybrid", "hybrid") if c in columns)]:
        print("  " + compare(ref, new, [x.scores[ref] for x in held]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", type=Path, default=real_sessions.SHARED / "data" / "locomo" / "locomo-dev5.json")
    ap.add_argument("--transcripts", type=Path, default=real_sessions.SHARED / "data" / "transcripts")
    ap.add_argument("--workdir", type=Path, help="keep the LoCoMo import here, or reuse the one found here")
    ap.add_argument("--json", type=Path, help="write every case's scores here")
    ap.add_argument("--before", type=Path, help="a --modes-only --json run of older code: its hybrid is 'old hybrid'")
    ap.add_argument("--modes-only", action="store_true", help="only the retrieve() modes, no fit")
    ap.add_argument("--skip-entire", action="store_true", help="LoCoMo only")
    a = ap.parse_args()
    work = a.workdir or Path(tempfile.mkdtemp(prefix="fit-fusion-"))
    cases = locomo_cases(a.locomo, work)
    real_sessions.log(f"LoCoMo: {len(cases)} questions ...")
    with Memory() as mem:
        score_cases(mem, cases, not a.modes_only)
    if not a.skip_entire:
        cases += entire_cases(a.transcripts, not a.modes_only)
    if a.json:
        a.json.write_text(json.dumps([{"id": c.id, "group": c.group, "scores": c.scores} for c in cases]) + "\n")
    if a.modes_only:
        for g in dict.fromkeys(c.group for c in cases):
            cs = [c for c in cases if c.group == g]
            print(f"{g:<12}{len(cs):>5}" + "".join(f"{m:>9} {mean(c.scores[m] for c in cs):.3f}" for m in MODES))
        return
    columns = ["keyword", "vector", "hybrid"]
    if a.before:
        old = {(r["group"], r["id"]): r["scores"]["hybrid"] for r in json.loads(a.before.read_text())}
        for c in cases:
            c.scores["old hybrid"] = old[(c.group, c.id)]
        columns.insert(2, "old hybrid")
    lo = {g: [c for c in cases if c.group == g] for g in dict.fromkeys(c.group for c in cases)
          if g not in ("early", "late")}
    every = [c for cs in lo.values() for c in cs]
    default = fit(every)
    print(f"LoCoMo ({len(every)} questions, recall_any@{LOCOMO_K}): a fitted on all conversations = {default} "
          f"(grid {GRID[0]}..{GRID[-1]} step {GRID[1]}); 'hybrid' is retrieve() at the configured "
          f"a={mem.config.retrieval.hybrid_bm25_weight}")
    table("leave one conversation out (fit on the others, score the held-out one)", lo,
          {g: fit([c for c in every if c.group != g]) for g in lo}, columns)
    early = [c for c in cases if c.group == "early"]
    late = [c for c in cases if c.group == "late"]
    if early and late:
        print(f"\nentire-cli ({len(early)} + {len(late)} future prompts, hit@{real_sessions.K})")
        table("split by time: fit on the earlier half, score the later half", {"late": late},
              {"late": fit(early)}, columns)
        table(f"the LoCoMo default a={default} on the later half", {"late": late}, {"late": default}, columns)
    print(f"\nchosen default: retrieval.hybrid_bm25_weight = {default}")


if __name__ == "__main__":
    main()
