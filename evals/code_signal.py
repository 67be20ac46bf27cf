"""Code signal eval (issue #43): do the episodes that touched the code a prompt names rank the files a session goes
on to change better than retrieval without them?

    python evals/code_signal.py [--data DIR] [--projects entire-cli,cipher-box] [--weights 0,0.5,1,2,4,8]
                                [--start 0.3] [--chunk 10] [--every-prompt] [--json PATH]

Per project (its sessions and `sessions.tsv` under `--data`, its repository cloned from the fetched mirror into
/tmp once), in time order (`first_ts`): the first `--start` share of the sessions is imported (`tempera import
--project <sandbox repo>`, as real_sessions.py does); then, `--chunk` sessions at a time, each session's first real
prompt is asked with the memory of every session before its chunk, and the chunk is imported. Before a prompt the
repository is checked out at the last commit before the session began (on its git branch when the mirror has it,
else the default branch) and the project's symbol index brought up to it (`core/symbols.py` `refresh`: only the
files the checkout changed are parsed again). The prompt is ranked through the hook's search
(`inject/workcontext.py`, hybrid, on the session's branch) once per `hybrid_code_weight` of `--weights`, and by the
code list alone; the relevant episodes are the earlier ones that changed a file the session changed (real_sessions
`future_cases`): hit@5 and MRR@10. `--every-prompt` asks each session's later prompts too, with the same relevant
episodes and checkout (learning_replay.py `later_prompts`): first prompts seldom name code.

The weight is fitted on the first half of the queried sessions of the first project (time split: the best MRR@10,
the smaller weight on ties) and reported on its second half and on every other project, held out whole, as the
lift over weight 0 with its 95 % interval (a paired bootstrap over sessions, learning_replay.py `lift_interval`).
The checkouts are clean, so the work tree's changed files (the other half of the signal) are not measured here.

Lookup cost: per prompt, the median of five warm calls of the code list (`symbols.code_hits`: names -> files ->
episodes) and, in the same process and store, of the BM25 search retrieval starts with (`retrieve._keyword`); the
medians over the prompts and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_facts import timed  # noqa: E402
from learning_replay import later_prompts, lift_interval, session_of  # noqa: E402
from real_sessions import (  # noqa: E402
    LIMIT,
    SHARED,
    PathMap,
    case_search,
    code_state,
    first_rank,
    future_cases,
    import_files,
    load_sessions,
    log,
    rank_metrics,
    sandbox,
)

from tempera.core import symbols, textsearch  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.retrieve import _keyword  # noqa: E402
from tempera.inject import longprompt  # noqa: E402

MIRRORS = {"entire-cli": "/work/.mirror/entireio+cli/repo", "cipher-box": "/work/.mirror/FSM1+cipher-box/repo"}
CALLS = 5  # warm calls timed per prompt


def session_rows(base: Path) -> list[dict[str, str]]:
    """sessions.tsv rows, earliest first, with `files_modified` and `cwds` as real_sessions.py reads them ('|'
    between items; cipher-box's file writes ',' and records no cwds: its transcripts' are read)."""
    rows = load_sessions(base / "sessions.tsv")
    for r in rows:
        if "|" not in r["files_modified"] and "," in r["files_modified"]:
            r["files_modified"] = r["files_modified"].replace(",", "|")
        if "cwds" not in r:
            r["cwds"] = "|".join(transcript_cwds(base / "sessions" / f"{r['session_id']}.jsonl"))
    return rows


def transcript_cwds(path: Path) -> list[str]:
    found: dict[str, None] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                cwd = json.loads(line).get("cwd")
            except (ValueError, AttributeError):
                continue
            if isinstance(cwd, str):
                found.setdefault(cwd, None)
    return list(found)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def clone(name: str) -> Path:
    """The project's repository, cloned from the mirror into /tmp once (every branch as origin/*)."""
    path = Path("/tmp") / name
    if not path.exists():
        subprocess.run(["git", "clone", "-q", MIRRORS[name], str(path)], check=True)
    return path


def commit_at(repo: Path, branch: str, ts: str) -> str:
    """The last commit before `ts` on origin/<branch> when the mirror has that branch, else on origin/HEAD."""
    for ref in ([f"origin/{branch}"] if branch and branch != "HEAD" else []) + ["origin/HEAD"]:
        sha = git(repo, "rev-list", "-1", f"--before={ts}", ref)
        if sha:
            return sha
    return ""


def warm(fn: Callable[[], object]) -> float:
    """The median ms of CALLS calls, after one that warms caches."""
    fn()
    return timed(fn, CALLS)


