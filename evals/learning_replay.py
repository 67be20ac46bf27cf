"""Learning replay (issue #16): does implicit feedback from real sessions make later retrieval better?

    python evals/learning_replay.py [--data DIR] [--json PATH] [--limit N] [--arms off,on] [--split PAST:END]
        [--explain] [--explain-mode MODE] [--keep DIR] [--every-prompt] [--oracle] [--as-votes]
        [--set SECTION.KEY=VALUE]

The shared entire-cli sessions (see real_sessions.py, whose functions this reuses) are replayed in time order
(`first_ts`) through the real paths, once per arm, each in a fresh sandbox:

- off: each of the earlier 70 % is captured with `capture_and_learn` (what `tempera import` does): no memory was
  ever injected, so there is no implicit feedback (the no-feedback case; it should equal real_sessions.py). It
  still learns outcome links (core/learning/outcomes.py: an earlier episode that changed a file a later session
  changed), which retrieval weighs by `retrieval.outcome_link_weight`.
- none: the off arm's own store measured again with `retrieval.outcome_link_weight` 0: no links and no verdicts
  (the temporal credit every capture writes, core/learning/credit.py, stays in both). It comes with every off arm
  (one more retrieval pass, not a replay), so off - none is what the links alone give, and on - none what the
  links and the verdicts give together.
- on: before a session is captured, the warm daemon's own answer (`tempera.inject.warm.answer`) is asked for its
  SessionStart and for each of its real prompts, which records what it injects into that session, exactly as the
  hooks do; then `capture_and_learn` judges those injections against the captured turns (an injected episode
  whose files, commands, errors or phrases reappear in a successful turn is used: helpful evidence; one ignored
  gets a small unhelpful one) and updates utility.

The replay injects a session's prompts before capturing it (live, the Stop hook captures after every turn): what
is injected is retrieved from earlier sessions only, and a memory judged ignored by the first turn is looked at
again by every later turn of the session (implicit.py rewrites its verdict when one uses it).

Then the future-files eval of real_sessions.py on the later 30 %: per mode hit@5 and MRR@10, per arm, and the
lifts (on - off, and over none: off - none, on - none), and under each view's table each hybrid lift's 95 % interval
(a paired bootstrap over sessions, `lift_interval`) with the queries it moved up and down. Also how much evidence
the replay wrote. Every prompt, replayed or queried, is asked on the git branch Claude Code recorded with it,
checked out in the sandbox repository (`real_sessions.on_branch`): the hook reads the branch from its cwd, and a
thin prompt is searched with the branch's words (`inject/workcontext.py`). Progress goes to stderr, the table to
stdout.
`--split 0.5:0.7` replays the first 50 % and queries with the sessions from 50 to 70 %: the dev split, for
choosing a learning setting without looking at the reported 70/30 lift. `--explain` prints, per query, the best
relevant episode's rank off -> on in hybrid (or `--explain-mode`) and each top-10 episode that moved with the
evidence that moved it (salience: the global utility; query factor: `retrieve._query_evidence`)
(episodes are matched across arms by session, time and summary), then where each arm's evidence landed: rows on
episodes relevant to a later query or not, and each injected (session, episode) by its verdict and by whether a
turn of the session changed the episode's files again. `--every-prompt` also asks each future session's later
prompts (relevant: the same episodes as its first): the first prompts alone are 14 (dev) and 24 (70/30) queries,
where one query moving one rank is a lift of 0.02-0.04; the table gives the first prompts (the bar), every
prompt, and the later prompts alone (issue #38's "learning never hurts": on - off over them, with its interval).
`--oracle` adds the oracle arm: the on arm's store, its implicit verdicts swapped for perfect ones on exactly the
(session, episode) pairs it injected (used when the episode changed a file that replayed session changed, the
eval's own relevance; never looking at the queried sessions): the lift a flawless use detector would give with
the same exposure, so what the oracle cannot reach is exposure or effect size, not detection.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_sessions import (  # noqa: E402
    LIMIT,
    PAST_SHARE,
    SHARED,
    PathMap,
    Sandbox,
    add_set_option,
    add_split_option,
    code_state,
    future_cases,
    load_sessions,
    log,
    on_branch,
    prompt_records,
    record_branch,
    retrieval_figures,
    rank_metrics,
    reciprocal,
    sandbox,
    split_list,
    use_settings,
)

from tempera.core.learning.chaining import share_all  # noqa: E402
from tempera.core.learning.implicit import UseVerdict, is_chronic, judge  # noqa: E402
from tempera.core.learning.retire import live_id  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.models import Episode  # noqa: E402
from tempera.core.retrieve import MODES, retrieve  # noqa: E402
from tempera.core.selfimprove.anchors import anchor_files  # noqa: E402
from tempera.core.utility import record_feedback  # noqa: E402
from tempera.inject.payload import HookPayload  # noqa: E402
from tempera.inject.warm import answer  # noqa: E402
from tempera.transcripts.pipeline import capture_and_learn  # noqa: E402

ARMS = ("off", "on")
BASES = ("off", "none")  # the arms the report gives lifts over
GOAL_LIFT = 0.05
ORACLE_RULE = "oracle: the episode changed a file the session changed"


def inject_session(mem: Memory, box: Sandbox, session_id: str, path: Path) -> int:
    """The hooks' answers for one session (its start, then each prompt); how many prompts were asked."""
    req = {"session_id": session_id, "cwd": str(box.repo)}
    answer(mem, HookPayload(event="SessionStart", **req))
    n = 0
    for n, (text, record) in enumerate(prompt_records(path), 1):
        on_branch(box.repo, record_branch(record))  # the hook reads the branch from its cwd, as the developer's was
        answer(mem, HookPayload(event="UserPromptSubmit", prompt=text, **req))
    return n


