"""What the agent reads (issue #37): later sessions of real projects replayed through the real hook, and each
channel of what it injected measured line by line.

    python evals/injection_quality.py [--data DIR] [--json PATH] [--cases PATH] [--labels PATH] [--later N]
                                      [--limit N] [--projects NAMES]
    python evals/injection_quality.py report CASES.jsonl [--labels PATH]
    python evals/injection_quality.py packet CASES.jsonl [CASES.jsonl ...] --out DIR

Not a test: it reads the shared data set (`$TEMPERA_SHARED_DIR/data/transcripts`, default `../shared/...`) and
writes only to temporary directories (`evals/real_sessions.py`'s sandbox: its own data dir, Claude config dir and
git repository; `~/.tempera` is never touched).

Multi-session projects (`entire-cli`, Go; `cipher-box`, TypeScript/Rust): sessions sorted by `first_ts`, the
earlier 70 % imported with `tempera import`, the warm daemon started, and for each later session its first real
prompt and up to `--later` more go through the installed UserPromptSubmit command with that session's id (so
"never the same item twice in a session" holds as it would live), on the branch Claude Code recorded; and once
per later session a SessionStart in a fresh session on its branch (its brief and episodes, apart from the
prompts'; judged as the channel "start episodes" against that session). Then
unrelated prompts (`real_sessions.UNRELATED`) and content-free ones ("ok", "continue") in fresh sessions. The
small sets (claude-code-viewer, claude-code-log, spotter) are imported whole into one more sandbox and asked the
unrelated and content-free prompts only (they have no later sessions).

Each injection is split into items per channel by its headers (`inject/render.py`): brief, facts, episodes (one
item a `- ` line). Per channel and project: items and characters per prompt; for episodes, the share of items
whose episode changed a file the session went on to change (precision), the share of first prompts with at
least one such item, retrieval's hit@3 (the hook's hybrid search held one in its top 3) and the injection recall
(of those prompts, the share whose injection showed one); episode lines whose outcome label contradicts their own
text, and lines with an empty quote (a bare command as tool output, an interim remark as "agent said", a quote of
under three words); fact lines that are fragments, and the share of sessions the most shown fact line reached;
silence and lines on unrelated and content-free prompts. These checks are the eval's own, deliberately
independent of the code that writes the text.

Judged precision (`../shared/JUDGING.md`): `--labels` reads labelled items (JSONL, one per item: session_id,
item, label USEFUL/MARGINAL/NOISE/MISLEADING, outcome yes/no/cant_tell; an item's first row counts, a second row is
a second judge's, for agreement) and reports, per channel, the labelled share
and the shares of each label over the items it has a label for. `--cases` writes every replayed prompt with its
items for judging; `packet` merges the cases of several runs (e.g. before and after a change) into one blind
packet per session: the union of the items, shuffled, with no word of which run showed which.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_sessions import (  # noqa: E402  (evals/ is not a package)
    SHARED,
    UNRELATED,
    Daemon,
    PathMap,
    case_search,
    code_state,
    import_files,
    load_sessions,
    on_branch,
    prompt_records,
    prompt_text,
    record_branch,
    sandbox,
)

from tempera.core.marker import CLOSE, OPEN  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402

PROJECTS = ("entire-cli", "cipher-box")
SMALL = ("claude-code-viewer", "claude-code-log", "spotter")
PAST_SHARE = 0.7
LATER = 2
TOP = 3  # retrieval's top the injection recall is measured against
CONTENT_FREE = (
    "ok",
    "continue",
    "yes",
    "yes please",
    "thanks!",
    "go ahead",
    "sounds good, do it",
    "next",
    "keep going",
    "lgtm",
)
CHANNELS = {"Tempera brief": "brief", "Tempera facts": "facts", "Tempera memory": "episodes"}
LABELS = ("USEFUL", "MARGINAL", "NOISE", "MISLEADING")
LABELS_FILE = Path(__file__).resolve().parent / "fixtures" / "injection_judged.jsonl"
EPISODE_ID = re.compile(r"\bid ([0-9a-f]{8})\b")
BRACKET = re.compile(r"^- \[([^\]]*)\]")
QUOTE = re.compile(r'(?:^|; |\] )([a-z][a-z ]+): "([^"]*)"')
# Text that reports the work ended well or badly, for outcome labels that contradict it.
PASSED = re.compile(
    r"\ball (?:\d+ )?(?:tests?|checks?|specs?) (?:now )?pass|\btests? (?:now |all |are |are all )?pass(?:ed|ing|es)?\b"
    r"|\b\d+ passed\b(?!.*\bfailed)|\b(?:build|lint|typecheck)\w* (?:is )?(?:clean|passes|succeeds|succeeded)\b"
    r"|\ball (?:\w+ )?builds? pass|\b(?:it's|is|now) working\b|\bnow works\b|\bsuccessfully\b|\bTests passed: ",
    re.I,
)
FAILED = re.compile(r"\btests? (?:still )?fail(?:ed|ing|s)?\b|\bTests failed: |\b[1-9]\d* failed\b", re.I)
INTERIM = re.compile(
    r"^(?:now,? |next,? |first,? |okay,? |ok,? )?(?:let me|let's|i'll|i will|i need to|i have|i now have|i've got|"
    r"i can see|i see|i understand|looking at)\b|^(?:perfect|great|good|excellent|okay|ok|alright|done)[.!]?$|:\.?$",
    re.I,
)
BARE_COMMAND = re.compile(r"^[\w./@~-]+(?: [\w./@:=~-]+){0,6}\.?$")
UNBALANCED = (("(", ")"), ("[", "]"), ("{", "}"))
FRAGMENT_START = re.compile(r"^(?:and|or|but|which|that|because|so|then|for|with|to|of|in)\b", re.I)
HEDGE = re.compile(r"\bI think\b|\bmaybe\b|\bperhaps\b|\bprobably\b", re.I)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- reading an injection ------------------------------------------------------------------------------------------
def items(context: str) -> list[dict[str, str]]:
    """The injection's items as {channel, text}: each `- ` line under a brief, facts or memory header."""
    body = context.replace(OPEN, "").replace(CLOSE, "")
    out = []
    for block in body.strip().split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        channel = next((c for h, c in CHANNELS.items() if lines[0].startswith(h)), "other")
        out += [{"channel": channel, "text": ln} for ln in lines[1:] if ln.startswith("- ")]
    return out


