"""What comes back after a real compaction (issue #38): the compacted sessions of the real projects replayed through
the real hook, before, at and after their compaction.

    python evals/compaction_replay.py [--data DIR] [--json PATH] [--after N]

Not a test: it reads the shared data set (`$TEMPERA_SHARED_DIR/data/transcripts`) and writes only to temporary
directories (`evals/real_sessions.py`'s sandbox; `~/.tempera` is never touched).

A compaction is a `compact_boundary` system record followed by the user record with `isCompactSummary: true`
(Claude Code writes both). For each project (entire-cli, cipher-box), the compacted sessions in `first_ts` order:
the project's sessions that started before one are imported (added to those imported for the earlier ones; the
daemon is stopped meanwhile), then the session is replayed with its own id through the installed hooks: its real
prompts up to the compaction (UserPromptSubmit, on the branch Claude Code recorded), SessionStart `compact` with
`transcript_path` at a copy of the transcript cut where the hook read it, then up to `--after` prompts after it.

Where the cut is: Claude Code runs the SessionStart `compact` hooks before it writes the boundary and the summary
(every `hook_progress` record of a compact SessionStart in these sessions is older than the summary record), so the
file the hook reads ends before the boundary: that cut is the replay's. The same call is also made, in a session of
its own (whose log is as empty as the compaction leaves the replayed one), on a copy cut right after the summary:
what a Claude Code that wrote the summary first would give.

Per compaction: the items shown before it (episode lines by their id, other lines by their text), at the compact
SessionStart (re-shown: shown before; new: not), and after it; characters; and the episode precision of
`injection_quality.py` against the files the session changed after the compaction (Edit/Write/MultiEdit/NotebookEdit
tool calls after the summary, normalised to repo-relative paths with `real_sessions.PathMap`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from injection_quality import EPISODE_ID, PROJECTS, items, share, split_files  # noqa: E402
from real_sessions import (  # noqa: E402  (evals/ is not a package)
    MIN_PROMPT_CHARS,
    SHARED,
    Daemon,
    PathMap,
    code_state,
    import_files,
    load_sessions,
    on_branch,
    prompt_text,
    record_branch,
    sandbox,
)

from tempera.core.memory import Memory  # noqa: E402
from tempera.transcripts.inprogress import transcript_work  # noqa: E402

AFTER = 2
EDITS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
CUTS = ("hook", "summary")  # before the boundary (the file the hook read), right after the summary


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Compaction:
    boundary: int  # line numbers in the transcript
    summary: int
    branch: str
    before: list[tuple[str, str]] = field(default_factory=list)  # (prompt, branch) since the previous compaction
    after: list[tuple[str, str]] = field(default_factory=list)
    files_after: set[str] = field(default_factory=set)


def edited(record: dict[str, Any]) -> list[str]:
    """The files an assistant record's tool calls change."""
    msg = record.get("message")
    content = msg.get("content") if record.get("type") == "assistant" and isinstance(msg, dict) else None
    return [
        str(b["input"].get("file_path") or b["input"].get("notebook_path") or "")
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and b.get("name") in EDITS and isinstance(b.get("input"), dict)
    ]


def compactions(lines: list[str]) -> list[Compaction]:
    """The transcript's compactions, each with the real prompts before it (since the previous one), the first ones
    after it (before the next), and the files changed after it."""
    found: list[Compaction] = []
    prompts: list[tuple[int, str, str]] = []
    boundary: tuple[int, str] | None = None
    changed: list[tuple[int, str]] = []
    for n, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("subtype") == "compact_boundary":
            boundary = (n, record_branch(record))
        elif record.get("isCompactSummary") and boundary is not None:
            found.append(Compaction(boundary[0], n, boundary[1]))
            boundary = None
        text = prompt_text(record)
        if len(text) >= MIN_PROMPT_CHARS:
            prompts.append((n, text, record_branch(record)))
        changed += [(n, f) for f in edited(record) if f]
    for i, c in enumerate(found):
        start = found[i - 1].summary if i else -1
        end = found[i + 1].boundary if i + 1 < len(found) else len(lines)
        c.before = [(t, b) for n, t, b in prompts if start < n < c.boundary]
        c.after = [(t, b) for n, t, b in prompts if c.summary < n < end]
        c.files_after = {f for n, f in changed if n > c.summary}
    return found


def keys(context: str) -> dict[str, dict[str, str]]:
    """An injection's items by identity: an episode line by its id, any other line by its text."""
    out = {}
    for it in items(context):
        ids = EPISODE_ID.findall(it["text"])
        out[f"episode:{ids[0]}" if ids else f"{it['channel']}:{it['text']}"] = it
    return out


