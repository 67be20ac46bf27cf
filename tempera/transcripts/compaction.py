"""What a compaction summary says, by section. When Claude Code compacts a long session it writes the best summary
of the work the transcript will ever hold ("This session is being continued from a previous conversation ...",
with numbered sections: Primary Request and Intent, Files and Code Sections, Errors and fixes, Pending Tasks,
Current Work, Optional Next Step). Capture uses it instead of throwing it away: "current work" closes the unit the
compaction cut short, "next step" opens the unit after it, and the primary request names a continued session's
first turn. Pure functions over the summary's text.
"""

from __future__ import annotations

import re

from tempera.core.clipping import shorten

_SECTION = re.compile(
    r"^\s*(?:\d+\.\s*)?\**([A-Z][A-Za-z /&-]{2,40}?)\**:\s*\**\s*$|"
    r"^\s*\d+\.\s*\**([A-Z][A-Za-z /&-]{2,40}?)\**:\s*(.*)$",
    re.M,
)
_PREAMBLE = re.compile(r"^This session is being continued from a previous conversation[^\n]*\n+", re.I)
_TAIL = re.compile(
    r"\n\s*(?:If you need specific details from before compaction|Please continue the conversation)"
    r".*\Z",
    re.S,
)
MAX_CHARS = 600


def _clean(text: str) -> str:
    text = re.sub(r"\*\*|`", "", text)
    return " ".join(text.split())


def sections(text: str) -> dict[str, str]:
    """Section name (lower case) -> its text, from the part after `Summary:` when there is an analysis first."""
    body = _TAIL.sub("", _PREAMBLE.sub("", text or ""))
    summary_at = body.find("\nSummary:")
    if summary_at >= 0:
        body = body[summary_at + len("\nSummary:") :]
    found: dict[str, str] = {}
    marks = list(_SECTION.finditer(body))
    for n, m in enumerate(marks):
        name = (m.group(1) or m.group(2) or "").strip().lower()
        end = marks[n + 1].start() if n + 1 < len(marks) else len(body)
        content = ((m.group(3) or "") + "\n" + body[m.end() : end]).strip()
        if name and content and name not in found:
            found[name] = content
    return found


def _first(found: dict[str, str], *names: str) -> str:
    for name in names:
        if found.get(name):
            return shorten(_clean(found[name]), MAX_CHARS)
    return ""


def current_work(text: str) -> str:
    """What was being done when the context was compacted: the summary of the unit the compaction closed."""
    return _first(sections(text), "current work", "primary request and intent")


def next_step(text: str) -> str:
    """What the agent was to do next: the intent of the unit after the compaction."""
    return _first(sections(text), "optional next step", "pending tasks", "current work")


def continuation_intent(text: str) -> str:
    """The request a continued session carries on with: the primary request, else the summary's opening."""
    found = sections(text)
    intent = _first(found, "primary request and intent", "current work")
    if intent:
        return intent
    body = _TAIL.sub("", _PREAMBLE.sub("", text or ""))
    return shorten(_clean(body), MAX_CHARS) or "(continued session)"
