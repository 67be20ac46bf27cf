"""A session captured Stop by Stop, as a live session is: reading from where the last capture left it (`since.py`)
against reading the whole file at every Stop, and against one capture of the whole file.

    python evals/stop_replay.py [SESSION.jsonl ...]   (default: the sessions named in SESSIONS below)

The file is cut where a hook would capture it (`stop_cuts`): before each prompt (the Stop that ended the turn
before), after each prompt (a prompt not yet worked on), after each message of the agent that calls no tool, and
before each compaction (PreCompact). Each prefix is written to the transcript path and captured with
`capture_and_learn`, the Stop hook's pipeline, in a fresh memory: once as capture does it, once with the cursor's
place forgotten before every capture (the whole file read each time, as before `since.py`). Printed per session:
captures, whether what was stored (`stored`: episodes without ids and times, mistakes and should-have-asked rows,
facts) is the same both ways (`same`) and the same as one capture of the whole file (`same_as_one_capture`), both
of which must hold, and the bytes all the Stops read per byte of the file, both ways (1.0 would be one read of the
file).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tempera.core.memory import Memory
from tempera.transcripts.capture import CaptureResult
from tempera.transcripts.pipeline import capture_and_learn
from tempera.transcripts.reader import parse_line, parse_record
from tempera.transcripts.turns import user_role

DATA = Path(os.environ.get("TEMPERA_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared")) / "data/transcripts"
SESSIONS = [  # long ones, with compactions, from both projects
    "entire-cli/sessions/880d23f9-86b3-4345-af42-46381ab10e4d.jsonl",
    "entire-cli/sessions/20b81bf8-77cd-4205-8ac9-727b573a70e4.jsonl",
    "entire-cli/sessions/63784323-7042-4ab8-82b1-3c0b79467bf9.jsonl",
    "entire-cli/sessions/deeac353-0765-4439-9056-293619a99172.jsonl",
]
UNSTABLE = ("id", "created_at", "updated_at")  # what differs between two captures of the same turns


def stop_cuts(data: bytes) -> list[int]:
    """Byte offsets where a hook would capture the file (see the module's docstring), ending with its length."""
    cuts, at = set(), 0
    for raw in data.splitlines(keepends=True):
        end = at + len(raw)
        obj = parse_line(raw.rstrip(b"\n"))
        if isinstance(obj, dict):
            r = parse_record(obj, 0)
            if r.type == "user" and not r.is_sidechain and user_role(r) in ("prompt", "command"):
                cuts.update((at, end))
            elif r.type == "assistant" and not r.is_sidechain and r.text and not r.tool_uses:
                cuts.add(end)
            elif r.type == "system" and r.subtype == "compact_boundary":
                cuts.add(at)
        at = end
    return sorted(c for c in cuts | {len(data)} if c > 0)


def stored(mem: Memory) -> dict[str, Any]:
    """What capture and the steps after it stored, in order, without what differs between two captures of the
    same turns (ids, times)."""
    episodes = []
    for ep in mem.store.iter_episodes(newest_first=False):
        d = ep.model_dump(mode="json")
        for key in UNSTABLE:
            d.pop(key)
        episodes.append(d)
    facts = mem.db.query("SELECT 1 FROM sqlite_master WHERE name = 'fact_datoms'")
    return {
        "episodes": episodes,
        "mistakes": mem.db.query("SELECT category, description, correction, source FROM mistakes ORDER BY rowid"),
        "asks": mem.db.query("SELECT trigger, question, answer, source FROM should_have_asked ORDER BY rowid"),
        "facts": mem.db.query("SELECT e, a, valid_from, valid_to FROM fact_datoms ORDER BY id") if facts else [],
    }


def _stamp(raw: bytes) -> str:
    obj = parse_line(raw.rstrip(b"\n"))
    return str(obj.get("timestamp") or "") if isinstance(obj, dict) else ""


class Session:
    """A session file and its subagent files (`<session>/subagents/`), to be written as they stood at a cut: the
    subagent lines stamped no later than the main file's last line so far."""

    def __init__(self, src: Path) -> None:
        self.src, self.data = src, src.read_bytes()
        folder = src.parent / src.stem / "subagents"
        self.agents = {p.name: p.read_bytes() for p in sorted(folder.glob("agent-*"))} if folder.is_dir() else {}

    def write(self, path: Path, cut: int) -> None:
        prefix = self.data[:cut]
        path.write_bytes(prefix)
        until = max((_stamp(raw) for raw in prefix.splitlines()), default="")
        for name, data in self.agents.items():
            target = path.parent / path.stem / "subagents" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if not name.endswith(".jsonl"):
                target.write_bytes(data)
                continue
            lines = [raw for raw in data.splitlines(keepends=True) if _stamp(raw) <= until]
            if lines:
                target.write_bytes(b"".join(lines))
            else:
                target.unlink(missing_ok=True)


def replay(mem: Memory, session: Session, path: Path, cuts: list[int], *, whole: bool = False) -> list[CaptureResult]:
    """Write the session as it stood at each cut to `path` and capture it, as the hooks of a live session would;
    `whole`: with the cursor's place forgotten after each capture, so that each capture reads the whole file."""
    results = []
    for cut in cuts:
        session.write(path, cut)
        results.append(capture_and_learn(mem, path))
        if whole:
            with mem.db.transaction():
                mem.db.execute("UPDATE transcript_cursors SET since = NULL")
    return results


def _captured(tmp: Path, session: Session, cuts: list[int], whole: bool) -> tuple[list[CaptureResult], Any]:
    path = tmp / "projects" / "-stop-replay" / session.src.name  # one path for every run: episodes name it
    path.parent.mkdir(parents=True, exist_ok=True)
    os.environ["TEMPERA_DATA_DIR"] = str(tmp / f"data-{len(list(tmp.glob('data-*')))}")
    with Memory(use_model=False) as mem:
        return replay(mem, session, path, cuts, whole=whole), stored(mem)


def compare(src: Path) -> dict[str, Any]:
    """One session replayed Stop by Stop both ways, and captured whole once, each in a fresh memory."""
    session = Session(src)
    cuts = stop_cuts(session.data)
    with tempfile.TemporaryDirectory(prefix="tempera-stop-replay-") as tmp:
        steps, got = _captured(Path(tmp), session, cuts, whole=False)
        full, want = _captured(Path(tmp), session, cuts, whole=True)
        _, one = _captured(Path(tmp), session, cuts[-1:], whole=False)
    size = len(session.data)
    return {
        "session": src.name,
        "bytes": size,
        "captures": len(cuts),
        "episodes": len(got["episodes"]),
        "same": got == want,
        "same_as_one_capture": got == one,
        "read_per_size": round(sum(r.bytes_read for r in steps) / size, 2),
        "read_per_size_whole": round(sum(r.bytes_read for r in full) / size, 2),
        "last_stop_read": steps[-1].bytes_read,
    }


def main() -> None:
    files = [Path(a) for a in sys.argv[1:]] or [DATA / s for s in SESSIONS]
    for f in files:
        print(json.dumps(compare(f)), flush=True)


if __name__ == "__main__":
    main()