def evidence_profile(mem: Memory) -> dict[str, Any]:
    """What the replay wrote: injections, how many were judged used, implicit evidence rows by signal."""
    injected, used = mem.db.one("SELECT COUNT(*), COALESCE(SUM(used = 1), 0) FROM injections")
    rows = {
        f"{src}/{sig}": (n, round(w, 2))
        for src, sig, n, w in mem.db.query(
            "SELECT source, signal, COUNT(*), SUM(weight) FROM feedback_events GROUP BY source, signal"
        )
    }
    moved = mem.db.one("SELECT COUNT(*) FROM episodes WHERE ABS(utility - 0.5) > 1e-9")[0]
    return {
        "injections": injected,
        "judged_used": used,
        "evidence_rows (count, weight)": rows,
        "outcome_links": mem.db.one("SELECT COUNT(*) FROM outcome_links")[0],
        "episodes_with_utility_moved": moved,
    }


@contextmanager
def without_links(mem: Memory) -> Iterator[None]:
    """Meanwhile `mem` retrieves with `retrieval.outcome_link_weight` 0, the none arm's setting. The evals search
    with `mem.config`, read once when the Memory opened, so the override goes there, not into the environment."""
    saved = mem.config
    mem.config = saved.model_copy(update={"retrieval": saved.retrieval.model_copy(update={"outcome_link_weight": 0.0})})
    try:
        yield
    finally:
        mem.config = saved


@contextmanager
def as_explicit(mem: Memory) -> Iterator[None]:
    """The replay's verdicts relabelled as explicit votes while the block runs, as if a person had voted exactly
    so on what was injected: explicit votes reach further in ranking (`retrieve._coverage_by_votes`), and this
    measures that reach with votes as right (oracle) or as wrong (the use detector's) as the replay's."""
    mem.db.execute("UPDATE feedback_events SET source = 'explicit' WHERE source = 'implicit'")
    try:
        yield
    finally:
        mem.db.execute("UPDATE feedback_events SET source = 'implicit' WHERE source = 'explicit'")