def relevant(item_key: str, files_of: dict[str, set[str]], files: set[str]) -> bool:
    """An episode item whose episode changed a file of `files` (injection_quality.py's precision)."""
    prefix = item_key.removeprefix("episode:")
    return any(e.startswith(prefix) and files_of[e] & files for e in files_of)


def replay(
    daemon: Daemon, sid: str, path: Path, lines: list[str], cs: list[Compaction], after: int, tmp: Path
) -> list[dict[str, Any]]:
    """One compacted session through the hooks; a case per compaction."""
    repo = daemon.box.repo
    cases = []
    shown: dict[str, dict[str, str]] = {}  # everything shown in the session so far
    for i, c in enumerate(cs):
        before_chars = 0
        before: dict[str, dict[str, str]] = {}
        for text, branch in c.before:
            on_branch(repo, branch)
            got, _ = daemon.prompt(text, session_id=sid)
            before_chars += len(got)
            before.update(keys(got))
        shown.update(before)
        at: dict[str, Any] = {}
        for cut in CUTS:
            copy = tmp / f"{sid}-{i}-{cut}.jsonl"
            copy.write_text("".join(lines[: c.boundary if cut == "hook" else c.summary + 1]))
            on_branch(repo, c.branch)
            # the summary cut in a session of its own: the replayed session's log sees only the hook cut's call
            own = sid if cut == "hook" else str(uuid.uuid4())
            at[cut] = {"query": transcript_work(str(copy))}
            at[cut]["context"], at[cut]["ms"] = daemon.hook(
                "SessionStart", own, source="compact", transcript_path=str(copy)
            )
        after_ctx = []
        for text, branch in c.after[:after]:
            on_branch(repo, branch)
            after_ctx.append({"prompt": text, "context": daemon.prompt(text, session_id=sid)[0]})
        for a in after_ctx:
            shown.update(keys(a["context"]))
        cases.append(
            {
                "session_id": sid,
                "compaction": i,
                "transcript": str(path),
                "boundary_line": c.boundary,
                "summary": json.loads(lines[c.summary])["message"]["content"],
                "prompts_before": len(c.before),
                "before": {"items": sorted(before), "chars": before_chars},
                "shown_earlier": sorted(shown.keys() - before.keys()),
                "at": at,
                "after": after_ctx,
                "files_after": sorted(c.files_after),
            }
        )
        shown.update(keys(at["hook"]["context"]))
    return cases


def project_run(data: Path, name: str, after: int) -> dict[str, Any]:
    """Each compacted session of the project, after importing the sessions that started before it."""
    base = data / name
    rows = load_sessions(base / "sessions.tsv")
    mapper = PathMap(
        {f for r in rows for f in split_files(r["files_modified"])},
        {c for r in rows for c in r.get("cwds", "").split("|") if c},
    )
    compacted = []
    for r in rows:
        path = base / "sessions" / f"{r['session_id']}.jsonl"
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        if cs := compactions(lines):
            compacted.append((r, path, lines, cs))
    log(f"{name}: {len(rows)} sessions, {len(compacted)} with a compaction")
    cases: list[dict[str, Any]] = []
    imported: set[str] = set()
    with sandbox(f"compact-{name}") as box, tempfile.TemporaryDirectory() as tmp:
        for r, path, lines, cs in compacted:
            earlier = [x for x in rows if x["first_ts"] < r["first_ts"] and x["session_id"] not in imported]
            if earlier:
                import_files(box, [base / "sessions" / f"{x['session_id']}.jsonl" for x in earlier])
                imported |= {x["session_id"] for x in earlier}
            with Memory() as mem:
                files_of = {e.id: {mapper(f) for f in e.context.files_modified} for e in mem.store.iter_episodes(None)}
            with Daemon(box) as daemon:
                got = replay(daemon, r["session_id"], path, lines, cs, after, Path(tmp))
            for c in got:
                files = {mapper(f) for f in c["files_after"]}
                c["files_after"] = sorted(files)
                c["project"], c["imported_sessions"], c["episodes"] = name, len(imported), len(files_of)
                for ctx in [*c["at"].values(), *c["after"]]:
                    ctx["items"] = [
                        {**it, "key": k, "relevant": relevant(k, files_of, files) if k.startswith("episode:") else None}
                        for k, it in keys(ctx["context"]).items()
                    ]
            cases += got
    return {"sessions": len(rows), "compacted_sessions": len(compacted), "cases": cases}