def quotes(line: str) -> list[tuple[str, str]]:
    """The (source, text) parts an episode line quotes."""
    return QUOTE.findall(line)


def outcome_label(line: str) -> str:
    m = BRACKET.match(line)
    return m.group(1).split(", ")[1] if m and ", " in m.group(1) else ""


def contradicts(line: str) -> bool:
    """An outcome label its own line contradicts: failure/partial beside a report of passing, or success beside
    a report of failing."""
    label, text = outcome_label(line), " ".join(t for _, t in quotes(line))
    if label in ("failure", "partial"):
        return bool(PASSED.search(text)) and not FAILED.search(text)
    if label == "success":
        return bool(FAILED.search(text)) and not PASSED.search(text)
    return False


def empty_quote(source: str, text: str) -> bool:
    """A quoted part that tells the agent nothing: a bare command as output, an interim remark as what the agent
    said, or fewer than three words."""
    text = text.strip()
    if len(text.split()) < 3 and source != "user asked" and not re.search(r"\d", text):
        return True
    if source == "tool output" and BARE_COMMAND.match(text) and not re.search(r"\d+ (?:passed|failed|tests?)", text):
        return True
    return source == "agent said" and bool(INTERIM.search(text))


def fact_text(line: str) -> str:
    """A fact line's statement, without its kind and valid time."""
    return line.split("): ", 1)[1] if "): " in line else line[2:]


def fragment(line: str) -> bool:
    """A fact line that is no statement: unbalanced brackets, a clause that ends on ':' or starts mid-sentence,
    a hedge, or fewer than three words."""
    text = fact_text(line).rstrip(".").strip()
    if any(text.count(a) != text.count(b) for a, b in UNBALANCED) or text.count('"') % 2:
        return True
    return (
        text.endswith((":", "(", ",", "-"))
        or len(text.split()) < 3
        or bool(FRAGMENT_START.match(text))
        or bool(HEDGE.search(text))
    )


