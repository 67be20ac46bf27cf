"""Long sessions made of real records: a real transcript's records written again and again into one session, each
copy with its own ids (record uuids, message and tool-call ids) and later timestamps, chained to the copy before it.

The fixtures hold short sessions; crash tests need a capture of several write chunks, and the memory benchmark
transcripts of tens of megabytes, without inventing what a record looks like."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tempera.transcripts.reader import parse_line

ID_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "id",
        "tool_use_id",
        "toolUseID",
        "sourceToolAssistantUUID",
        "promptId",
        "messageId",
        "leafUuid",
    }
)


def _records(src: Path) -> list[dict[str, Any]]:
    """The JSON objects of the file, as the transcript reader parses a line (skipped lines left out)."""
    return [obj for raw in src.read_bytes().splitlines() if raw.strip() and isinstance(obj := parse_line(raw), dict)]


def _ids(value: Any, found: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ID_KEYS and isinstance(v, str) and v:
                found.add(v)
            else:
                _ids(v, found)
    elif isinstance(value, list):
        for v in value:
            _ids(v, found)


def _renamed(value: Any, ids: set[str], suffix: str) -> Any:
    if isinstance(value, str):
        return value + suffix if value in ids else value
    if isinstance(value, dict):
        return {k: _renamed(v, ids, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, ids, suffix) for v in value]
    return value


def _stamp(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _shifted(value: str, by: timedelta) -> str:
    at = _stamp(value)
    return (at + by).isoformat().replace("+00:00", "Z") if at else value


def repeated_records(src: Path, copies: int, *, session_id: str, cwd: str, first: int = 0) -> Iterator[dict[str, Any]]:
    """The records of `copies` copies of `src`, in order, as one session in `cwd`; the copies are numbered from
    `first` (copy 0 keeps the source's ids and times), so sessions made of different numbers never share an id."""
    base = _records(src)
    ids: set[str] = set()
    _ids(base, ids)
    stamps = [s for s in (_stamp(r.get("timestamp")) for r in base if r.get("timestamp")) if s]
    span = (max(stamps) - min(stamps) if stamps else timedelta(0)) + timedelta(minutes=1)
    last_uuid: str | None = None
    for n in range(first, first + copies):
        suffix = f"-r{n}" if n else ""
        first_root = True
        for raw in base:
            rec = _renamed(raw, ids, suffix)
            if "sessionId" in rec:
                rec["sessionId"] = session_id
            if "cwd" in rec:
                rec["cwd"] = cwd
            if isinstance(rec.get("timestamp"), str):
                rec["timestamp"] = _shifted(rec["timestamp"], span * n)
            if rec.get("uuid") and "parentUuid" in rec and rec["parentUuid"] is None and first_root:
                rec["parentUuid"], first_root = last_uuid, False
            yield rec
            if rec.get("uuid") and rec.get("type") in ("user", "assistant", "system"):
                last_uuid = rec["uuid"]


def write_long_session(src: Path, dst: Path, copies: int, *, session_id: str, cwd: Path, first: int = 0) -> Path:
    """`repeated_records` written to `dst` (a JSONL transcript)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("w", encoding="utf-8") as out:
        for rec in repeated_records(src, copies, session_id=session_id, cwd=str(cwd), first=first):
            out.write(json.dumps(rec) + "\n")
    return dst