def oracle_verdicts(mem: Memory, session_files: dict[str, set[str]], files_of: dict[str, set[str]]) -> dict[str, int]:
    """Swap the replay's implicit verdicts for perfect ones, on exactly the (session, episode) pairs it injected, in
    the order they were injected: used (helpful) when the episode changed a file the session changed, the eval's own
    relevance applied to the replayed session (never to a queried one), else ignored (chronic or not, as
    implicit.py weighs it); then the link shares again. The ceiling of the use detector: what the same injections
    would teach if every verdict were right."""
    cfg = mem.config.bellman
    pairs = mem.db.query("SELECT session_id, episode_id, MIN(id) FROM injections GROUP BY 1, 2 ORDER BY 3")
    with mem.db.transaction():
        mem.db.execute("DELETE FROM feedback_events WHERE source = 'implicit'")
        mem.db.execute("UPDATE episodes SET last_useful_at = NULL")  # set again by the helpful rows below
    counts = {"used": 0, "ignored": 0, "chronic": 0}
    for sid, eid, first in pairs:
        used = bool(files_of.get(eid, set()) & session_files.get(sid, set()))
        chronic = not used and is_chronic(mem.db, cfg, eid, sid, first)
        signal, weight, _ = judge(UseVerdict(used, float(used)), "success", False, cfg, chronic)
        assert signal is not None  # a successful turn always gives evidence
        evidence = {"session": sid, "rule": ORACLE_RULE if used else f"not {ORACLE_RULE}", "chronic": chronic}
        record_feedback(mem.db, live_id(mem.db, eid), signal, weight=weight, source="implicit", evidence=evidence)
        mem.db.execute(
            "UPDATE injections SET used = ? WHERE session_id = ? AND episode_id = ?", (float(used), sid, eid)
        )
        counts["used" if used else "ignored"] += 1
        counts["chronic"] += chronic
    share_all(mem)
    return counts


def evidence_of(mem: Memory, episode_id: str) -> dict[str, float]:
    """An episode's evidence weight by source and signal (implicit rows by rule): what moved its salience."""
    rows = mem.db.query(
        "SELECT source, signal, CASE WHEN source = 'implicit' THEN json_extract(evidence, '$.rule') END, SUM(weight) "
        "FROM feedback_events WHERE episode_id = ? GROUP BY 1, 2, 3",
        (episode_id,),
    )
    return {f"{src} {sig}" + (f" ({rule})" if rule else ""): round(w, 2) for src, sig, rule, w in rows}


def episode_key(ep: Episode) -> str:
    """Names one captured episode across arms (ids are random per capture): session, time, summary."""
    return f"{ep.session_id}|{ep.created_at.isoformat()}|{ep.summary[:60]}"


def top_hits(mem: Memory, project_id: str, case: dict[str, Any], mode: str, n: int = LIMIT) -> list[dict[str, Any]]:
    """The top n of a case in `mode` with their evidence: where learning moved a rank, and why. The score is
    relevance x salience x the query evidence's factor (`retrieve._query_evidence`), so the factor is the rest."""
    hits = retrieve(mem.store, case["prompt"], project_id=project_id, cfg=mem.config.retrieval, limit=n, mode=mode)
    rel = set(case["relevant"])
    return [
        {
            "id": h.episode.id[:8],
            "key": episode_key(h.episode),
            "relevant": h.episode.id in rel,
            "relevance": round(h.relevance, 3),
            "salience": round(h.salience, 3),
            "query_factor": round(h.score / (h.relevance * h.salience), 3) if h.relevance * h.salience else None,
            "utility": round(h.episode.utility.value, 3),
            "evidence": evidence_of(mem, h.episode.id),
        }
        for h in hits
    ]


