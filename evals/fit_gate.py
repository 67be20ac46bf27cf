"""Fit the UserPromptSubmit gate (issue #16): P(relevant) of each hit the warm hook considers, and the bar.

    python evals/fit_gate.py [--data DIR] [--pairs PATH] [--from-pairs PATH] [--keep-weights]

The labelled (prompt, hit) pairs come from the warm path's own candidates (`inject/warm.py` `candidates` and
`gate_features`: hybrid's order, untouched), so the features are the hook's:

- real sessions, dev split only: the first 50 % of `entire-cli/` (by first_ts) imported, the first prompts of the
  sessions from 50 to 70 % asked (`real_sessions.py --split 0.5:0.7`); a hit is relevant when it changed a file
  the later session changed. The eval's own 70/30 figures (`real_sessions.py`) stay held out.
- the coding fixture (`evals/fixtures/queries.jsonl` over `evals/corpus/episodes.jsonl`): graded episodes are
  relevant; even lines fit, odd lines are reported.
- negatives, every hit irrelevant: the real-session eval's unrelated prompts, LoCoMo questions and the spotter
  questions, asked of the entire-cli memory (and the unrelated and LoCoMo ones of the coding memory); even ones
  fit, odd ones are reported.

The fit: logistic regression (numpy, Newton steps, a little L2), each prompt's pool weighing the same and the three
sources (real sessions, coding, negatives) a third each. The bar and the share of the top P
(`inject.gate_top_share`): see `fit`. It prints the
numbers to put in `core/config.py` (GATE_WEIGHTS, GATE_BAR, GATE_TOP_SHARE) and the dev and held-out figures:
per source, the share of prompts whose injection holds a relevant episode, the share injecting nothing, and the
median characters the episode block would take; the same for the fixed floor the gate replaced.

`--keep-weights` chooses only the bar and the top share for the shipped weights. They are the fit of 2026-12-01
(on MiniLM cosines) carried onto standings (core/standing.py: the cosine weight times the spread of MiniLM's
unrelated pairs, 0.065; the intercept takes the centre), with that fit's bar and top share: a refit on today's
pools put its weight on the prompt's terms and lost half the held-out project's judged useful items, and the bar
this rule picks for the shipped weights (0.11, top share 0.4) let more through on both projects
(docs/experiments/gate-standing.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import real_sessions as rs  # noqa: E402  (evals/ is not a package)

from tempera.core.config import InjectConfig  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.project import ProjectRef, project_for_path  # noqa: E402
from tempera.core.vecindex import VectorCache  # noqa: E402
from tempera.evaluation.harness import load_corpus, load_fixture  # noqa: E402
from tempera.inject import gatefit, render, warm  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO / "evals" / "fixtures" / "queries.jsonl"
CORPUS = REPO / "evals" / "corpus" / "episodes.jsonl"
DEV_SPLIT = (0.5, 0.7)
LOCOMO_QUESTIONS = 80  # of the shared LoCoMo file, spread over its conversations
L2 = 1e-2
BARS = [round(0.01 * i, 2) for i in range(1, 60)]
TOP_SHARES = (0.0, 0.25, 0.4, 0.5, 0.6, 0.75)
SILENT_SHARE = 0.95  # of the dev negatives, at least this share inject nothing (issue #38's goal)
OLD_FLOOR, OLD_KEYWORD_HITS = 0.35, 2  # main's rule: cosine >= 0.35, or 2 prompt terms and cosine >= 0.175


@dataclass
class Pool:
    """One prompt's candidates: features, labels (None for a negative prompt: all irrelevant), and where from."""

    source: str  # real | coding | negative
    split: str  # dev | held-out
    prompt: str
    features: list[list[float]]
    labels: list[bool]
    lines: list[str]  # each hit as the hook would render it
    matched: list[int]  # distinct prompt terms each hit holds (the floor this gate replaces counted them)

    @property
    def relevant(self) -> bool:
        return self.source != "negative"


def pool_of(mem: Memory, prompt: str, project: ProjectRef, relevant: set[str], source: str, split: str) -> Pool:
    hits, _ = warm.candidates(mem, prompt, project, set())
    return Pool(
        source,
        split,
        prompt,
        warm.gate_features(hits, prompt).tolist(),
        [h.episode.id in relevant for h in hits],
        [render.episode_line(warm.shown(h, project)) for h in hits],
        [h.matched_terms for h in hits],
    )