# -- replay --------------------------------------------------------------------------------------------------------
def split_files(cell: str) -> set[str]:
    """sessions.tsv's files_modified: `|`-separated (entire-cli) or comma-separated (cipher-box)."""
    return {f for f in re.split(r"[|,]", cell) if f and f != "0"}


def session_prompts(path: Path, later: int) -> list[tuple[str, str]]:
    """The session's first real prompt and up to `later` more, each with its recorded branch."""
    out = []
    for text, record in prompt_records(path):
        out.append((text, record_branch(record)))
        if len(out) > later:
            break
    return out


def ask(daemon: Daemon, text: str, session_id: str | None = None) -> str:
    context, _ = daemon.prompt(text, session_id=session_id)
    return context


def silence(daemon: Daemon, repo: Path, branches: list[str]) -> dict[str, Any]:
    """Unrelated and content-free prompts, each in a fresh session, on the later sessions' branches in turn."""
    out: dict[str, Any] = {}
    for name, prompts in (("unrelated", UNRELATED), ("content_free", CONTENT_FREE)):
        got = []
        for i, text in enumerate(prompts):
            if branches:
                on_branch(repo, branches[i % len(branches)])
            got.append(ask(daemon, text))
        lines = Counter(it["channel"] for c in got for it in items(c))
        out[name] = {"prompts": len(got), "silent": share([not c for c in got]), "lines": dict(lines)}
    return out


def project_run(data: Path, name: str, later: int, limit: int | None) -> dict[str, Any]:
    """Import a project's earlier sessions, replay the later ones' prompts; the cases and the per-channel figures.
    Before the daemon starts, each prompt's hybrid top 3 through the hook's own search (`real_sessions.case_search`,
    on its branch): whether retrieval held an episode that changed a file the session changed, for the injection
    recall (did the hook show one when retrieval had one)."""
    base = data / name
    rows = load_sessions(base / "sessions.tsv")
    cut = round(len(rows) * PAST_SHARE)
    past, future = rows[:cut], rows[cut:][:limit]
    log(f"{name}: {len(rows)} sessions, {len(past)} past / {len(future)} later")
    mapper = PathMap({f for r in rows for f in split_files(r["files_modified"])}, set())
    cases = [
        {
            "project": name,
            "session_id": r["session_id"],
            "prompt_no": n,
            "prompt": text,
            "branch": branch,
            "files_modified": sorted(split_files(r["files_modified"])),
            "transcript": str(base / "sessions" / f"{r['session_id']}.jsonl"),
        }
        for r in future
        for n, (text, branch) in enumerate(session_prompts(base / "sessions" / f"{r['session_id']}.jsonl", later))
    ]
    with sandbox(name) as box:
        imported = import_files(box, [base / "sessions" / f"{r['session_id']}.jsonl" for r in past])
        with Memory() as mem:
            files_of = {e.id: {mapper(f) for f in e.context.files_modified} for e in mem.store.iter_episodes(None)}
            project_id = box.project_id(mem)
            for c in cases:
                top = case_search(mem, project_id, c, box.repo, TOP, "hybrid")
                c["top3_relevant_ids"] = [e for e in top if files_of[e] & set(c["files_modified"])]
                c["top3_relevant"] = bool(c["top3_relevant_ids"])

        def marked(its: list[dict[str, Any]], c: dict[str, Any]) -> list[dict[str, Any]]:
            """The items, each episode marked relevant when it changed a file the session changed."""
            for it in its:
                if it["channel"].endswith("episodes"):
                    it["relevant"] = any(
                        e.startswith(p) and files_of[e] & set(c["files_modified"])
                        for p in EPISODE_ID.findall(it["text"])
                        for e in files_of
                    )
            return its

        with Daemon(box) as daemon:
            for c in cases:
                on_branch(box.repo, c["branch"])
                c["context"] = ask(daemon, c["prompt"], session_id=c["session_id"])
                c["items"] = marked(items(c["context"]), c)
            quiet = silence(daemon, box.repo, [c["branch"] for c in cases if c["prompt_no"] == 0])
            for c in cases:  # each later session's start, on its branch, in a session of its own
                if c["prompt_no"] == 0:
                    on_branch(box.repo, c["branch"])
                    started = items(daemon.hook("SessionStart", None, source="startup")[0])
                    c["start_items"] = marked([{**it, "channel": "start " + it["channel"]} for it in started], c)
    starts = [c["start_items"] for c in cases if c["prompt_no"] == 0]
    return {"import": imported, "cases": cases, "silence": quiet, "session_start": start_figures(starts)}


