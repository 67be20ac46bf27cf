"""Copies of the real transcripts in tests/data, re-pointed at a working directory that exists in the test."""

from __future__ import annotations

import json
from pathlib import Path


def copy_transcript(src: Path, dst: Path, *, cwd: Path, session_id: str | None = None) -> Path:
    """Move the session to `cwd`: every record's `cwd` and every path under the old one (tool inputs, results)
    are rewritten, and optionally `sessionId`; broken lines are kept as they are."""
    text = src.read_text(encoding="utf-8")
    old = _first_cwd(text)
    if old:
        text = text.replace(json.dumps(old)[1:-1] + "/", json.dumps(str(cwd))[1:-1] + "/")
    out = []
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(rec, dict):
            if "cwd" in rec:
                rec["cwd"] = str(cwd)
            if session_id and "sessionId" in rec:
                rec["sessionId"] = session_id
        out.append(json.dumps(rec))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


def _first_cwd(text: str) -> str | None:
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("cwd"), str) and rec["cwd"] not in ("", "/"):
            return str(rec["cwd"]).rstrip("/")
    return None


def session_of(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("sessionId"):
            return str(rec["sessionId"])
    raise AssertionError(f"no sessionId in {path}")
