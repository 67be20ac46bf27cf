"""Scenario 4, format drift: the transcripts the pinned Claude Code writes are read by `read_transcript` and
`segment_turns` without loss. Turns, tool calls (the subagent's too) and files must match what the script did.

Why against a live transcript: the reader was written from transcripts of older versions; every Claude Code release
may add record types or move fields. This is where a version bump shows what changed.
"""

from __future__ import annotations

from pathlib import Path

from messages_stub import Reply
from projects import CALC, TEST_CMD
from replies import bash, edit, read, say, subagent, write
from sandbox import Sandbox

from tempera.transcripts import read_transcript, segment_turns
from tests.support.datadir import wait_for

FIRST = "read calc.py, have a subagent run the tests, then fix add() and write NOTES.md"
SECOND = "also give add() a docstring"
# Record types this Claude Code version writes that the reader does not know, checked by hand to carry no
# conversation (request bookkeeping, cost and tool-usage counters, copies of request messages). A new type here
# fails the test: look at it, then teach tempera/transcripts/reader.py to read it or list it as ignorable.
NO_CONVERSATION_TYPES = {
    "atis-latch",
    "api-request-shape",
    "api-request-blob",
    "api-request",
    "tools-used",
    "cost-state",
}


def _work(repo: Path) -> list[Reply]:
    calc = str(repo / "calc.py")
    return [
        read(calc, id="toolu_fd_read"),
        subagent("Run the tests", f"Run `{TEST_CMD}` and report the failure.", id="toolu_fd_agent"),
        bash(TEST_CMD, id="toolu_fd_sub_bash"),  # the subagent's own call
        say("The test fails: add() subtracts."),  # the subagent's report
        edit(calc, "return a - b", "return a + b", id="toolu_fd_edit"),
        write(str(repo / "NOTES.md"), "add() was subtracting.\n", id="toolu_fd_write"),
        bash(TEST_CMD, id="toolu_fd_bash"),
        say("Fixed add(); notes in NOTES.md."),
    ]


def _docstring(repo: Path) -> list[Reply]:
    return [
        edit(
            str(repo / "calc.py"), "def add(a, b):\n", 'def add(a, b):\n    """Sum of a and b."""\n', id="toolu_fd_doc"
        ),
        say("Added the docstring."),
    ]


def test_transcripts_of_this_version_read_without_loss(installed: Sandbox) -> None:
    box = installed
    repo = box.repo("work/calc-app", CALC)
    first = box.claude(FIRST, cwd=repo, script=_work(repo))
    box.claude(SECOND, cwd=repo, args=("--resume", first.session_id), script=_docstring(repo))
    path = box.transcript(first.session_id)

    transcript = read_transcript(path)
    assert {"attachment", "last-prompt", "queue-operation"} <= set(transcript.type_counts), transcript.type_counts
    assert transcript.lines_skipped == 0
    assert set(transcript.unknown_types) <= NO_CONVERSATION_TYPES, transcript.unknown_types
    assert [s.agent_id for s in transcript.subagents] and transcript.subagents[0].tool_use_id == "toolu_fd_agent"

    turns = segment_turns(transcript)
    assert [t.prompt for t in turns] == [FIRST, SECOND]
    one, two = turns
    assert [(c.id, c.name) for c in one.tool_calls] == [
        ("toolu_fd_read", "Read"),
        ("toolu_fd_agent", "Agent"),
        ("toolu_fd_edit", "Edit"),
        ("toolu_fd_write", "Write"),
        ("toolu_fd_bash", "Bash"),
    ]
    assert all(c.result is not None for c in one.all_tool_calls), [(c.id, c.result) for c in one.all_tool_calls]
    assert [c.is_error for c in one.tool_calls] == [False] * 5
    assert one.tool_calls[0].input["file_path"] == str(repo / "calc.py")
    assert len(one.subagents) == 1
    run = one.subagents[0]
    assert run.tool_use_id == "toolu_fd_agent"
    assert [(c.id, c.name, c.input["command"]) for c in run.tool_calls] == [("toolu_fd_sub_bash", "Bash", TEST_CMD)]
    assert run.tool_calls[0].is_error  # the test really failed inside the subagent
    assert "subtracts" in run.final_text
    assert sorted(Path(f).name for f in one.files_modified) == ["NOTES.md", "calc.py"]
    assert [Path(f).name for f in one.files_read] == ["calc.py"]
    assert one.commands == [TEST_CMD]  # run twice (subagent, main agent), listed once
    assert [(r.call_id, r.passed) for r in one.test_runs] == [("toolu_fd_bash", True)]
    assert one.final_text == "Fixed add(); notes in NOTES.md."
    assert [(c.id, c.name) for c in two.tool_calls] == [("toolu_fd_doc", "Edit")]
    assert [Path(f).name for f in two.files_modified] == ["calc.py"]

    episodes = wait_for(lambda: (eps := box.episodes(first.session_id)) and len(eps) == 2 and eps, timeout=60)
    files = {Path(f).name for ep in episodes for f in ep["context"]["files_modified"]}
    assert files == {"calc.py", "NOTES.md"}, [ep["context"] for ep in episodes]
    box.assert_no_hook_errors()