def evidence_vs_relevance(mem: Memory, episodes: list[Episode], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Does the evidence land where it should? Rows per kind on episodes relevant to some later query or not, and
    each injected (session, episode) by its verdict and by whether a turn of that session changed its files."""
    later = {e for c in cases for e in c["relevant"]}
    rows: dict[str, list[int]] = {}
    for eid, src, sig, rule in mem.db.query(
        "SELECT episode_id, source, signal, CASE WHEN source = 'implicit' THEN json_extract(evidence, '$.rule') END "
        "FROM feedback_events"
    ):
        counts = rows.setdefault(f"{src} {sig}" + (f" ({rule})" if rule else ""), [0, 0])
        counts[eid in later] += 1
    files = {e.id: set(anchor_files(e.context.files_modified, e.project_path)) for e in episodes}
    changed: dict[str, set[str]] = {}
    for e in episodes:
        changed.setdefault(e.session_id or "", set()).update(files[e.id])
    pairs: dict[str, int] = {}
    for sid, eid, used in mem.db.query(
        "SELECT session_id, episode_id, MAX(COALESCE(used, 0)) FROM injections GROUP BY session_id, episode_id"
    ):
        touched = "changed" if files.get(eid, set()) & changed.get(sid, set()) else "did not change"
        verdict, later_too = "used" if used else "ignored", "" if eid in later else "not "
        key = f"{verdict}, session {touched} its files, {later_too}relevant later"
        pairs[key] = pairs.get(key, 0) + 1
    shown = {e for (e,) in mem.db.query("SELECT DISTINCT episode_id FROM injections")}
    used = {e for (e,) in mem.db.query("SELECT DISTINCT episode_id FROM injections WHERE used = 1")}
    return {
        "episodes relevant later": f"{len(later)} of {len(episodes)}",
        "of them injected at least once / judged used at least once": f"{len(later & shown)} / {len(later & used)}",
        "evidence rows [not relevant later, relevant later]": rows,
        "injected (session, episode) pairs": dict(sorted(pairs.items())),
    }


def later_case_id(session_id: str, n: int) -> str:
    """The case id of a session's n-th later prompt; `session_of` reads the session back."""
    return f"{session_id}#{n}"


def session_of(case_id: str) -> str:
    """The session a case belongs to: the case id itself for a first prompt (`later_case_id`)."""
    return case_id.split("#")[0]


def later_prompts(base: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each case's session's later real prompts as cases of their own, with the same relevant episodes (those
    that changed a file the session changed): several times more queries than first prompts alone."""
    return [
        {**c, "session_id": later_case_id(c["session_id"], n), "prompt": text, "branch": record_branch(record)}
        for c in cases
        for n, (text, record) in enumerate(prompt_records(base / "sessions" / f"{c['session_id']}.jsonl"))
        if n > 0
    ]


def replay(
    data: Path,
    arm: str,
    limit: int | None,
    keep: Path | None = None,
    split: tuple[float, float] = (PAST_SHARE, 1.0),
    every_prompt: bool = False,
    oracle: bool = False,
    explain_mode: str = "hybrid",
    as_votes: bool = False,
) -> dict[str, dict[str, Any]]:
    """One arm's replay and its figures; with `oracle` (on arm only), also the oracle arm's, measured on the same
    store once `oracle_verdicts` has rewritten its verdicts (so both arms made the very same injections). The off
    arm always brings the none arm too: its own store measured `without_links`, one more retrieval pass. With
    `as_votes`, the on (and oracle) store is measured again `as_explicit`."""
    base = data / "entire-cli"
    rows = load_sessions(base / "sessions.tsv")
    cut = round(len(rows) * split[0])
    rows = rows[: round(len(rows) * split[1])]
    past, future = rows[:cut], rows[cut:][:limit]
    mapper = PathMap.of_sessions(rows)
    started = time.perf_counter()
    out: dict[str, dict[str, Any]] = {}
    with sandbox(f"replay-{arm}") as box, Memory() as mem:
        prompts_asked = 0
        for i, r in enumerate(past, 1):
            path = base / "sessions" / f"{r['session_id']}.jsonl"
            if arm == "on":
                prompts_asked += inject_session(mem, box, r["session_id"], path)
            capture_and_learn(mem, path, project=str(box.repo))
            if i % 10 == 0:
                log(f"[{arm}] {i}/{len(past)} sessions replayed ({time.perf_counter() - started:.0f} s)")
        project_id = box.project_id(mem)
        episodes = list(mem.store.iter_episodes(project_id))
        cases = [c for c in future_cases(base, future, episodes, mapper) if c["relevant"]]
        if every_prompt:
            cases += later_prompts(base, cases)

        def measure(name: str) -> dict[str, Any]:
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)  # VACUUM INTO cannot open a file in a missing folder
                mem.db.execute("VACUUM INTO ?", (str(keep / f"{name}.db"),))
            figures = retrieval_figures(mem, project_id, cases, box.repo)
            return {
                "past": len(past),
                "future": len(future),
                "episodes": len(episodes),
                "prompts_asked": prompts_asked,
                "evidence": evidence_profile(mem),
                "queries": len(cases),
                "outcome_link_weight": mem.config.retrieval.outcome_link_weight,
                "retrieval": figures,
                "cases": {
                    c["session_id"]: {"ranks": c["ranks"], "top": top_hits(mem, project_id, c, explain_mode)}
                    for c in cases
                },
                "diagnosis": evidence_vs_relevance(mem, episodes, cases),
                "seconds": round(time.perf_counter() - started, 1),
            }

        out[arm] = measure(arm)
        if arm == "off":
            with without_links(mem):
                out["none"] = measure("none")
        if as_votes and arm == "on":
            with as_explicit(mem):
                out["on-votes"] = measure("on-votes")
        if oracle and arm == "on":
            files_of = {e.id: {mapper(f) for f in e.context.files_modified} for e in episodes}
            session_files = {r["session_id"]: set(split_list(r["files_modified"])) for r in past}
            verdicts = oracle_verdicts(mem, session_files, files_of)
            out["oracle"] = measure("oracle") | {"oracle_verdicts": verdicts}
            if as_votes:
                with as_explicit(mem):
                    out["oracle-votes"] = measure("oracle-votes")
    return out


def lift_interval(
    a: dict[str, int | None], b: dict[str, int | None], draws: int = 2000, seed: int = 16
) -> tuple[float, float, int, int]:
    """The 95 % interval of the MRR@10 lift a - b (ranks per case id) by a paired bootstrap over sessions, and how
    many queries went up and down. A session's later prompts (`sid#n`) share its relevant episodes, so they are
    drawn together, not as independent queries. With 24 first prompts one query moving one rank is a lift of
    0.02-0.04: the interval says whether a lift is more than that."""
    diffs: dict[str, list[float]] = {}
    for sid, rank in a.items():
        diffs.setdefault(session_of(sid), []).append(reciprocal(rank) - reciprocal(b[sid]))
    groups = list(diffs.values())
    rng = random.Random(seed)
    means = []
    for _ in range(draws):
        drawn = [rng.choice(groups) for _ in groups]
        means.append(sum(map(sum, drawn)) / sum(map(len, drawn)))
    means.sort()
    flat = [d for g in groups for d in g]
    return means[int(0.025 * draws)], means[int(0.975 * draws) - 1], sum(d > 0 for d in flat), sum(d < 0 for d in flat)


def print_report(r: dict[str, Any]) -> None:
    c = r["code"]
    print(f"code: {c['package']}" + (f" @ {c['commit'][:12]}{' (dirty)' if c['dirty'] else ''}" if c["commit"] else ""))
    arms = r["arms"]
    first = next(iter(arms.values()))
    print(
        f"== learning replay, entire-cli: {first['past']} past sessions replayed in time order, "
        f"{first['queries']} future prompts with a relevant past episode"
    )
    for arm, a in arms.items():
        print(
            f"[{arm}] {a['episodes']} episodes, {a['prompts_asked']} prompts asked, {a['seconds']:.0f} s; "
            f"evidence: {json.dumps(a['evidence'])}"
        )
    later = any(session_of(sid) != sid for sid in first["cases"])
    views = {"every prompt": lambda sid: True, "later prompts": lambda sid: session_of(sid) != sid} if later else {}
    for view, keep in {"first prompts": lambda sid: session_of(sid) == sid, **views}.items():
        figures = {
            arm: {
                m: rank_metrics([c["ranks"][m] for sid, c in a["cases"].items() if keep(sid)]) for m in a["retrieval"]
            }
            for arm, a in arms.items()
        }
        lifts = [(arm, base) for base in BASES if base in arms for arm in arms if arm not in (base, "none")]
        n = sum(1 for sid in first["cases"] if keep(sid))
        print(
            f"\n{view + f' ({n})':<20}"
            + "".join(f"{arm + ' hit@5':>13}{arm + ' MRR':>11}" for arm in arms)
            + "".join(f"{arm + ' - ' + base:>15}" for arm, base in lifts)
        )
        for m in first["retrieval"]:
            line = f"{m:<20}" + "".join(f"{f[m]['hit@5']:>13.3f}{f[m]['mrr@10']:>11.3f}" for f in figures.values())
            line += "".join(f"{figures[a][m]['mrr@10'] - figures[b][m]['mrr@10']:>+15.3f}" for a, b in lifts)
            if m == "hybrid" and ("on", "off") in lifts and view == "first prompts":
                met = figures["on"][m]["mrr@10"] - figures["off"][m]["mrr@10"] >= GOAL_LIFT
                line += f"   goal >= +{GOAL_LIFT:.2f} {'met' if met else 'NOT met'}"
            print(line)
        for a, b in lifts:
            ranks = [{sid: c["ranks"]["hybrid"] for sid, c in arms[x]["cases"].items() if keep(sid)} for x in (a, b)]
            lo, hi, up, down = lift_interval(*ranks)
            print(
                f"hybrid {a} - {b}: 95 % interval {lo:+.3f} to {hi:+.3f} (paired bootstrap over sessions); "
                f"{up} queries up, {down} down"
            )


def explain(r: dict[str, Any], mode: str) -> None:
    """Per query, the best relevant episode's rank in `mode` off -> on, and every top-10 episode whose rank moved,
    with the evidence that moved it; then where each arm's evidence landed."""
    off, on = r["arms"]["off"], r["arms"]["on"]
    print(f"\n== explain ({mode}): best relevant rank off -> on; moved episodes with their evidence (on arm)")
    for sid, c_on in on["cases"].items():
        c_off = off["cases"][sid]
        print(f"{sid[:8]}  {c_off['ranks'][mode]} -> {c_on['ranks'][mode]}")
        was = {h["key"]: (i, h) for i, h in enumerate(c_off["top"], 1)}
        now = {h["key"]: (i, h) for i, h in enumerate(c_on["top"], 1)}
        for key in dict.fromkeys([*now, *was]):
            (a, ha), (b, hb) = was.get(key, (None, None)), now.get(key, (None, None))
            if a == b:
                continue
            h = hb or ha
            assert h is not None
            sal = f"{ha['salience'] if ha else '-'} -> {hb['salience'] if hb else '-'}"
            qe = f"{ha.get('query_factor', '-') if ha else '-'} -> {hb.get('query_factor', '-') if hb else '-'}"
            print(
                f"   {'R' if h['relevant'] else ' '} {a or '>10'} -> {b or '>10'}  rel {h['relevance']:.3f}  "
                f"salience {sal}  query factor {qe}  {json.dumps(hb['evidence'] if hb else 'not in the on top 10')}"
            )
    for arm, a in r["arms"].items():
        print(f"\n[{arm}] {json.dumps(a['diagnosis'], indent=1)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="folder holding entire-cli/")
    ap.add_argument("--json", type=Path, help="write every figure (and each query's ranks per arm) here")
    ap.add_argument("--limit", type=int, help="use only the first N future sessions (a quick run)")
    ap.add_argument("--arms", default=",".join(ARMS), help="which arms to run (off, on)")
    ap.add_argument("--keep", type=Path, help="keep each arm's database here (<arm>.db) for inspection")
    add_split_option(ap, "replay")
    add_set_option(ap)
    ap.add_argument("--explain", action="store_true", help="per query, which evidence moved which episode")
    ap.add_argument(
        "--explain-mode",
        choices=MODES,
        default="hybrid",
        help="the retrieval mode whose top 10 the JSON keeps per query and --explain prints (default hybrid)",
    )
    ap.add_argument(
        "--every-prompt",
        action="store_true",
        help="also query with each future session's later prompts (same relevant episodes), not only its first",
    )
    ap.add_argument(
        "--oracle",
        action="store_true",
        help="also the oracle arm: the on arm's injections with perfect verdicts (the use detector's ceiling)",
    )
    ap.add_argument(
        "--as-votes",
        action="store_true",
        help="also measure the on (and oracle) store with its verdicts relabelled as explicit votes (on-votes, "
        "oracle-votes): what explicit votes' reach does with votes that right or that wrong",
    )
    a = ap.parse_args()
    use_settings(a.set)
    arms = [x.strip() for x in a.arms.split(",") if x.strip()]
    if not set(arms) <= set(ARMS):
        raise SystemExit(f"--arms takes {', '.join(ARMS)}")
    report: dict[str, Any] = {
        "code": code_state(),
        "arms": {
            name: figures
            for arm in arms
            for name, figures in replay(
                a.data, arm, a.limit, a.keep, a.split, a.every_prompt, a.oracle, a.explain_mode, a.as_votes
            ).items()
        },
    }
    print_report(report)
    if a.explain and {"off", "on"} <= set(arms):
        explain(report, a.explain_mode)
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
