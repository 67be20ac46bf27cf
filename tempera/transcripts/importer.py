"""Bulk import: find session transcripts under files and folders, run each through the transcript pipeline (the
steps the Stop hook runs) from its cursor, and total the counts. Subagent files are not sessions of their own;
they are read with the session they belong to."""

from __future__ import annotations

import glob
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core.db import storage_error
from tempera.core.project_lineage import Decision, recorded
from tempera.transcripts.capture import CaptureResult, PreparedCapture, prepare_capture
from tempera.transcripts.pipeline import store_and_learn
from tempera.transcripts.reader import parse_timestamp, read_records

if TYPE_CHECKING:
    from tempera.core.memory import Memory


def claude_projects_dir() -> Path:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def session_transcript(session_id: str) -> Path | None:
    """A session's main transcript, `projects/<encoded cwd>/<session id>.jsonl`; None if there is none (or the id
    is not a plain file name)."""
    if not session_id or Path(session_id).name != session_id or session_id.startswith("."):
        return None
    found = sorted(claude_projects_dir().glob(f"*/{glob.escape(session_id)}.jsonl"))
    return found[0] if found else None


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


NO_TIME = datetime.min.replace(tzinfo=timezone.utc)
PEEK_LINES = 200  # the first record with a time is among the first few: summaries and snapshots come before it


def started_at(path: Path) -> datetime | None:
    """The time of the transcript's first record that has one, read from its first PEEK_LINES lines (a whole
    transcript can be tens of MB); None when there is none or the file cannot be read."""
    try:
        with path.open("rb") as f:
            for _, line in zip(range(PEEK_LINES), f):
                if b'"timestamp"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                stamp = parse_timestamp(record.get("timestamp")) if isinstance(record, dict) else None
                if stamp is not None:
                    return stamp
    except OSError:
        return None
    return None


def find_sessions(paths: Iterable[Path]) -> list[Path]:
    """Session transcripts named directly or found under folders, each once, in a stable order."""
    found: dict[Path, None] = {}
    for p in paths:
        p = p.expanduser()
        if p.is_file():
            found.setdefault(p, None)
        elif p.is_dir():
            for f in sorted(p.rglob("*.jsonl")):
                if f.is_file() and not is_subagent_file(f):
                    found.setdefault(f, None)
    return list(found)


def oldest_first(files: Iterable[Path]) -> list[Path]:
    """The transcripts in the order an import stores them: by `started_at`, path order for ties and after them the
    files with no time. Capture learns from what is stored before: a session's outcome links count the sessions
    before it, and an older one stored later relinks every later session (`outcomes.relink_later`): in path order,
    about N^2/4 relinks for N sessions."""
    starts = {f: started_at(f) for f in files}
    return sorted(starts, key=lambda f: (starts[f] is None, starts[f] or NO_TIME, str(f)))


def active_since(path: Path, since: datetime) -> bool:
    """Whether the session had activity at or after `since` (modification time first, then record times)."""
    try:
        if datetime.fromtimestamp(path.stat().st_mtime, timezone.utc) < since:
            return False
    except OSError:
        return False
    stamps = [r.timestamp for r in read_records(path).records if r.timestamp]
    return not stamps or max(stamps) >= since


FileOutcome = CaptureResult | Exception | None  # captured, failed, or left out by `since`
FAILURE_CHARS = 300


def failure_text(exc: Exception) -> str:
    """One line naming what went wrong in a file."""
    text = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return text if len(text) <= FAILURE_CHARS else text[: FAILURE_CHARS - 1] + "…"


