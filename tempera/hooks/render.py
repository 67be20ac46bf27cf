"""The text injected into Claude Code: plain statements of fact under a size budget. Standard library only."""

from __future__ import annotations

from typing import Any

from tempera.core.marker import wrap

HEADER_PROMPT = "Tempera memory: past work in this project that looks related to this request (most relevant first)."
HEADER_SESSION = "Tempera memory: the most useful recent work recorded for this project."


def relative_to(path: str, root: str | None) -> str:
    """A file as the project knows it: relative to its root when it lies inside."""
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def episode_line(ep: dict[str, Any]) -> str:
    """One episode as a line: date, outcome and verification (or where a note came from), id prefix, summary,
    files."""
    bits = [ep.get("created_at", "")[:10], ep.get("provenance") or ep.get("outcome", "unknown")]
    if not ep.get("provenance") and ep.get("verification") and ep["verification"] != "untested":
        bits.append(ep["verification"].replace("_", " "))
    if ep.get("project_note"):
        bits.append(ep["project_note"])
    bits.append(f"id {ep['id'][:8]}")
    summary = " ".join(ep.get("summary", "").split())
    if summary and summary[-1] not in ".!?…":
        summary += "."
    line = f"- [{', '.join(b for b in bits if b)}] {summary}"
    files = ep.get("files") or []
    if files:
        line += f" Files: {', '.join(files[:5])}{' …' if len(files) > 5 else ''}."
    return line


def fit(lines: list[str], budget: int, *, prefix: str = "") -> list[str]:
    """The leading lines that fit `budget` characters once written as `prefix + line` one per line."""
    out, used = [], 0
    for line in lines:
        used += len(prefix) + len(line) + 1
        if used > budget:
            break
        out.append(line)
    return out


def render_blocks(sections: list[tuple[str, list[str]]], budget: int) -> str:
    """Join (header, lines) sections, dropping and then clipping lines so the wrapped text fits the budget."""
    overhead = len(wrap(""))
    out: list[str] = []
    used = overhead
    for header, lines in sections:
        if not lines:
            continue
        block = [header]
        size = len(header) + 1
        for line in lines:
            room = budget - used - size - 1
            if room < 80:
                break
            if len(line) > room:
                line = line[: room - 1].rstrip() + "…"
            block.append(line)
            size += len(line) + 1
        if len(block) > 1:
            out.append("\n".join(block))
            used += size + 1
    return wrap("\n\n".join(out)) if out else ""


def hook_output(event: str, context: str) -> dict[str, Any] | None:
    if not context:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
