"""Captures a hook could not queue in the database (a full or read-only disk, a broken file), kept as tiny files in
the spool folder beside it until the daemon can queue them. Standard library only: the hooks write here.

One file per transcript, named by its path's hash and replaced atomically, so a session Stopped many times on a
full disk leaves one file, never half of one; it holds only what the capture job reads (`jobs.enqueue_capture`).
The daemon's worker moves each into the job queue before it takes a job (`drain`), and deletes it only once the
job is queued: a file queued twice is absorbed by the job's dedupe key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from tempera.core import jobs, paths
from tempera.core.atomic import write_atomic

SUFFIX = ".json"
log = logging.getLogger("tempera.daemon")


def spool_dir(data_dir: Path | None = None) -> Path:
    return (data_dir or paths.data_dir()) / paths.SPOOL_DIR


def write(session_id: str, transcript_path: str, event: str, data_dir: Path | None = None) -> Path:
    """Keep a capture for later, owner-only; raises OSError when even this cannot be written."""
    folder = spool_dir(data_dir)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = hashlib.sha256(transcript_path.encode("utf-8", "surrogatepass")).hexdigest()[:24] + SUFFIX
    doc = {"session_id": session_id, "transcript_path": transcript_path, "event": event}
    target = folder / name
    write_atomic(target, json.dumps(doc).encode("utf-8"), 0o600)
    return target


def pending(data_dir: Path | None = None) -> list[Path]:
    """The spooled captures, oldest first (a temp file of a write under way starts with a dot and is not one)."""
    try:
        entries = [e for e in os.scandir(spool_dir(data_dir)) if e.name.endswith(SUFFIX) and e.name[0] != "."]
    except FileNotFoundError:
        return []
    return [Path(e.path) for e in sorted(entries, key=lambda e: e.stat().st_mtime_ns)]


def drain(conn: Any, data_dir: Path | None = None) -> int:
    """Queue every spooled capture on `conn` (autocommit) and delete its file; returns how many were queued. A
    write the disk still refuses raises, leaving the rest of the files for the next call."""
    queued = 0
    for path in pending(data_dir):
        try:
            doc = json.loads(path.read_bytes())
            session_id, transcript = str(doc.get("session_id") or ""), str(doc["transcript_path"])
        except FileNotFoundError:
            continue
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("spool: dropping %s, which is not a spooled capture (%s)", path.name, exc)
            path.unlink(missing_ok=True)
            continue
        jobs.enqueue_capture(conn, session_id=session_id, transcript_path=transcript)
        path.unlink(missing_ok=True)
        queued += 1
    if queued:
        log.info("spool: queued %d capture(s) a hook could not queue", queued)
    return queued
