"""What the episode lines of a project's real sessions would say: every work unit drafted as import drafts it
(`transcripts/draft.py`, no database) and rendered as the hooks inject it (`inject/render.py` `episode_line`), with
counts of the parts that mislead or say nothing.

    python evals/episode_lines.py PROJECT [--data DIR] [--lines OUT.jsonl]

PROJECT is a folder of DIR (default `shared/data/transcripts/`, as `real_sessions.py` finds it): entire-cli,
cipher-box. Counted, per project:
- contradictions: units labelled failure/partial whose quoted conclusion, or whose last message, reports success
  ("All tests pass", "lint is clean", "successfully", "pushed", "fixed") without a word of failure;
- interim: "agent said" quotes whose first sentence is an interim remark ("Let me…", "I'll…", "Now I have…",
  "Now add…") or that end with ':';
- bare: "tool output" quotes without a number (a command such as "bun run test." says nothing);
- glued: plan-mode requests quoted as "Implement the following plan: Plan: Foo Context" (title glued to the next
  heading).
Its own patterns, not the product's: a count the product's rules cannot satisfy by definition. `--lines` writes
each line with its flags, outcome and evidence, to read them.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from real_sessions import SHARED

from tempera.core.models import Episode
from tempera.core.project import ProjectRef
from tempera.inject.render import episode_line, summary_parts
from tempera.inject.hits import episode_hit
from tempera.transcripts.capture import checkout_roots, root_of
from tempera.transcripts.draft import draft_episode
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import Turn, segment_turns
from tempera.transcripts.units import work_units


def any_of(*patterns: str) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of `patterns`."""
    return re.compile("|".join(patterns), re.I)


SUCCESS = any_of(
    r"\b(?:all )?(?:\d+ )?tests? (?:now )?pass",
    r"\blint(?:ing)? (?:is )?clean",
    r"\bbuild (?:succeeds|passes)",
    r"\bsuccessfully\b|\b(?:is|are) (?:now )?complete\b|\bpushed\b|\bcommitted\b|\bfixed\b",
)
FAILURE = any_of(r"\bfail(?:s|ed|ing|ure)\b", r"\bstill\b|\bbroken\b|\bcannot\b|\bcouldn't\b")
INTERIM = any_of(
    r"^(?:(?:now|next|first|ok|okay|good|great|perfect),? )?(?:let me|let's|i'll|i will|i need to|i'm going to)\b",
    r"^(?:now,? )?i (?:now )?(?:have|understand|see|know|can see|can explain|can give)\b|^i see\b",
    r"^now (?:add|update|run|check|fix|create|write|implement|remove|edit|replace|verify)\b",
)
GLUED = re.compile(r"Implement the following plan:.*\b(?:Context|Overview|Summary|Problem|Goal|Background)\b", re.S)


def reports_success(text: str) -> bool:
    return bool(SUCCESS.search(text)) and not FAILURE.search(text)


def drafts(sessions: Path, ref: ProjectRef) -> Iterator[tuple[Path, Turn, Episode]]:
    """Every work unit of the sessions with the episode import drafts for it, session by session."""
    for path in sorted(sessions.glob("*.jsonl")):
        transcript = read_transcript(path)
        roots = checkout_roots(transcript)
        for unit in work_units(segment_turns(transcript)):
            root = root_of(unit, roots, ref.path)
            yield (
                path,
                unit,
                draft_episode(unit, ref, transcript_path=path, session_id=transcript.session_id, root=root),
            )


def measure(sessions: Path, project: str, out: Path | None) -> Counter[str]:
    ref = ProjectRef("0" * 16, project, f"/nonexistent/{project}")
    counts: Counter[str] = Counter()
    rows = []
    for path, unit, ep in drafts(sessions, ref):
        hit = episode_hit(ep, ref, score=1.0)
        parts = summary_parts(hit)
        said = [t for label, t in parts if label == "agent said"]
        tools = [t for label, t in parts if label == "tool output"]
        flags = []
        counts.update(episodes=1, agent_said=len(said), tool_output=len(tools))
        if ep.outcome.status in ("failure", "partial"):
            counts["failure_partial"] += 1
            if any(reports_success(s) for s in said) or reports_success(unit.final_text):
                flags.append("contradiction")
        flags += ["interim" for s in said if INTERIM.search(re.split(r"(?<=[.!?])\s+", s)[0]) or s.endswith(":")]
        flags += ["bare" for t in tools if not re.search(r"\d", t)]
        if parts and GLUED.search(parts[0][1]):
            flags.append("glued")
        counts.update(flags)
        rows.append({"session": path.stem, "flags": flags, "status": ep.outcome.status, "line": episode_line(hit)})
        rows[-1]["evidence"] = ep.outcome.evidence
    if out is not None:
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="folder holding PROJECT/")
    parser.add_argument("--lines", type=Path, help="write every line with its flags, outcome and evidence here")
    args = parser.parse_args()
    counts = measure(args.data / args.project / "sessions", args.project, args.lines)
    keys = ("episodes", "failure_partial", "contradiction", "agent_said", "interim", "tool_output", "bare", "glued")
    print(args.project, json.dumps({k: counts[k] for k in keys}))


if __name__ == "__main__":
    main()