# -- figures -------------------------------------------------------------------------------------------------------
def precision(its: list[dict[str, Any]]) -> float | None:
    eps = [it["relevant"] for it in its if it["relevant"] is not None]
    return share(eps) if eps else None


def figures(cases: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "compactions": len(cases),
        "before_items": sum(len(c["before"]["items"]) for c in cases),
        "before_chars": sum(c["before"]["chars"] for c in cases),
    }
    for cut in CUTS:
        ats = [c["at"][cut] for c in cases]
        its = [it for a in ats for it in a["items"]]
        earlier = [set(c["before"]["items"]) | set(c["shown_earlier"]) for c in cases]
        out[cut] = {
            "injected_share": share([bool(a["context"]) for a in ats]),
            "items": len(its),
            "reshown": sum(it["key"] in e for a, e in zip(ats, earlier) for it in a["items"]),
            "new": sum(it["key"] not in e for a, e in zip(ats, earlier) for it in a["items"]),
            "chars": sum(len(a["context"]) for a in ats),
            "episode_precision": precision(its),
            "with_files_after": share([bool(c["files_after"]) for c in cases]),
        }
    afters = [a for c in cases for a in c["after"]]
    its = [it for a in afters for it in a["items"]]
    out["after"] = {
        "prompts": len(afters),
        "injected_share": share([bool(a["context"]) for a in afters]),
        "items": len(its),
        "chars": sum(len(a["context"]) for a in afters),
        "episode_precision": precision(its),
    }
    return out


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def print_report(r: dict[str, Any]) -> None:
    c = r["code"]
    print(f"code: {c['package']}" + (f" @ {c['commit'][:12]}{' (dirty)' if c['dirty'] else ''}" if c["commit"] else ""))
    print(f"{r['seconds']:.0f} s in all")
    head = f"{'project':<12}{'phase':<28}{'calls':>6}{'inject':>8}{'items':>7}{'reshown':>9}{'new':>5}{'chars':>7}"
    print(head + f"{'ep.prec':>9}")
    for name, p in r["projects"].items():
        f = p["figures"]
        print(
            f"{name:<12}{'before (prompts)':<28}{'':>6}{'':>8}{f['before_items']:>7}{'':>9}{'':>5}"
            f"{f['before_chars']:>7}{'':>9}"
        )
        for cut, label in zip(CUTS, ("compact (file as hook read)", "compact (summary written)")):
            g = f[cut]
            print(
                f"{'':<12}{label:<28}{f['compactions']:>6}{g['injected_share']:>8.3f}{g['items']:>7}{g['reshown']:>9}"
                f"{g['new']:>5}{g['chars']:>7}{fmt(g['episode_precision']):>9}"
            )
        a = f["after"]
        print(
            f"{'':<12}{'after (next prompts)':<28}{a['prompts']:>6}{a['injected_share']:>8.3f}{a['items']:>7}"
            f"{'':>9}{'':>5}{a['chars']:>7}{fmt(a['episode_precision']):>9}"
        )
        print(f"{'':<12}({p['compacted_sessions']} of {p['sessions']} sessions compacted)")
    print("\nper compaction (hook cut): session, prompts before, items before / at compact (reshown) / after")
    for name, p in r["projects"].items():
        for c in p["cases"]:
            at = c["at"]["hook"]
            earlier = set(c["before"]["items"]) | set(c["shown_earlier"])
            print(
                f"  {name:<11}{c['session_id'][:8]}#{c['compaction']}  {c['prompts_before']:>3} prompts  "
                f"{len(c['before']['items']):>2} / {len(at['items']):>2} "
                f"({sum(it['key'] in earlier for it in at['items'])}) / "
                f"{sum(len(a['items']) for a in c['after'])}   query: {' '.join(at['query'].split())[:90]!r}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="the shared transcripts")
    ap.add_argument("--json", type=Path, help="write the figures and every case (with the injected texts) here")
    ap.add_argument("--after", type=int, default=AFTER, help=f"prompts replayed after each compaction ({AFTER})")
    a = ap.parse_args()
    started = time.perf_counter()
    runs = {name: project_run(a.data, name, a.after) for name in PROJECTS}
    projects = {name: {**run, "figures": figures(run["cases"])} for name, run in runs.items()}
    report = {"code": code_state(), "projects": projects, "seconds": round(time.perf_counter() - started, 1)}
    print_report(report)
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