def small_run(data: Path) -> dict[str, Any]:
    """The small sets imported whole into one sandbox; only unrelated and content-free prompts are asked."""
    files = sorted(f for name in SMALL for f in (data / name).glob("*.jsonl"))
    with sandbox("small") as box:
        imported = import_files(box, files)
        with Daemon(box) as daemon:
            quiet = silence(daemon, box.repo, [])
    return {"import": imported, "silence": quiet}


# -- figures -------------------------------------------------------------------------------------------------------
def share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 3) if flags else 0.0


def mean(xs: list[float]) -> float:
    return round(statistics.fmean(xs), 2) if xs else 0.0


def unshown_relevant(case: dict[str, Any], cases: list[dict[str, Any]]) -> bool:
    """Whether retrieval's top 3 for this prompt held a relevant episode its session had not been shown by an
    earlier prompt: the hook never shows an item twice in a session (the agent's context still holds it), so only
    those are the injection's to recall. Cases written before the ids were kept count as they did."""
    ids = case.get("top3_relevant_ids")
    if ids is None:
        return True
    shown = {
        i
        for c in cases
        if c["session_id"] == case["session_id"] and c["prompt_no"] < case["prompt_no"]
        for it in c["items"]
        for i in EPISODE_ID.findall(it["text"])
    }
    return any(e[:8] not in shown for e in ids)


