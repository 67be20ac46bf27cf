"""What a session was working on when Claude Code compacted its context, read from the transcript's last records (back
to its request): the query that brings back, at SessionStart `compact`, what the compaction took out of the agent's
context and still bears on its work (`inject/sessionstart.py`).

Claude Code runs the SessionStart `compact` hooks before it writes the compaction's boundary and summary to the
transcript (its compact.ts calls them first; in the 5 compactions of the entire-cli and cipher-box sessions that
logged the hook, its `hook_progress` record is 0.1 to 4.3 s older than the summary record). So the summary of this
compaction is in the transcript only when the tail ends with it (a Claude Code that writes it first); otherwise the
work in progress is what the summary's "Primary Request" and "Current Work" will say: the request being worked on
(the last prompt, or the earlier compaction's request when no prompt came since) and the agent's latest words.
"""

from __future__ import annotations

from pathlib import Path

from tempera.core.clipping import squeezed
from tempera.core.textsearch import content_terms
from tempera.transcripts.compaction import MAX_CHARS, continuation_intent, current_work
from tempera.transcripts.reader import Record, read_tail
from tempera.transcripts.turns import clean_text, user_role

TAIL_BYTES = 256 * 1024  # a few ms to read and parse; holds the last exchanges of a long autonomous turn
BACK_BYTES = 16 * 1024 * 1024  # how far back the request is looked for: a 4 MB transcript reads whole in ~30 ms


def _said(r: Record) -> bool:
    """A prompt that asks something, a compaction summary or the agent's words: what a summary of the work is made
    from. A bare reply ("yes", "go ahead": no `content_terms`) names no request; the one it answers goes on
    (capture folds it the same way, `turns.continued`)."""
    if r.is_sidechain:
        return False
    if r.type == "assistant":
        return bool(r.text.strip())
    role = r.type == "user" and user_role(r)
    return role == "compact_summary" or role == "prompt" and bool(content_terms(clean_text(r.text)))


def _summary(r: Record) -> bool:
    return r.type == "user" and user_role(r) == "compact_summary"


def work_in_progress(records: list[Record]) -> str:
    """The request and the current work the last of `records` show ('' when they show none): a compaction summary
    that ends them gives its own; else the last prompt or, when none came after it, the last summary's request,
    and the agent's last words after it."""
    said = [r for r in records if _said(r)]
    if not said:
        return ""
    last = said[-1]
    if _summary(last):
        parts = [continuation_intent(last.text), current_work(last.text)]
    else:
        request = next((r for r in reversed(said) if r.type == "user"), None)
        if request is None:
            ask = ""
        elif _summary(request):
            ask = continuation_intent(request.text)
        else:
            ask = squeezed(clean_text(request.text), MAX_CHARS)
        words = last.text if last.type == "assistant" else ""
        parts = [ask, squeezed(words, MAX_CHARS)]
    return "\n".join(dict.fromkeys(p for p in parts if p and p != "(continued session)"))


def _asked(r: Record) -> bool:
    """A prompt or a compaction summary: what names the request being worked on."""
    return r.type == "user" and _said(r)


def transcript_work(path: str) -> str:
    """`work_in_progress` of the transcript at `path` ('' for no file): from its last TAIL_BYTES, or, when they hold
    no prompt or summary, from a tail four times as long, and so on to the whole file or BACK_BYTES. A long
    autonomous turn writes megabytes after its prompt: in 8 of the 13 real compactions of evals/compaction_replay.py
    the last 256 KB held only the agent's words ("All tests pass. Let me also run the linter ..."), a query for any
    episode that passed its tests; read whole, those files (0.9-2.3 MB) took 11-28 ms, once per compaction."""
    try:
        size = Path(path).stat().st_size if path else 0
    except OSError:
        return ""
    span = TAIL_BYTES
    records = read_tail(Path(path), span) if size else []
    while span < min(size, BACK_BYTES) and not any(_asked(r) for r in records):
        span *= 4
        records = read_tail(Path(path), span)
    return work_in_progress(records)
