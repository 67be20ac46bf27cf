"""`tempera import` stores sessions oldest first, whatever their file names: each session's learning (outcome
links, routines, chains) sees the sessions before it, as live capture does, and no older session stored late
makes every later one relink."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from transcript_writer import SessionWriter

from tempera.transcripts.importer import PEEK_LINES, find_sessions, oldest_first, started_at


def _session(path: Path, start: datetime, *, lead: list[str] = ()) -> Path:
    """A one-turn transcript started at `start`, after `lead` lines with no time (summaries, broken lines)."""
    w = SessionWriter(path, session_id=path.stem, cwd="/w", start=start)
    w.prompt(f"work of {path.stem}")
    w.say("Done.")
    path.write_text("".join(line + "\n" for line in lead) + path.read_text())
    return path


def test_sessions_come_oldest_first_whatever_their_names(tmp_path: Path) -> None:
    newer = _session(tmp_path / "a" / "aaa.jsonl", datetime(2026, 1, 9, tzinfo=timezone.utc))
    older = _session(
        tmp_path / "b" / "bbb.jsonl",
        datetime(2026, 1, 2, tzinfo=timezone.utc),
        lead=['{"type": "summary", "summary": "x"}', '{"timestamp": broken', '["timestamp"]'],
    )
    tie = _session(tmp_path / "b" / "ccc.jsonl", datetime(2026, 1, 2, tzinfo=timezone.utc))
    timeless = tmp_path / "a" / "000.jsonl"
    timeless.write_text('{"type": "summary", "summary": "no time"}\n' * (PEEK_LINES + 1))
    late = _session(tmp_path / "late.jsonl", datetime(2025, 1, 1, tzinfo=timezone.utc), lead=["{}"] * PEEK_LINES)
    assert started_at(older) == started_at(tie) and started_at(timeless) is None  # past the lines with no time
    assert started_at(late) is None  # its first time lies past the lines read
    assert oldest_first(find_sessions([tmp_path])) == [older, tie, newer, timeless, late]
    assert oldest_first(find_sessions([newer, older])) == [older, newer]  # files named one by one too