def run_project(name: str, data: Path, weights: list[float], start: float, chunk: int, every: bool) -> dict[str, Any]:
    base = data / name
    rows = session_rows(base)
    mapper = PathMap.of_sessions(rows)
    repo = clone(name)
    cut = round(len(rows) * start)
    cases: list[dict[str, Any]] = []
    out: dict[str, Any] = {"sessions": len(rows), "imported_first": cut}
    with sandbox(f"code-{name}") as box:
        checkout = box.repo.parent / "checkout"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(checkout)], check=True)
        try:
            import_files(box, [base / "sessions" / f"{r['session_id']}.jsonl" for r in rows[:cut]])
            for i in range(cut, len(rows), chunk):
                batch = rows[i : i + chunk]
                with Memory() as mem:
                    cases += ask(mem, box, base, batch, mapper, checkout, repo, weights, every)
                import_files(box, [base / "sessions" / f"{r['session_id']}.jsonl" for r in batch])
            with Memory() as mem:
                eps = list(mem.store.iter_episodes(box.project_id(mem)))
                out["episodes"] = len(eps)
                out["episodes_with_symbols"] = sum(1 for e in eps if e.context.symbols_modified)
                out["indexed"] = mem.db.one("SELECT COUNT(DISTINCT file), COUNT(*) FROM code_symbols")
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(checkout)], check=False)
    out["cases"] = cases
    return out


def ask(
    mem: Memory,
    box: Any,
    base: Path,
    batch: list[dict[str, str]],
    mapper: PathMap,
    checkout: Path,
    repo: Path,
    weights: list[float],
    every: bool,
) -> list[dict[str, Any]]:
    """Each batch session's first prompt (and with `every` its later ones) ranked at every weight and by the code
    list alone, with the lookup's cost."""
    project_id = box.project_id(mem)
    episodes = list(mem.store.iter_episodes(project_id))
    rowids = dict(mem.db.query("SELECT rowid, id FROM episodes WHERE project_id = ?", (project_id,)))
    base_cfg = mem.config.retrieval
    out = []
    found = [c for c in future_cases(base, batch, episodes, mapper) if c["relevant"]]
    for case in found + (later_prompts(base, found) if every else []):
        row = next(r for r in batch if r["session_id"] == session_of(case["session_id"]))
        sha = commit_at(repo, case["branch"], row["first_ts"])
        git(checkout, "checkout", "-q", "--detach", sha)
        symbols.refresh(mem.db, project_id, str(checkout))
        rel = set(case["relevant"])
        ranks: dict[str, int | None] = {}
        for w in weights:
            mem.config.retrieval = base_cfg.model_copy(update={"hybrid_code_weight": w})
            ranks[str(w)] = first_rank(case_search(mem, project_id, case, box.repo, LIMIT, "hybrid"), rel)
        mem.config.retrieval = base_cfg
        query = longprompt.search_text(case["prompt"])
        code = symbols.code_hits(mem.db, query, project_id, base_cfg.candidates)
        ranks["code alone"] = first_rank([rowids[r] for r, _ in code], rel)
        terms = textsearch.query_terms(query)
        out.append(
            {
                "session_id": case["session_id"],
                "first_ts": row["first_ts"],
                "commit": sha[:12],
                "prompt": case["prompt"][:160],
                "names": symbols.prompt_names(query),
                "code_list": len(code),
                "relevant": len(rel),
                "ranks": ranks,
                "lookup_ms": warm(lambda: symbols.code_hits(mem.db, query, project_id, base_cfg.candidates)),
                "keyword_ms": warm(lambda: _keyword(mem.store, terms, project_id, False, base_cfg.candidates)),
            }
        )
        log(f"  {case['session_id'][:8]} @ {sha[:8]}: {ranks}")
    return out


def figures(cases: list[dict[str, Any]], arms: list[str]) -> dict[str, dict[str, float]]:
    return {a: rank_metrics([c["ranks"][a] for c in cases]) for a in arms}


def best_weight(cases: list[dict[str, Any]], weights: list[float]) -> float:
    """The weight with the best MRR@10 on these cases (then hit@5; the smaller on ties)."""
    scored = figures(cases, [str(w) for w in weights])
    return max(weights, key=lambda w: (scored[str(w)]["mrr@10"], scored[str(w)]["hit@5"], -w))


def lift(cases: list[dict[str, Any]], w: float) -> dict[str, Any]:
    """Weight w against 0 on these cases: both arms' figures and the MRR@10 lift's 95 % interval."""
    on = {c["session_id"]: c["ranks"][str(w)] for c in cases}
    off = {c["session_id"]: c["ranks"]["0.0"] for c in cases}
    low, high, up, down = lift_interval(on, off)
    return {
        "n": len(cases),
        "off": rank_metrics(list(off.values())),
        "on": rank_metrics(list(on.values())),
        "mrr_lift_95": [round(low, 3), round(high, 3)],
        "up": up,
        "down": down,
    }


