"""Everything the episode page shows: the episode, why it has its utility, its links and injections, the
self-improvement rows anchored to it, and an excerpt of the transcript it was captured from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core.redact import redact

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.core.models import Episode

EXCERPT_RECORDS = 14
EXCERPT_CHARS = 700


def _summaries(mem: "Memory", ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = mem.db.query(f"SELECT id, summary FROM episodes WHERE id IN ({','.join('?' * len(ids))})", list(ids))
    return dict(rows)


def _injections(mem: "Memory", episode_id: str) -> list[dict[str, Any]]:
    rows = mem.db.query(
        "SELECT created_at, session_id, event, prompt, rank, scores, used, evaluated_at "
        "FROM injections WHERE episode_id = ? ORDER BY created_at DESC LIMIT 50",
        (episode_id,),
    )
    return [
        {
            "created_at": r[0],
            "session_id": r[1],
            "event": r[2],
            "prompt": r[3],
            "rank": r[4],
            "scores": json.loads(r[5] or "{}"),
            "used": r[6],
            "evaluated_at": r[7],
        }
        for r in rows
    ]


def _anchored(mem: "Memory", episode_id: str) -> dict[str, list[dict[str, Any]]]:
    from tempera.core.selfimprove.askbacks import ask_backs_of

    mistakes = mem.db.query(
        "SELECT category, description, correction, created_at FROM mistakes WHERE episode_id = ? ORDER BY id",
        (episode_id,),
    )
    asks = mem.db.query(
        "SELECT trigger, question, created_at FROM should_have_asked WHERE episode_id = ? ORDER BY id", (episode_id,)
    )
    return {
        "mistakes": [dict(zip(("category", "description", "correction", "created_at"), r)) for r in mistakes],
        "asks": [dict(zip(("trigger", "question", "created_at"), r)) for r in asks],
        "ask_backs": [
            {"question": a.question, "status": a.status, "created_at": a.created_at}
            for a in ask_backs_of(mem.db, episode_id)
        ],
    }


def _record_text(record: Any) -> str:
    """A transcript record as a person would skim it: its text, else the tools it called or their results."""
    parts = [record.text] if record.text else []
    parts += [f"[{b.name}] {json.dumps(b.input, ensure_ascii=False)[:300]}" for b in record.tool_uses]
    parts += [f"[result{' error' if b.is_error else ''}] {b.text[:300]}" for b in record.tool_results]
    return redact("\n".join(p for p in parts if p).strip())[:EXCERPT_CHARS]


def transcript_excerpt(ep: "Episode") -> dict[str, Any]:
    """The episode's own records from its source transcript, redacted (the file on disk is not), or why not."""
    path = ep.source.transcript_path
    if not path:
        return {"records": [], "note": f"no transcript: this episode was captured by {ep.source.origin}"}
    if not Path(path).is_file():
        return {"records": [], "note": f"the transcript {path} is no longer on disk"}
    from tempera.transcripts.reader import read_transcript

    wanted = set(ep.source.record_uuids)
    records = [r for r in read_transcript(Path(path)).records if r.uuid in wanted]
    shown = [
        {"role": r.type, "at": r.timestamp.isoformat() if r.timestamp else "", "text": _record_text(r)} for r in records
    ]
    shown = [s for s in shown if s["text"]]
    more = max(0, len(shown) - EXCERPT_RECORDS)
    return {
        "records": shown[:EXCERPT_RECORDS],
        "path": path,
        "note": f"{more} more record(s) not shown" if more else "",
    }


def details(mem: "Memory", episode_id: str) -> dict[str, Any]:
    from tempera.core.learning.explain import explain

    ep = mem.store.get(episode_id)
    why = explain(mem, ep.id)
    linked = {x for link in why["links"] for x in (link["src_id"], link["dst_id"])} - {ep.id}
    names = _summaries(mem, linked)
    links = [
        {
            **link,
            "other": link["dst_id"] if link["src_id"] == ep.id else link["src_id"],
            "direction": "to" if link["src_id"] == ep.id else "from",
        }
        for link in why["links"]
    ]
    for link in links:
        link["summary"] = names.get(link["other"], "(forgotten)")
    return {
        "episode": ep,
        "scope": str(ep.scope),
        "why": why,
        "links": links,
        "injections": _injections(mem, ep.id),
        "transcript": transcript_excerpt(ep),
        **_anchored(mem, ep.id),
    }