def negatives(data: Path) -> tuple[list[str], list[str]]:
    """Prompts about nothing stored in a coding project: the eval's unrelated ones and LoCoMo's questions, and the
    spotter questions (another project's work, asked only of the entire-cli memory)."""
    general = list(rs.UNRELATED)
    locomo = json.loads((data / "locomo" / "locomo-dev5.json").read_text())
    per = LOCOMO_QUESTIONS // len(locomo)
    for conv in locomo:
        qa = conv["qa"]
        general += [qa[i]["question"] for i in range(0, len(qa), max(1, len(qa) // per))][:per]
    return general, spotter_questions()


def spotter_questions() -> list[str]:
    return [json.loads(line)["query"] for line in rs.SPOTTER_QUERIES.read_text().splitlines() if line.strip()]


def negative_kinds(pools: list[Pool], weights: list[float] | None, bar: float, share: float) -> str:
    """How many negative prompts of each kind inject anything, e.g. "unrelated 0/20"."""
    spotter = set(spotter_questions())
    kinds: dict[str, list[bool]] = {"unrelated": [], "LoCoMo": [], "spotter": []}
    for p in pools:
        if not p.relevant:
            kind = "unrelated" if p.prompt in rs.UNRELATED else "spotter" if p.prompt in spotter else "LoCoMo"
            kinds[kind].append(bool(chosen(p, weights, bar, share)))
    return ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in kinds.items() if v)


def real_pools(data: Path, asked: list[str]) -> list[Pool]:
    base = data / "transcripts" / "entire-cli"
    rows = rs.load_sessions(base / "sessions.tsv")
    cut = round(len(rows) * DEV_SPLIT[0])
    rows = rows[: round(len(rows) * DEV_SPLIT[1])]
    past, future = rows[:cut], rows[cut:]
    pools = []
    with rs.sandbox("gate") as box:
        rs.import_files(box, [base / "sessions" / f"{r['session_id']}.jsonl" for r in past])
        with Memory() as mem:
            mem.store.vectors.cache = VectorCache()  # the daemon's in-memory vectors: its background (standing.py)
            project_id = box.project_id(mem)
            ref = project_for_path(box.repo)
            assert ref.id == project_id, (ref, project_id)
            episodes = list(mem.store.iter_episodes(project_id))
            cases = [c for c in rs.future_cases(base, future, episodes, rs.PathMap.of_sessions(rows)) if c["relevant"]]
            rs.log(f"real sessions (dev): {len(cases)} prompts with a relevant episode, {len(asked)} negatives")
            pools += [pool_of(mem, c["prompt"], ref, set(c["relevant"]), "real", "dev") for c in cases]
            pools += [pool_of(mem, p, ref, set(), "negative", _half(i)) for i, p in enumerate(asked)]
    return pools


def coding_pools(asked: list[str]) -> list[Pool]:
    pools = []
    with rs.sandbox("gate-coding"), Memory() as mem:
        mem.store.vectors.cache = VectorCache()
        load_corpus(mem, CORPUS)
        queries = load_fixture(QUERIES)
        for i, q in enumerate(queries):
            ref = mem.store.projects.resolve(q.project)
            pools.append(pool_of(mem, q.query, ref, set(q.grades), "coding", _half(i)))
        projects = sorted({q.project for q in queries if q.project})
        for i, p in enumerate(asked):
            ref = mem.store.projects.resolve(projects[i % len(projects)])
            pools.append(pool_of(mem, p, ref, set(), "negative", _half(i)))
    return pools


def _half(i: int) -> str:
    """Even lines fit, odd ones are held out (counted from 0: the file's first line is line 0)."""
    return "dev" if i % 2 == 0 else "held-out"


# -- the fit -------------------------------------------------------------------------------------------------------
def training_set(pools: list[Pool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, ys, ws = [], [], []
    sizes = {s: sum(1 for p in pools if p.source == s and p.features) for s in ("real", "coding", "negative")}
    for p in pools:
        if not p.features:
            continue
        weight = 1.0 / (3 * sizes[p.source] * len(p.features))
        rows += p.features
        ys += [float(v) for v in p.labels]
        ws += [weight] * len(p.features)
    return np.array(rows), np.array(ys), np.array(ws) * len(rows)


def chosen(pool: Pool, weights: list[float] | None, bar: float, share: float) -> list[int]:
    """The indexes `warm.choose` keeps for this pool (no episode shown before); with no weights, the indexes the
    fixed floor this gate replaced kept."""
    if not pool.features:
        return []
    if weights is None:
        cos = [f[0] for f in pool.features]
        keep = [
            i
            for i, (c, m) in enumerate(zip(cos, pool.matched))
            if c >= OLD_FLOOR or (m >= OLD_KEYWORD_HITS and c >= OLD_FLOOR / 2)
        ]
        return keep[: InjectConfig().max_episodes]
    p = warm.gate_probability(np.array(pool.features), weights)
    return warm.choose(p, [False] * len(p), bar=bar, top_share=share, limit=InjectConfig().max_episodes)


def figures(pools: list[Pool], weights: list[float] | None, bar: float, share: float) -> dict[str, dict[str, float]]:
    """Per source: prompts, useful share (relevant prompts), injecting nothing, median episodes and characters."""
    out = {}
    for source in ("real", "coding", "negative"):
        group = [p for p in pools if p.source == source]
        if not group:
            continue
        picks = [chosen(p, weights, bar, share) for p in group]
        chars = [
            float(len(render.render_blocks([(render.HEADER_PROMPT, [p.lines[i] for i in c])], 2000)))
            for p, c in zip(group, picks)
        ]
        out[source] = {
            "prompts": len(group),
            "useful": round(statistics.mean(any(p.labels[i] for i in c) for p, c in zip(group, picks)), 3),
            "inject_nothing": round(statistics.mean(not c for c in picks), 3),
            "episodes_median": statistics.median(len(c) for c in picks),
            "chars_median": statistics.median(chars),
        }
    return out


def balanced(pools: list[Pool], weights: list[float], bar: float, share: float) -> float:
    """The mean over sources of the useful share (relevant prompts) and of the share injecting nothing
    (negative prompts): each source counts the same however many prompts it has."""
    f = figures(pools, weights, bar, share)
    return statistics.mean(v["inject_nothing"] if k == "negative" else v["useful"] for k, v in f.items())


def fit(pools: list[Pool], weights: list[float] | None = None) -> dict[str, Any]:
    """Weights by logistic regression on the dev pools (or the `weights` given); the bar that does best on
    `balanced` among those at which none of the real-session eval's dev unrelated prompts injects anything and at
    least SILENT_SHARE of all the dev negatives inject nothing (the higher on a tie); the largest top share that loses
    nothing on it. The second condition holds the bar off the very edge of the 20 unrelated prompts: the lowest bar
    that silences those let 7 % of the other negatives through (a vector hit of no shared word, 4 spreads over the
    background)."""
    dev = [p for p in pools if p.split == "dev"]
    if weights is None:
        x, y, w = training_set(dev)
        weights = [round(float(b), 4) for b in gatefit.fit_logistic(x, y, w, L2)]
    unrelated = [p for p in dev if p.prompt in rs.UNRELATED and p.features]
    silent = [
        b
        for b in BARS
        if all(float(warm.gate_probability(np.array(p.features), weights).max()) < b for p in unrelated)
        and figures(dev, weights, b, 0.0)["negative"]["inject_nothing"] >= SILENT_SHARE
    ]
    bar = max(silent, key=lambda b: (balanced(dev, weights, b, 0.0), b))
    best = balanced(dev, weights, bar, 0.0)
    share = max(s for s in TOP_SHARES if balanced(dev, weights, bar, s) >= best)
    return {"weights": weights, "bar": bar, "top_share": share}


def report(pools: list[Pool], model: dict[str, Any]) -> None:
    print("features:", ", ".join(warm.GATE_FEATURES))
    print(f"GATE_WEIGHTS = {tuple(model['weights'])}")
    print(f"GATE_BAR = {model['bar']}")
    print(f"GATE_TOP_SHARE = {model['top_share']}")
    cfg = InjectConfig()
    shipped = {"weights": cfg.gate_weights, "bar": cfg.gate_bar, "top_share": cfg.gate_top_share}
    old = {"weights": None, "bar": 0.0, "top_share": 0.0}
    for name, m in (("fitted", model), ("shipped (core/config.py)", shipped), ("the fixed floor it replaces", old)):
        for split in ("dev", "held-out"):
            print(f"\n{name}, {split}:")
            part = [p for p in pools if p.split == split]
            for source, f in figures(part, m["weights"], m["bar"], m["top_share"]).items():
                print(
                    f"  {source:<9} {f['prompts']:>4} prompts  useful {f['useful']:.3f}  inject nothing "
                    f"{f['inject_nothing']:.3f}  median {f['episodes_median']:.0f} episodes, "
                    f"{f['chars_median']:.0f} chars"
                )
            print(
                f"  negative prompts injecting anything: {negative_kinds(part, m['weights'], m['bar'], m['top_share'])}"
            )
    print("\nheld-out, other top shares at the fitted bar (useful / inject nothing / median chars):")
    held = [p for p in pools if p.split == "held-out"]
    for s in TOP_SHARES:
        f = figures(held, model["weights"], model["bar"], s)
        print(
            f"  {s:<5}"
            + "  ".join(
                f"{k} {v['useful']:.3f}/{v['inject_nothing']:.3f}/{v['chars_median']:.0f}" for k, v in f.items()
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=rs.SHARED / "data", help="the shared data folder")
    ap.add_argument("--pairs", type=Path, help="write the labelled pools here (JSON) for a refit without searching")
    ap.add_argument("--from-pairs", type=Path, help="fit on pools written by --pairs")
    ap.add_argument(
        "--keep-weights",
        action="store_true",
        help="keep the shipped weights (core/config.py GATE_WEIGHTS) and choose only the bar and the top share",
    )
    a = ap.parse_args()
    if a.from_pairs:
        pools = [Pool(**d) for d in json.loads(a.from_pairs.read_text())]
    else:
        general, spotter = negatives(a.data)
        pools = real_pools(a.data, general + spotter) + coding_pools(general)
        if a.pairs:
            a.pairs.write_text(json.dumps([p.__dict__ for p in pools]))
    report(pools, fit(pools, list(InjectConfig().gate_weights) if a.keep_weights else None))


if __name__ == "__main__":
    main()
