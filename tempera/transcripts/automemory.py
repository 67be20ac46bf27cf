"""Claude Code's own auto memory as a source: the notes in `MEMORY.md` and its topic files become episodes.

Claude Code keeps notes it writes itself in `~/.claude/projects/<sanitised git root>/memory/` (or the user
setting `autoMemoryDirectory`): `MEMORY.md`, an index whose first 200 lines (at most 25 KB) are in the context of
every session, and topic files it reads only on demand. Each note (a bullet or a paragraph, under its heading)
becomes an episode whose `source.origin` is `auto-memory`, not a fact: a note is free prose about a whole project
("tests need --runslow to reach the payment suite"), not an entity with attributes, so as a fact it would be one
opaque string that only a prompt naming its slug could reach; as an episode it gets what a prompt needs to find
it (hybrid retrieval with a relevance floor), learned utility and the once-per-session log.

What Claude Code already loaded is never stored, so it is never injected: the sync keeps exactly the notes
outside MEMORY.md's loaded window (and not repeated inside it), retiring a note once it is edited, removed or
moved into the window. It runs at SessionStart, when Claude Code has just read the same files.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core import defaults
from tempera.core.models import Episode, Source
from tempera.core.project import ProjectRef, main_checkout
from tempera.transcripts.importer import claude_projects_dir

if TYPE_CHECKING:
    from tempera.core.memory import Memory

ORIGIN = defaults.AUTO_MEMORY_ORIGIN
INDEX = "MEMORY.md"
LOADED_LINES, LOADED_BYTES = 200, 25 * 1024  # what Claude Code puts in context at session start
MAX_NOTE_CHARS = 1000
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")


@dataclass(frozen=True)
class Note:
    file: Path
    line: int  # 1-based, where the note starts
    section: str
    text: str
    loaded: bool  # in MEMORY.md's first 200 lines / 25 KB: already in Claude Code's context

    @property
    def summary(self) -> str:
        return f"{self.section}: {self.text}" if self.section else self.text


def _claude_dir() -> Path:
    return claude_projects_dir().parent


def _settings(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def enabled(project_root: Path) -> bool:
    """Whether Claude Code writes auto memory here: on unless CLAUDE_CODE_DISABLE_AUTO_MEMORY or a settings file
    (user, project, project local) says `autoMemoryEnabled: false`."""
    if os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip() not in ("", "0", "false"):
        return False
    files = [
        _claude_dir() / "settings.json",
        project_root / ".claude" / "settings.json",
        project_root / ".claude" / "settings.local.json",
    ]
    return all(_settings(f).get("autoMemoryEnabled", True) is not False for f in files)


def sanitised(path: str) -> str:
    """Claude Code's folder name for a path: every character but a letter or digit becomes `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def memory_dir(cwd: str) -> Path:
    """The project's auto-memory folder: the user's `autoMemoryDirectory`, else one per repository (worktrees
    share it: Claude Code keys it by the main checkout)."""
    custom = _settings(_claude_dir() / "settings.json").get("autoMemoryDirectory")
    if isinstance(custom, str) and custom.strip():
        return Path(custom).expanduser()
    return claude_projects_dir() / sanitised(str(main_checkout(cwd))) / "memory"


def _file_notes(path: Path, *, index: bool) -> list[Note]:
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    notes: list[Note] = []
    section, start, parts, offset, fenced = "", 0, [], 0, False
    lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)

    def close() -> None:
        text = " ".join(" ".join(parts).split())
        if text:
            loaded = index and start <= LOADED_LINES and starts[start - 1] < LOADED_BYTES
            notes.append(Note(path, start, section, text[:MAX_NOTE_CHARS], loaded))
        parts.clear()

    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line.encode("utf-8"))
    body = 0
    if lines and lines[0].strip() == "---":  # front matter (name, description, type): not a note
        body = next((n + 1 for n, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
    for n, line in enumerate(lines[body:], body + 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(stripped)
        if heading or not stripped or (_BULLET.match(line) and not fenced):
            close()
            if heading:
                section = heading.group(1).strip()
                continue
            if not stripped:
                continue
            start = n
            parts.append(_BULLET.sub("", line, count=1))
            continue
        if not parts:
            start = n
        parts.append(stripped)
    close()
    return notes


def read_notes(directory: Path) -> list[Note]:
    """MEMORY.md's notes, then each topic file's (sorted by name)."""
    topics = sorted(p for p in directory.glob("*.md") if p.name != INDEX) if directory.is_dir() else []
    return _file_notes(directory / INDEX, index=True) + [n for p in topics for n in _file_notes(p, index=False)]


def to_store(notes: list[Note]) -> list[Note]:
    """The notes Claude Code has not loaded: outside the window and not repeated inside it, each once."""
    loaded = {n.text for n in notes if n.loaded}
    out: dict[tuple[str, str], Note] = {}
    for n in notes:
        if not n.loaded and n.text not in loaded:
            out.setdefault((str(n.file), n.summary), n)
    return list(out.values())


@dataclass(frozen=True)
class SyncReport:
    directory: str
    notes: int
    loaded: int
    added: int
    retired: int


def _stored(mem: "Memory", project_id: str) -> dict[tuple[str, str], str]:
    rows = mem.db.query(
        "SELECT id, json_extract(data, '$.source.transcript_path'), summary FROM episodes "
        "WHERE project_id = ? AND json_extract(data, '$.source.origin') = ? "
        "AND id NOT IN (SELECT episode_id FROM episode_retirements)",
        (project_id, ORIGIN),
    )
    return {(str(path), str(summary)): str(eid) for eid, path, summary in rows}


def sync(mem: "Memory", project: ProjectRef, cwd: str) -> SyncReport:
    """Bring the project's auto-memory episodes in line with the files: add new notes, retire changed ones."""
    from tempera.core.learning.retire import retire

    directory = memory_dir(cwd)
    notes = read_notes(directory)
    wanted: dict[tuple[str, str], Episode] = {}
    for n in to_store(notes):  # keyed as stored: by file and the redacted summary
        ep = Episode(
            project_id=project.id,
            project_name=project.name,
            project_path=project.path,
            summary=n.summary,
            tags=["auto-memory", n.file.stem],
            source=Source(origin=ORIGIN, transcript_path=str(n.file)),
        ).redacted()
        wanted.setdefault((str(n.file), ep.summary), ep)
    stored = _stored(mem, project.id)
    new = [ep for key, ep in wanted.items() if key not in stored]
    if new:
        mem.store.add_many(new, project)
    gone = [eid for key, eid in stored.items() if key not in wanted]
    for eid in gone:
        retire(
            mem.store,
            eid,
            "expired",
            detail={"source": ORIGIN, "why": "edited, removed, or now loaded by Claude Code at session start"},
        )
    return SyncReport(str(directory), len(notes), sum(n.loaded for n in notes), len(new), len(gone))