def report(runs: dict[str, dict[str, Any]], weights: list[float]) -> dict[str, Any]:
    arms = [str(w) for w in weights] + ["code alone"]
    first = next(iter(runs))
    cases = runs[first]["cases"]
    sessions = list(dict.fromkeys(session_of(c["session_id"]) for c in cases))  # in time order
    fitted = set(sessions[: len(sessions) // 2])
    fit = [c for c in cases if session_of(c["session_id"]) in fitted]
    held = [c for c in cases if session_of(c["session_id"]) not in fitted]
    w = best_weight(fit, weights)
    out: dict[str, Any] = {"fitted_on": f"{first} first half ({len(fit)} prompts)", "weight": w}
    out["per_project"] = {name: figures(r["cases"], arms) for name, r in runs.items()}
    out["fired"] = {  # the prompts whose code list is not empty, and the list's own figures on them
        name: {"prompts": len(f), "code alone": figures(f, ["code alone"])["code alone"]}
        for name, r in runs.items()
        for f in [[c for c in r["cases"] if c["code_list"]]]
    }
    out["fit_half"] = figures(fit, arms)
    out["held_out"] = {f"{first} second half": lift(held, w)} | {
        name: lift(r["cases"], w) for name, r in runs.items() if name != first
    }
    every = [c for r in runs.values() for c in r["cases"]]
    lookup = statistics.median(c["lookup_ms"] for c in every) if every else 0.0
    keyword = statistics.median(c["keyword_ms"] for c in every) if every else 0.0
    out["lookup"] = {
        "prompts": len(every),
        "code_hits_ms_median": round(lookup, 3),
        "keyword_ms_median": round(keyword, 3),
        "ratio": round(lookup / keyword, 2) if keyword else None,
        "code_hits_ms_max": round(max((c["lookup_ms"] for c in every), default=0.0), 3),
    }
    return out


def print_report(r: dict[str, Any], runs: dict[str, dict[str, Any]]) -> None:
    c = r["code"]
    print(f"code: {c['package']}" + (f" @ {c['commit'][:12]}{' (dirty)' if c['dirty'] else ''}" if c["commit"] else ""))
    for name, run in runs.items():
        print(
            f"\n== {name}: {run['sessions']} sessions ({run['imported_first']} imported first), {len(run['cases'])} "
            f"prompts with a relevant earlier episode; {run['episodes']} episodes, {run['episodes_with_symbols']} "
            f"with touched symbols; index {run['indexed'][0]} files, {run['indexed'][1]} names"
        )
        print(f"{'hybrid_code_weight':<22}{'hit@5':>8}{'MRR@10':>8}")
        for arm, m in r["summary"]["per_project"][name].items():
            print(f"{arm:<22}{m['hit@5']:>8.3f}{m['mrr@10']:>8.3f}")
        fired = r["summary"]["fired"][name]
        print(
            f"the code list is not empty for {fired['prompts']} prompts; on them, alone: hit@5 "
            f"{fired['code alone']['hit@5']:.3f}, MRR@10 {fired['code alone']['mrr@10']:.3f}"
        )
    s = r["summary"]
    print(f"\nfitted on {s['fitted_on']}: hybrid_code_weight {s['weight']}")
    for name, lf in s["held_out"].items():
        print(
            f"  {name} (n={lf['n']}): hit@5 {lf['off']['hit@5']:.3f} -> {lf['on']['hit@5']:.3f}, MRR@10 "
            f"{lf['off']['mrr@10']:.3f} -> {lf['on']['mrr@10']:.3f} (lift 95% {lf['mrr_lift_95']}; "
            f"{lf['up']} up, {lf['down']} down)"
        )
    lk = s["lookup"]
    print(
        f"\nlookup (names -> files -> episodes), {lk['prompts']} prompts, median of {CALLS} warm calls each: "
        f"{lk['code_hits_ms_median']} ms (max {lk['code_hits_ms_max']}), BM25 search {lk['keyword_ms_median']} ms: "
        f"ratio {lk['ratio']}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts")
    ap.add_argument("--projects", default="entire-cli,cipher-box", help="the first is fitted on")
    ap.add_argument("--weights", default="0,0.5,1,2,4,8")
    ap.add_argument("--start", type=float, default=0.3, help="share of the sessions imported before any prompt")
    ap.add_argument("--chunk", type=int, default=10, help="sessions asked, then imported, at a time")
    ap.add_argument("--every-prompt", action="store_true", help="ask each session's later prompts too")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    weights = sorted({float(w) for w in a.weights.split(",")} | {0.0})
    started = time.perf_counter()
    runs = {p: run_project(p, a.data, weights, a.start, a.chunk, a.every_prompt) for p in a.projects.split(",")}
    r = {"code": code_state(), "summary": report(runs, weights), "seconds": round(time.perf_counter() - started)}
    print_report(r, runs)
    if a.json:
        a.json.write_text(json.dumps({**r, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