@dataclass
class ImportReport:
    files: int = 0
    sessions: set[str] = field(default_factory=set)
    turns: int = 0
    units: int = 0
    bytes: int = 0
    added: int = 0
    updated: int = 0
    skipped: int = 0
    lines_skipped: int = 0
    files_skipped_since: int = 0
    files_paused: int = 0  # sessions of paused projects: read, nothing stored
    failures: list[tuple[str, str]] = field(default_factory=list)  # (path, "ExceptionType: message")
    unknown_types: Counter[str] = field(default_factory=Counter)
    not_prompts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    dry_run: bool = False
    results: list[CaptureResult] = field(default_factory=list)
    known_before: set[str] = field(default_factory=set)  # the projects in memory before the import
    # each stored session's project as decided (project_lineage.py), read once the import is done: a folder's
    # project may have joined another since its first sessions were stored
    decisions: dict[tuple[str, str | None], Decision] = field(default_factory=dict)

    def add(self, result: CaptureResult) -> None:
        if result.paused:
            self.files_paused += 1
            return
        self.files += 1
        self.sessions.add(result.session_id or result.path)
        self.turns += result.turns
        self.units += result.units
        self.bytes += result.bytes_read
        self.added += len(result.added)
        self.updated += len(result.updated)
        self.skipped += result.skipped
        self.lines_skipped += result.lines_skipped
        self.unknown_types.update(result.unknown_types)
        self.not_prompts.update(result.not_prompts)
        # kept for what the report names, without the transcript's turns the steps after capture read: an import
        # held every turn of every file to its end (issue #39)
        result.segmented = []
        self.results.append(result)

    def projects(self) -> list[dict[str, object]]:
        """The projects the import stored into, most episodes first: each with its sessions and episodes, whether it
        is new, and whether its path is on this machine (a project whose checkout is elsewhere, or gone, gets no
        hook's context here until it is merged into one that is: `tempera projects merge`)."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.results:
            decision = self.decisions.get((r.path, r.session_id))
            ref = decision.ref if decision else r.project
            if ref is None:
                continue
            p = out.setdefault(
                ref.id,
                {
                    "id": ref.id,
                    "name": ref.name,
                    "path": ref.path,
                    "new": ref.id not in self.known_before,
                    "on_this_machine": bool(ref.path) and os.path.isdir(ref.path or ""),
                    "sessions": set(),
                    "why": Counter(),
                    "episodes_added": 0,
                    "episodes_updated": 0,
                },
            )
            p["sessions"].add(r.session_id or r.path)
            p["why"][decision.kind if decision else "unrecorded"] += 1
            p["episodes_added"] += len(r.added)
            p["episodes_updated"] += len(r.updated)
        rows = [p | {"sessions": len(p["sessions"]), "why": dict(p["why"])} for p in out.values()]
        return sorted(rows, key=lambda p: (-p["episodes_added"] - p["episodes_updated"], p["name"]))

    def totals(self) -> dict[str, object]:
        mb = self.bytes / 1e6
        return {
            "files": self.files,
            "sessions": len(self.sessions),
            "turns": self.turns,
            "work_units": self.units,
            "megabytes": round(mb, 2),
            "episodes_added": self.added,
            "episodes_updated": self.updated,
            "episodes_skipped": self.skipped,
            "lines_skipped": self.lines_skipped,
            "files_skipped_since": self.files_skipped_since,
            "files_paused": self.files_paused,
            "files_failed": len(self.failures),
            "failures": [{"path": path, "error": error} for path, error in self.failures],
            "unknown_types": dict(self.unknown_types),
            "records_not_prompts": dict(self.not_prompts),
            "seconds": round(self.seconds, 3),
            "turns_per_second": round(self.turns / self.seconds, 1) if self.seconds else None,
            "mb_per_second": round(mb / self.seconds, 2) if self.seconds else None,
            "dry_run": self.dry_run,
            "projects": self.projects(),
        }


def import_transcripts(
    mem: "Memory",
    files: list[Path],
    *,
    project: str | None = None,
    since: datetime | None = None,
    dry_run: bool = False,
    use_llm: bool | None = None,
    on_file: Callable[[Path, FileOutcome], None] | None = None,
) -> ImportReport:
    """Capture every file; `on_file` is told of each, in order (None when `since` left it out). A file whose
    capture raises costs that file only: the error is counted and named in the report, and the next file is
    imported; a disk that is full or read-only stops the import, as it would fail every later file.

    Each file runs through `capture_and_learn` in its two halves, one file apart: the next file is read and drafted
    (`prepare_capture`) before the last one is stored and learnt from (`store_and_learn`), so the model makes one
    file's vectors while the interpreter works on the other (about half the time of an import is embedding). Files
    are stored in their order, each after the one before, as one at a time would."""
    report = ImportReport(dry_run=dry_run, known_before={r[0] for r in mem.db.query("SELECT id FROM projects")})
    started = time.perf_counter()
    waiting: tuple[Path, PreparedCapture] | None = None  # prepared, to be stored once the next file is prepared

    def failed(path: Path, exc: Exception) -> None:
        if storage_error(exc) is not None:  # a full or read-only disk fails every later file too: stop here
            raise exc
        report.failures.append((str(path), failure_text(exc)))
        if on_file:
            on_file(path, exc)

    def store_waiting() -> None:
        nonlocal waiting
        if waiting is None:
            return
        (path, prepared), waiting = waiting, None
        try:
            result = store_and_learn(mem, prepared)
        except Exception as exc:  # any fault in one file: the rest of the folder is still imported
            failed(path, exc)
            return
        report.add(result)
        if on_file:
            on_file(path, result)

    for path in files:
        if since is not None and not active_since(path, since):
            store_waiting()
            report.files_skipped_since += 1
            if on_file:
                on_file(path, None)
            continue
        try:
            prepared = prepare_capture(mem, path, project=project, use_llm=use_llm, dry_run=dry_run)
        except Exception as exc:  # this file's fault, told after the file before it
            store_waiting()
            failed(path, exc)
            continue
        store_waiting()
        waiting = (path, prepared)
    store_waiting()
    if not dry_run:
        report.decisions = {
            (r.path, r.session_id): d for r in report.results if (d := recorded(mem.db, r.path, r.session_id or ""))
        }
    report.seconds = time.perf_counter() - started
    return report
