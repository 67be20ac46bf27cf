"""The reader and turn segmentation over every real transcript we have, with counts verified by hand."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from transcript_paths import DATA, REAL, TRANSCRIPTS

from tempera.transcripts import read_transcript, segment_turns

ALL_FILES = sorted(TRANSCRIPTS.rglob("*.jsonl")) + sorted(DATA.rglob("*.jsonl"))


def test_real_transcripts_are_present() -> None:
    assert len(list(TRANSCRIPTS.rglob("*.jsonl"))) >= 10, f"real transcripts missing under {TRANSCRIPTS}"


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:30])
def test_every_file_reads_and_segments(path: Path) -> None:
    transcript = read_transcript(path)
    turns = segment_turns(transcript)
    assert transcript.lines_read > 0
    for turn in turns:
        assert turn.prompt_line >= 1 and turn.kind in ("prompt", "command")
        assert all(c.id and c.name for c in turn.all_tool_calls)
        assert all(len(e.fingerprint) == 16 for e in turn.errors)


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name[:30])
def test_file_cut_anywhere_never_raises(path: Path, tmp_path: Path) -> None:
    """A file still being written: any prefix reads, and its last partial line is not counted as broken."""
    data = path.read_bytes()
    whole = read_transcript(path)
    rng = random.Random(path.name)
    for cut in sorted(rng.sample(range(1, len(data)), k=min(8, len(data) - 1))):
        part = tmp_path / path.name
        part.write_bytes(data[:cut])
        t = read_transcript(part)
        segment_turns(t)
        assert t.lines_skipped <= whole.lines_skipped


def _counts(path: Path) -> dict[str, object]:
    turns = segment_turns(read_transcript(path))
    return {
        "turns": len(turns),
        "tool_calls": [len(t.tool_calls) for t in turns],
        "subagent_calls": [sorted(len(s.tool_calls) for s in t.subagents) for t in turns],
        "files_read": sum(len(t.files_read) for t in turns),
        "files_modified": sum(len(t.files_modified) for t in turns),
        "errors": sum(len(t.errors) for t in turns),
    }


# Counted by hand from the files (see the notes beside each).
HAND_COUNTED = {
    # 2 prompts; /mcp is a local command. Turn 1: Bash x2, interrupted. Turn 2: WebSearch, Glob, Read, WebFetch.
    "spotter/tool_heavy.jsonl": {
        "turns": 2,
        "tool_calls": [2, 4],
        "subagent_calls": [[], []],
        "files_read": 1,
        "files_modified": 0,
        "errors": 0,
    },
    # One /orchestrator turn: 13 main calls; two inline sidechains (Glob+Read; 5 Bash+Read); a Task call failed
    # (missing prompt), an Edit before Read failed, a subagent's `tree` failed.
    "claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": {
        "turns": 1,
        "tool_calls": [13],
        "subagent_calls": [[2, 6]],
        "files_read": 2,
        "files_modified": 1,
        "errors": 3,
    },
    # Rewind drops "First attempt"; compaction keeps the chain; "Keep going" asks nothing new (folded); no tools.
    "claude-code-log/dag_compact_after_rewind.jsonl": {
        "turns": 3,
        "tool_calls": [0, 0, 0],
        "subagent_calls": [[], [], []],
        "files_read": 0,
        "files_modified": 0,
        "errors": 0,
    },
    # 4 prompts (one is `["wow error"]`); FailingTool fails; `/test-command` is answered locally: no turn.
    "claude-code-log/edge_cases.jsonl": {
        "turns": 4,
        "tool_calls": [0, 1, 1, 0],
        "subagent_calls": [[], [], [], []],
        "files_read": 0,
        "files_modified": 0,
        "errors": 1,
    },
}


@pytest.mark.parametrize("name", sorted(HAND_COUNTED))
def test_hand_counted_shared_files(name: str) -> None:
    assert _counts(TRANSCRIPTS / name) == HAND_COUNTED[name]


def test_real_2_1_session_turns() -> None:
    """Claude Code 2.1.197: attachments, queue operations, last-prompt, a subagent file, /compact."""
    t = read_transcript(REAL)
    assert t.session_id == "a614ea48-ced2-49e7-a543-d3cc93c549be" and t.cwd == "/tmp/ccrun/proj"
    assert t.unknown_types == {} and t.lines_skipped == 0
    assert {"attachment", "queue-operation", "last-prompt", "mode"} <= set(t.type_counts)
    fix, docs, rerun = segment_turns(t)
    assert fix.prompt == "the calc test fails, please fix it"
    assert [c.name for c in fix.tool_calls] == ["Bash", "Read", "Edit", "Bash"]
    assert [(r.command, r.passed) for r in fix.test_runs] == [
        ("python3 test_calc.py", False),
        ("python3 test_calc.py", True),
    ]
    assert [(e.message, e.resolved) for e in fix.errors] == [("AssertionError: add(2, 3) returned -1", True)]
    assert fix.files_modified == ["/tmp/ccrun/proj/calc.py"]
    assert [c.name for c in docs.tool_calls] == ["Agent", "Write"]
    (sub,) = docs.subagents
    assert sub.agent_id == "ae224485594dcefcc" and sub.prompt == "Read calc.py and list its functions."
    assert [c.name for c in sub.tool_calls] == ["Read", "Bash"]
    assert docs.files_read == ["/tmp/ccrun/proj/calc.py"]
    assert [(e.tool, e.resolved) for e in docs.errors] == [("Bash", False)]
    assert rerun.prompt == "run the tests again" and rerun.final_text == "Tests still pass."
    assert all("tempera-memory" not in turn.prompt for turn in (fix, docs, rerun))


def test_rewind_follows_the_branch_of_the_last_record() -> None:
    t = read_transcript(TRANSCRIPTS / "claude-code-log/dag_compact_after_rewind.jsonl")
    turns = segment_turns(t)
    assert [x.prompt for x in turns] == ["Start", "Second attempt", "After compaction"]  # "Keep going": folded
    assert t.abandoned == 2
    assert turns[1].compacted and turns[2].final_text == "Final answer"


def test_compact_summary_is_not_a_prompt() -> None:
    prompts = [x.prompt for x in segment_turns(read_transcript(REAL))]
    assert not any(p.startswith("This session is being continued") for p in prompts)
    assert "/compact" not in prompts


def test_broken_lines_are_counted() -> None:
    t = read_transcript(TRANSCRIPTS / "claude-code-log/edge_cases.jsonl")
    assert t.lines_skipped == 3  # "massive error", 42 and [1]: not JSON objects
    assert t.unknown_types == {"(missing)": 1}  # {"silly": "this"}


def test_regrouped_by_message_id() -> None:
    """spotter writes text, thinking and tool_use of one reply as separate records sharing message.id."""
    turns = segment_turns(read_transcript(TRANSCRIPTS / "spotter/short.jsonl"))
    (turn,) = turns
    first = turn.messages[0]
    assert [b.kind for b in first.blocks] == ["text", "thinking", "text", "tool_use", "tool_use"]
    assert turn.interrupted and len(turn.rejections) == 2 and turn.errors == []


def test_subagent_files_in_old_layout_are_found_by_session(tmp_path: Path) -> None:
    """2.0 wrote `agent-<id>.jsonl` beside the session file; they are folded into the session, never a session."""
    for name in ("5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", "agent-test-hash-123.jsonl"):
        shutil.copy(TRANSCRIPTS / "claude-code-viewer" / name, tmp_path / name)
    t = read_transcript(tmp_path / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert [s.agent_id for s in t.subagents] == ["test-hash-123"]
    assert segment_turns(read_transcript(tmp_path / "agent-test-hash-123.jsonl")) == []
