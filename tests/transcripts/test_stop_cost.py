"""A Stop costs what is new: a capture reads a transcript from where the last one left it (`transcripts/since.py`),
and stores exactly what reading the whole file at every Stop stores, on real sessions cut where the hooks fire."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from transcript_paths import DATA, REAL
from transcript_writer import SessionWriter

from evals import stop_replay
from tempera.core.memory import Memory
from tempera.transcripts import capture_transcript
from tempera.transcripts import cursor as cursors

ENTIRE = DATA / "entire-cli"
SLICE = ENTIRE / "880d23f9-lines-369-445.jsonl"  # four prompts, the last compacted mid-turn


@pytest.mark.parametrize(
    "path",
    [
        SLICE,
        ENTIRE / "4e836284-4a0a-44a1-acb3-38c68db78007.jsonl",  # five prompts
        ENTIRE / "8b418ea5-895d-4ad5-abe8-4489d36e454f.jsonl",  # task items followed across turns, an interruption
        ENTIRE / "deeac353-lines-421-468.jsonl",  # a compaction and a prompt queued mid-turn
        ENTIRE / "645ea3df-c4e9-44bc-b333-22c9893c32c5.jsonl",  # queue operations, a local command
        REAL,  # a subagent file growing beside the session, a /compact
    ],
    ids=lambda p: p.name[:8],
)
def test_stop_by_stop_stores_what_whole_reads_store(path: Path) -> None:
    """Episodes (byte for byte but ids and times), mistakes, should-have-asked rows and facts are the same as when
    every Stop reads the whole file, and as one capture of the whole session; and the Stops read less in all."""
    found = stop_replay.compare(path)
    assert found["same"] and found["same_as_one_capture"], found
    assert found["read_per_size"] < found["read_per_size_whole"] or found["captures"] < 10


def test_a_stop_reads_from_the_turn_before_the_last() -> None:
    """The last Stop of the slice reads from its third prompt on (the turn before the last), not the 298 KB."""
    found = stop_replay.compare(SLICE)
    third = SLICE.read_bytes().index(b"question is: why is it even using this prompt?")
    start = SLICE.read_bytes().rindex(b"\n", 0, third) + 1
    assert found["last_stop_read"] == found["bytes"] - start == 104_924


def _turns(session: SessionWriter, *names: str) -> list[str]:
    """One short turn per name; the uuids of their prompts."""
    prompts = []
    for name in names:
        prompts.append(session.prompt(f"rename helper {name}"))
        session.say(f"Renamed helper {name}.")
    return prompts


def test_a_cursor_without_a_place_reads_whole_once(kw_memory: Memory, session: SessionWriter) -> None:
    """A cursor an older version wrote (no place to read from) costs one whole read, then reads from its place."""
    _turns(session, "a", "b", "c")
    assert len(capture_transcript(kw_memory, session.path).added) == 3
    with kw_memory.db.transaction():
        kw_memory.db.execute("UPDATE transcript_cursors SET since = NULL")
    _turns(session, "d")
    whole = capture_transcript(kw_memory, session.path)
    assert (whole.read_from, [e.intent.raw_prompt for e in whole.added]) == (0, ["rename helper d"])
    _turns(session, "e")
    later = capture_transcript(kw_memory, session.path)
    assert later.read_from > 0 and [e.intent.raw_prompt for e in later.added] == ["rename helper e"]
    assert (later.turns, later.units, kw_memory.store.count()) == (5, 5, 5)


@pytest.mark.parametrize("change", ["shrunk", "rewritten"])
def test_a_changed_file_is_read_whole(kw_memory: Memory, session: SessionWriter, change: str) -> None:
    """A file that shrank below the place, or holds another record there, is read whole: nothing added twice."""
    b = _turns(session, "a", "b", "c")[1]
    first = capture_transcript(kw_memory, session.path)
    data = session.path.read_bytes()
    assert first.read_from == 0 and data.index(b.encode()) > 0  # the next capture would read from b's prompt
    other = data.replace(b.encode(), b"0" * len(b))  # b's prompt under another uuid, every byte where it was
    session.path.write_bytes(data[: data.index(b.encode()) - 10] if change == "shrunk" else other)
    again = capture_transcript(kw_memory, session.path)
    assert (again.read_from, again.added, kw_memory.store.count()) == (0, [], 3)


def test_a_rewind_above_the_place_is_read_whole(kw_memory: Memory, session: SessionWriter) -> None:
    """Editing an earlier prompt forks above where the next capture would read from: only the whole file tells
    which branch is the conversation."""
    _turns(session, "a")
    fork = session.last
    _turns(session, "b", "c", "d")
    capture_transcript(kw_memory, session.path)
    session.last = fork
    _turns(session, "x")
    result = capture_transcript(kw_memory, session.path)
    assert (result.read_from, [e.intent.raw_prompt for e in result.added]) == (0, ["rename helper x"])
    assert result.turns == 2


def test_a_subagent_of_a_turn_above_the_place_is_not_read_again(kw_memory: Memory, tmp_path: Path) -> None:
    """The real 2.1.197 session (its second turn ran a subagent, `<session>/subagents/`) grown by two more turns:
    the subagent's turn now lies above the place, so its file is not read again, and Stop by Stop still stores
    what reading the whole file at every Stop stores."""
    shutil.copytree(REAL.parent, tmp_path, dirs_exist_ok=True)
    path = tmp_path / REAL.name
    (agent,) = (path.parent / path.stem / "subagents").glob("agent-*.jsonl")
    session = SessionWriter(path, session_id=path.stem, cwd="/tmp/ccrun/proj", start=datetime(2026, 12, 1, tzinfo=UTC))
    session.last = "f365fbeb-6771-4ff0-ad9d-7f29b7619911"  # the session's last record
    capture_transcript(kw_memory, path)
    _turns(session, "a", "b")
    grown = capture_transcript(kw_memory, path)
    assert grown.read_from > 0 and [e.intent.raw_prompt for e in grown.added] == ["rename helper a", "rename helper b"]
    cursor = cursors.load(kw_memory.db, str(path.resolve()), path.stem)
    assert cursor.since is not None and cursor.since.settled == [str(agent)]
    assert stop_replay.compare(path)["same"]