def channel_figures(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Per channel: items and characters per prompt, and the channel's own checks."""
    out: dict[str, Any] = {"prompts": len(cases), "silent": share([not c["context"] for c in cases])}
    out["chars_median"] = statistics.median([len(c["context"]) for c in cases]) if cases else 0
    for ch in ("brief", "facts", "episodes"):
        per = [[it for it in c["items"] if it["channel"] == ch] for c in cases]
        lines = [it for p in per for it in p]
        fig: dict[str, Any] = {
            "items": len(lines),
            "items_per_prompt": mean([float(len(p)) for p in per]),
            "chars_per_prompt": mean([float(sum(len(it["text"]) + 1 for it in p)) for p in per]),
            "prompts_with_any": share([bool(p) for p in per]),
        }
        if ch == "episodes":
            firsts = [p for p, c in zip(per, cases) if c["prompt_no"] == 0]
            fig["precision"] = share([it["relevant"] for it in lines])
            held = [c for c in cases if c.get("top3_relevant")]
            fig["retrieval_hit@3"] = share([bool(c.get("top3_relevant")) for c in cases])
            fig["injection_recall"] = share(
                [any(it["relevant"] for it in c["items"] if it["channel"] == ch) for c in held]
            )
            unseen = [c for c in held if unshown_relevant(c, cases)]
            fig["injection_recall_unshown"] = share(
                [any(it["relevant"] for it in c["items"] if it["channel"] == ch) for c in unseen]
            )
            fig["held_unshown"] = len(unseen)
            fig["first_prompts_with_relevant"] = share([any(it["relevant"] for it in p) for p in firsts])
            fig["outcome_contradictions"] = sum(contradicts(it["text"]) for it in lines)
            fig["lines_with_empty_quote"] = share(
                [any(empty_quote(s, t) for s, t in quotes(it["text"])) for it in lines]
            )
            fig["outcomes"] = dict(Counter(outcome_label(it["text"]) for it in lines))
        if ch == "facts":
            fig["fragments"] = sum(fragment(it["text"]) for it in lines)
            fig["distinct"] = len({it["text"] for it in lines})
            by_session: dict[str, set[str]] = {}
            for c in cases:
                by_session.setdefault(c["session_id"], set()).update(
                    it["text"] for it in c["items"] if it["channel"] == "facts"
                )
            reach = Counter(t for texts in by_session.values() for t in texts)
            top = reach.most_common(1)
            fig["most_shown_session_share"] = round(top[0][1] / len(by_session), 3) if top and by_session else 0.0
            fig["lines_over_a_fifth"] = sum(n / len(by_session) > 0.2 for n in reach.values()) if by_session else 0
        out[ch] = fig
    return out


def start_figures(starts: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """SessionStart, once per later session on its branch (each a fresh session, apart from the prompts'): items
    per channel, the episodes' precision (changed a file the session changed), and the distinct brief lines."""
    out: dict[str, Any] = {"calls": len(starts), "silent": share([not s for s in starts])}
    for ch in ("brief", "episodes"):
        out[ch] = mean([float(sum(it["channel"] == "start " + ch for it in s)) for s in starts])
    shown = [it for s in starts for it in s if it["channel"] == "start episodes"]
    out["precision"] = share([bool(it.get("relevant")) for it in shown]) if shown else None
    out["brief_lines"] = sorted({it["text"] for s in starts for it in s if it["channel"] == "start brief"})
    return out


def item_key(session_id: str, text: str) -> tuple[str, str]:
    """An item as labels find it: its session and its text without the episode id (an import gives new ids)."""
    return session_id, EPISODE_ID.sub("id ?", text)


def judged(cases: list[dict[str, Any]], labels_path: Path) -> dict[str, Any]:
    """Judged shares per channel over the items a label exists for (keyed by session and item text)."""
    labels: dict[tuple[str, str], dict[str, Any]] = {}
    pairs = []  # (first label, a second judge's label) of the same item
    for line in labels_path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            key = item_key(row["session_id"], row["item"])
            if key in labels:
                pairs.append((labels[key]["label"], row["label"]))
            else:
                labels[key] = row
    out: dict[str, Any] = {"second_judge": {"items": len(pairs), "agree": share([a == b for a, b in pairs])}}
    firsts = [c for c in cases if c["prompt_no"] == 0]  # a judged case is a later session's first prompt
    for ch in ("brief", "facts", "episodes", "start episodes"):
        its = [
            item_key(c["session_id"], it["text"])
            for c in firsts
            for it in c["items"] + c.get("start_items", [])
            if it["channel"] == ch
        ]
        got = [labels[k] for k in its if k in labels]
        counts = Counter(r["label"] for r in got)
        fig: dict[str, Any] = {"items": len(its), "labelled": len(got)}
        fig.update({lab.lower(): share([r["label"] == lab for r in got]) for lab in LABELS})
        fig["precision"] = round((counts["USEFUL"] + counts["MARGINAL"]) / len(got), 3) if got else None
        if ch.endswith("episodes"):
            fig["outcome"] = dict(Counter(r.get("outcome", "cant_tell") for r in got))
        out[ch] = fig
    by_case = [[labels.get(item_key(c["session_id"], it["text"])) for it in c["items"]] for c in firsts]
    full = [ls for ls in by_case if ls and all(ls)]
    out["first_prompts_fully_labelled"] = len(full)
    out["first_prompts_with_useful"] = share([any(r["label"] == "USEFUL" for r in ls if r) for ls in full])
    return out


def print_report(r: dict[str, Any]) -> None:
    c = r["code"]
    print(f"code: {c['package']}" + (f" @ {c['commit'][:12]}{' (dirty)' if c['dirty'] else ''}" if c["commit"] else ""))
    for name, p in r["projects"].items():
        f = p["figures"]
        print(
            f"\n== {name}: {p['import']['sessions']} sessions imported ({p['import']['episodes']} episodes); "
            f"{f['prompts']} later prompts, silent {f['silent']:.3f}, median {f['chars_median']:.0f} chars"
        )
        print_channels(f)
        print_silence(p["silence"])
        st = p["session_start"]
        print(
            f"SessionStart ({st['calls']} new sessions, each on its branch): silent {st['silent']:.3f}; per call "
            f"{st['brief']:.2f} brief, {st['episodes']:.2f} episode items (precision "
            f"{'-' if st['precision'] is None else format(st['precision'], '.3f')}); brief lines: "
            f"{len(st['brief_lines'])}"
        )
        for line in st["brief_lines"]:
            print(f"  {line[:200]}")
        if "judged" in p:
            print_judged(p["judged"])
    s = r["small"]
    print(
        f"\n== small sets ({', '.join(SMALL)}): {s['import']['sessions']} transcripts, "
        f"{s['import']['episodes']} episodes"
    )
    print_silence(s["silence"])


def print_channels(f: dict[str, Any]) -> None:
    print(f"{'channel':<10}{'items':>7}{'/prompt':>9}{'chars/pr':>10}{'any':>7}")
    for ch in ("brief", "facts", "episodes"):
        g = f[ch]
        print(
            f"{ch:<10}{g['items']:>7}{g['items_per_prompt']:>9.2f}{g['chars_per_prompt']:>10.0f}"
            f"{g['prompts_with_any']:>7.3f}"
        )
    e, fa = f["episodes"], f["facts"]
    print(
        f"episodes: precision {e['precision']:.3f}; retrieval hit@3 {e['retrieval_hit@3']:.3f}, injection recall "
        f"{e['injection_recall']:.3f} of those ({e.get('injection_recall_unshown', 0):.3f} of the "
        f"{e.get('held_unshown', 0)} whose top 3 held one the session had not been shown); "
        "first prompts with a relevant one "
        f"{e['first_prompts_with_relevant']:.3f}; outcome contradictions {e['outcome_contradictions']}; "
        f"lines with an empty quote {e['lines_with_empty_quote']:.3f}; outcomes {e['outcomes']}"
    )
    print(
        f"facts: {fa['distinct']} distinct, fragments {fa['fragments']}; the most shown reached "
        f"{fa['most_shown_session_share']:.3f} of sessions; lines over a fifth {fa['lines_over_a_fifth']}"
    )


def print_silence(q: dict[str, Any]) -> None:
    for name, v in q.items():
        print(f"{name} prompts ({v['prompts']}): silent {v['silent']:.3f}; lines {v['lines'] or 0}")


def print_judged(j: dict[str, Any]) -> None:
    print(f"second judge: {j['second_judge']['items']} items, same label {j['second_judge']['agree']:.3f}")
    print(
        f"judged: {j['first_prompts_fully_labelled']} first prompts fully labelled, with a USEFUL item "
        f"{j['first_prompts_with_useful']:.3f}"
    )
    for ch in ("brief", "facts", "episodes", "start episodes"):
        g = j[ch]
        shares = " ".join(f"{lab.lower()} {g[lab.lower()]:.2f}" for lab in LABELS)
        prec = "-" if g["precision"] is None else f"{g['precision']:.3f}"
        extra = f"; outcome labels {g['outcome']}" if ch.endswith("episodes") else ""
        print(f"  {ch:<14} {g['labelled']}/{g['items']} labelled: precision (useful+marginal) {prec}; {shares}{extra}")


# -- a blind packet ------------------------------------------------------------------------------------------------
DIGEST_CHARS = 40_000
DIGEST_TEXT = 400


def digest(path: Path) -> str:
    """The session as a judge reads it: the user's prompts, the agent's words, the commands it ran and the files it
    changed, in order, each clipped, under DIGEST_CHARS."""
    out: list[str] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        text = prompt_text(record) if isinstance(record, dict) else ""
        if text:
            out.append(f"USER: {' '.join(text.split())[: DIGEST_TEXT * 2]}")
            continue
        msg = record.get("message") if isinstance(record, dict) and record.get("type") == "assistant" else None
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(f"AGENT: {' '.join(str(b.get('text', '')).split())[:DIGEST_TEXT]}")
            elif b.get("type") == "tool_use" and isinstance(b.get("input"), dict):
                arg = b["input"].get("command") or b["input"].get("file_path") or b["input"].get("pattern") or ""
                out.append(f"TOOL {b.get('name')}: {' '.join(str(arg).split())[:160]}")
    text = "\n".join(out)
    return text if len(text) <= DIGEST_CHARS else text[: DIGEST_CHARS // 2] + "\n[...]\n" + text[-DIGEST_CHARS // 2 :]


def packet(runs: list[Path], out: Path, seed: int = 37) -> None:
    """One file per later session: its first prompt, files, a digest of the session, and the union of the items
    the runs injected for that prompt (an episode two runs showed under their own ids once), shuffled, with no mark
    of which run showed which."""
    by_session: dict[str, dict[str, Any]] = {}
    for run in runs:
        for line in run.read_text().splitlines():
            c = json.loads(line)
            if c["prompt_no"]:
                continue
            s = by_session.setdefault(
                c["session_id"],
                {k: c[k] for k in ("project", "session_id", "files_modified", "transcript")}
                | {"prompts": {}, "items": {}},
            )
            s["prompts"][c["prompt_no"]] = c["prompt"]
            for it in c["items"] + c.get("start_items", []):  # one item per text: each run's import gives new ids
                s["items"].setdefault(item_key(c["session_id"], it["text"])[1], (it["text"], it["channel"]))
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for sid, s in by_session.items():
        its = [{"channel": ch, "item": text} for text, ch in s["items"].values()]
        rng.shuffle(its)
        doc = {**s, "prompt": s["prompts"][0], "items": its, "session": digest(Path(s["transcript"]))}
        del doc["prompts"]
        (out / f"{s['project']}-{sid[:8]}.json").write_text(json.dumps(doc, indent=1) + "\n")
    log(f"{len(by_session)} sessions, {sum(len(s['items']) for s in by_session.values())} items -> {out}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        jp = argparse.ArgumentParser(prog="injection_quality.py report", description="A saved run's figures again.")
        jp.add_argument("cases", type=Path, help="a run's --cases file")
        jp.add_argument("--labels", type=Path, default=LABELS_FILE, help="judged items (JSONL)")
        ja = jp.parse_args(sys.argv[2:])
        cases = [json.loads(line) for line in ja.cases.read_text().splitlines() if line.strip()]
        for name in dict.fromkeys(c["project"] for c in cases):
            mine = [c for c in cases if c["project"] == name]
            print(f"\n== {name}")
            print_channels(channel_figures(mine))
            print_judged(judged(mine, ja.labels))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "packet":
        pp = argparse.ArgumentParser(prog="injection_quality.py packet", description=packet.__doc__)
        pp.add_argument("runs", type=Path, nargs="+", help="--cases files of the runs to merge")
        pp.add_argument("--out", type=Path, required=True, help="folder for one packet per session")
        pa = pp.parse_args(sys.argv[2:])
        packet(pa.runs, pa.out)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="the shared transcripts")
    ap.add_argument("--json", type=Path, help="write every figure here")
    ap.add_argument("--cases", type=Path, help="write each replayed prompt with its items here (JSONL)")
    ap.add_argument("--labels", type=Path, default=LABELS_FILE, help="judged items (JSONL): evals/fixtures/...")
    ap.add_argument("--later", type=int, default=LATER, help=f"later prompts per session after the first ({LATER})")
    ap.add_argument("--limit", type=int, help="replay only the first N later sessions of each project")
    ap.add_argument("--projects", default=",".join(PROJECTS), help=f"comma-separated, of {', '.join(PROJECTS)}")
    ap.add_argument("--skip-small", action="store_true", help="leave out the small sets' silence check")
    a = ap.parse_args()
    started = time.perf_counter()
    report: dict[str, Any] = {"code": code_state(), "projects": {}}
    all_cases = []
    for name in [p for p in a.projects.split(",") if p]:
        run = project_run(a.data, name, a.later, a.limit)
        entry = {k: run[k] for k in ("import", "silence", "session_start")} | {"figures": channel_figures(run["cases"])}
        if a.labels.exists():
            entry["judged"] = judged(run["cases"], a.labels)
        report["projects"][name] = entry
        all_cases += run["cases"]
    report["small"] = {"import": {"sessions": 0, "episodes": 0}, "silence": {}} if a.skip_small else small_run(a.data)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print_report(report)
    if a.json:
        a.json.write_text(json.dumps(report, indent=2) + "\n")
    if a.cases:
        a.cases.write_text("".join(json.dumps(c) + "\n" for c in all_cases))


if __name__ == "__main__":
    main()
