"""Work units and what is a prompt, on real Claude Code records (data/entire-cli, see its README): each rule of
units.py and turns.py, the compaction summary feeding the episodes, the counted records that are no prompt, and
a transcript captured as it grows ending with exactly the episodes of one capture of the whole file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from transcript_paths import DATA
from transcript_writer import SessionWriter

from tempera.core.memory import Memory
from tempera.transcripts.capture import capture_transcript
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import record_counts, segment_turns
from tempera.transcripts.units import work_units

ENTIRE = DATA / "entire-cli"


def units_of(name: str) -> list:
    return work_units(segment_turns(read_transcript(next(ENTIRE.glob(name + "*.jsonl")))))


def copy(name: str, tmp_path: Path) -> Path:
    src = next(ENTIRE.glob(name + "*.jsonl"))
    dst = tmp_path / "projects" / "-Users-dev-cli" / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def test_task_items_cut_a_long_turn_and_name_its_units() -> None:
    units = [u for u in units_of("8b418ea5") if u.index == 0]
    assert [(u.unit.reason, u.prompt) for u in units] == [
        ("prompt", units[0].unit.turn_prompt),
        ("task", "Move help.go to cmd/entire/cli/"),
        ("task", "Run tests and lint"),
    ]
    assert units[0].prompt.startswith("I'm working on linear ENT-98")
    assert "Update package declaration from commands to cli" in units[1].unit.done
    # the units partition the turn: every tool call is in exactly one of them
    turn = segment_turns(read_transcript(next(ENTIRE.glob("8b418ea5*.jsonl"))))[0]
    assert [c.id for u in units for c in u.tool_calls] == [c.id for c in turn.tool_calls]


def test_a_test_run_turning_green_cuts_after_the_task_items() -> None:
    units = units_of("deeac353-lines-144-268")
    assert [u.unit.reason for u in units] == ["prompt", "task", "task", "tests"]
    assert units[1].prompt == "Fix GetSessionDir calls (resume.go, rewind.go, session.go)"
    runs = [r.passed for u in units[:3] for r in u.test_runs]
    assert False in runs and units[3].test_runs[-1].passed
    # the green-tests unit is about the task item in progress, not the turn's prompt or the agent's remark
    assert units[3].unit.intent == units[3].prompt == "Run tests to verify fixes"


def _todo(s: SessionWriter, item: str, status: str = "in_progress") -> None:
    s.tool("TodoWrite", {"todos": [{"content": item, "status": status, "activeForm": item}]}, "Todos updated")


@pytest.mark.parametrize(
    ("todo_now", "reasons", "intent"),
    [(False, ["prompt"], "fix the lint errors"), (True, ["prompt", "tests"], "Fix lint in logger.go")],
)
def test_a_task_item_an_earlier_turn_left_in_progress_does_not_name_new_work(
    tmp_path: Path, todo_now: bool, reasons: list[str], intent: str
) -> None:
    s = SessionWriter(tmp_path / "s.jsonl", cwd="/Users/dev/cli")
    s.prompt("rename the checkpoint helper")
    _todo(s, "Rename the checkpoint helper")
    s.say("Renamed it.")
    s.prompt("fix the lint errors")
    if todo_now:
        _todo(s, "Fix lint in logger.go")
    s.bash("go test ./...", "--- FAIL: TestLogger (0.00s)\nFAIL", ok=False)
    for i in range(8):
        s.tool("Read", {"file_path": f"/Users/dev/cli/logging/f{i}.go"}, "package logging")
    s.bash("go test ./...", "ok  \tgithub.com/dev/cli/logging\t0.2s")
    s.tool("Bash", {"command": "go vet ./..."}, "", text="All tests pass. Let me run vet too:")
    s.say("Lint is clean.")
    units = [u for u in work_units(segment_turns(read_transcript(s.path))) if u.index == 1]
    # the green tests cut the turn only when what follows has an intent of its own (else both units would be
    # "fix the lint errors"); never the stale item "Rename the checkpoint helper", nor the agent's "All tests pass."
    assert [u.unit.reason for u in units] == reasons
    assert units[-1].unit.intent == intent


def test_a_commit_closes_a_unit_and_is_named_in_its_summary(kw_memory: Memory, tmp_path: Path) -> None:
    units = units_of("58e50d6c-lines-4-157")
    assert [u.unit.reason for u in units] == ["prompt", "commit"]
    assert units[0].unit.commits == ["fix: address PR review feedback on gitutil package"]
    added = capture_transcript(kw_memory, copy("58e50d6c-lines-4-157", tmp_path)).added
    assert "Committed: fix: address PR review feedback on gitutil package." in added[0].summary
    assert added[0].outcome.commit
    # the unit after the commit opens with the agent's interim remark; its intent is the turn's request instead
    assert units[1].messages[1].text.startswith("Now let me reply to the PR comment threads.")
    assert units[1].unit.intent == units[1].unit.turn_prompt == "/github-pr-review"
    assert added[1].intent.extracted == "/github-pr-review" and "let me reply" not in added[1].summary


def test_the_compaction_summary_closes_one_unit_and_opens_the_next(kw_memory: Memory, tmp_path: Path) -> None:
    units = units_of("deeac353-lines-421-468")
    assert [u.unit.reason for u in units] == ["prompt", "compaction"]
    assert units[0].unit.compact_summary.startswith("I had just finished updating CLAUDE.md")
    assert units[1].prompt.startswith('User\'s most recent message was: "could we have a linting rule?"')
    first, second = capture_transcript(kw_memory, copy("deeac353-lines-421-468", tmp_path)).added
    assert "I had just finished updating CLAUDE.md" in first.summary  # the closing message was an interim remark
    assert "could we have a linting rule?" in second.summary
    # the prompt typed while the agent worked (queue-operation enqueue, then remove) was handed over in unit 1
    assert first.intent.raw_prompt.endswith("Then: could we have a linting rule?")


def test_a_session_that_opens_with_a_compaction_summary_keeps_its_work(tmp_path: Path) -> None:
    src = next(ENTIRE.glob("deeac353-lines-421-468.jsonl"))
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if '"isCompactSummary":true' in ln)
    continued = tmp_path / "continued.jsonl"
    continued.write_text("".join(lines[start:]), encoding="utf-8")
    [unit] = work_units(segment_turns(read_transcript(continued)))
    assert unit.kind == "continuation" and len(unit.tool_calls) == 9
    assert "CWD vs repo root" in unit.prompt  # the summary's primary request


def test_short_turns_stay_one_episode_each() -> None:
    units = units_of("645ea3df")
    assert [u.unit.reason for u in units] == ["prompt"] * 3
    assert not any(u.followups for u in units)  # "/model" queued while the agent worked is no followup


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("1ecba475", {"hook_stop": 1, "interrupt": 1}),
        ("8b418ea5", {"meta": 2, "local": 1, "interrupt": 1}),
        ("645ea3df", {"meta": 1, "local": 1}),
    ],
)
def test_records_that_are_no_prompt_are_counted_by_reason(name: str, counts: dict[str, int]) -> None:
    transcript = read_transcript(next(ENTIRE.glob(name + "*.jsonl")))
    assert dict(record_counts(transcript)) == counts
    prompts = [t.prompt for t in segment_turns(transcript)]
    assert not any(p.startswith(("Operation stopped by hook", "[Request interrupted", "<")) for p in prompts)


def test_an_ide_notice_is_stripped_from_the_prompt() -> None:
    path = next(ENTIRE.glob("1b3e6441*.jsonl"))
    assert "<ide_opened_file>" in path.read_text(encoding="utf-8")
    [turn] = segment_turns(read_transcript(path))
    assert turn.prompt.startswith("create me a .github/CODEOWNERS") and "ide_opened_file" not in turn.prompt
    assert not turn.followups  # the dequeued prompt became a prompt record of its own


def _with_user_text(tmp_path: Path, texts: list[str]) -> Path:
    """A real session (1b3e6441) with user records appended whose envelope is its prompt record's, text replaced."""
    src = next(ENTIRE.glob("1b3e6441*.jsonl"))
    lines = src.read_text(encoding="utf-8").splitlines()
    envelope = next(json.loads(ln) for ln in lines if '"type":"user"' in ln and "ide_opened_file" in ln)
    last = json.loads(lines[-1])
    for n, text in enumerate(texts):
        rec = {
            **envelope,
            "uuid": f"00000000-0000-4000-8000-00000000000{n}",
            "parentUuid": last.get("uuid"),
            "message": {"role": "user", "content": text},
        }
        lines.append(json.dumps(rec))
        last = rec
    out = tmp_path / src.name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_notifications_and_ide_notices_alone_are_no_prompt(tmp_path: Path) -> None:
    path = _with_user_text(
        tmp_path,
        [
            "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>Background command "
            '"go test ./..." completed (exit code 0)</summary>\n</task-notification>',
            "<ide_opened_file>The user opened the file /Users/dev/cli/main.go in the IDE. This may or may not be "
            "related to the current task.</ide_opened_file>",
            "Operation stopped by hook: Another session is active",
        ],
    )
    transcript = read_transcript(path)
    assert len(segment_turns(transcript)) == 1
    assert dict(record_counts(transcript)) == {"notification": 1, "empty": 1, "hook_stop": 1}


def test_a_rewound_branch_is_counted(tmp_path: Path) -> None:
    s = SessionWriter(tmp_path / "s.jsonl")
    s.prompt("add a retry to the uploader")
    answer = s.say("Added a retry with backoff to the uploader.")
    s.prompt("now make it three retries")
    s.say("Three retries now.")
    s.prompt("now make it five retries", parent=answer)  # the user edited the second prompt (a rewind)
    s.say("Five retries now.")
    transcript = read_transcript(s.path)
    assert record_counts(transcript)["rewound branch"] == 2
    assert [t.prompt for t in segment_turns(transcript)] == ["add a retry to the uploader", "now make it five retries"]


def _edits(s: SessionWriter, folder: str, n: int) -> None:
    for i in range(n):
        s.tool("Read", {"file_path": f"/Users/dev/cli/{folder}/f{i}.go"}, "package x")
        s.tool(
            "Edit",
            {"file_path": f"/Users/dev/cli/{folder}/f{i}.go", "old_string": "a", "new_string": "b"},
            "The file has been updated.",
        )


@pytest.mark.parametrize("item_done", [True, False])
def test_a_change_of_the_files_worked_on_cuts_a_unit_it_tells_apart(tmp_path: Path, item_done: bool) -> None:
    """The new folder's edits are a unit of their own when the work before them can be told from them (here a
    task item finished); else both would be stored as "clean up ..." alone, and the work stays one unit."""
    s = SessionWriter(tmp_path / "s.jsonl", cwd="/Users/dev/cli")
    s.prompt("clean up the checkpoint package, then the strategy package")
    _edits(s, "checkpoint", 4)
    if item_done:
        _todo(s, "Tidy the checkpoint package", "completed")
    s.say("The checkpoint package is tidy.")
    _edits(s, "strategy", 2)
    s.say("Both packages are cleaned up: checkpoint and strategy no longer duplicate the tree walk.")
    units = work_units(segment_turns(read_transcript(s.path)))
    folders = [{f.split("/")[-2] for f in u.files_modified} for u in units]
    if item_done:
        assert [u.unit.reason for u in units] == ["prompt", "files"]
        assert folders == [{"checkpoint"}, {"strategy"}] and units[0].unit.done == ["Tidy the checkpoint package"]
    else:
        assert [u.unit.reason for u in units] == ["prompt"] and folders == [{"checkpoint", "strategy"}]


def test_summaries_are_short_plain_and_relative(kw_memory: Memory, tmp_path: Path) -> None:
    s = SessionWriter(tmp_path / "projects" / "-Users-dev-cli" / "s.jsonl", cwd="/Users/dev/cli")
    s.prompt("plan and fix the flaky checkpoint test")
    s.tool("Write", {"file_path": "/Users/dev/.claude/plans/flaky-test.md", "content": "plan"}, "File created.")
    for i in range(3):
        s.tool(
            "Edit",
            {"file_path": "/Users/dev/cli/cmd/checkpoint/c.go", "old_string": str(i), "new_string": "x"},
            "The file has been updated.",
        )
    s.bash("go test ./cmd/checkpoint/...", "ok  \tgithub.com/dev/cli/cmd/checkpoint\t0.3s")
    s.say(
        "Fixed the flaky test in /Users/dev/cli/cmd/checkpoint/c.go: the temp dir is now per test.\n\n"
        "| file | change |\n|---|---|\n| c.go | per-test dir |\n\n```go\nt.TempDir()\n```\n"
        "Want me to run the whole suite?"
    )
    [ep] = capture_transcript(kw_memory, s.path).added
    assert ep.context.files_modified == ["cmd/checkpoint/c.go"]  # relative, once, and no plan file
    assert "/Users/dev/cli/" not in ep.summary and "|" not in ep.summary and "```" not in ep.summary
    assert "per test" in ep.summary and "Want me to" not in ep.summary and len(ep.summary) <= 480


def test_a_growing_transcript_ends_with_the_episodes_of_one_whole_capture(tmp_path: Path) -> None:
    src = next(ENTIRE.glob("8b418ea5*.jsonl"))
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    grown = tmp_path / "grown" / src.name
    grown.parent.mkdir()
    with Memory(use_model=False) as mem:
        for end in (30, 60, 90, 120, len(lines)):  # Stops (or watcher events) at arbitrary points mid-turn
            grown.write_text("".join(lines[:end]), encoding="utf-8")
            capture_transcript(mem, grown)
        incremental = sorted((e.source.record_uuids[0], e.summary) for e in mem.store.iter_episodes())
    whole = tmp_path / "whole" / src.name
    whole.parent.mkdir()
    shutil.copy(src, whole)
    with Memory(use_model=False, db_path=tmp_path / "other.db") as other:
        capture_transcript(other, whole)
        once = sorted((e.source.record_uuids[0], e.summary) for e in other.store.iter_episodes())
    assert incremental == once and len(once) == len(units_of("8b418ea5"))


YES = "1ebc3078-8d12-45fe-9810-62432f202dc2"  # the user's "yes" in 38917d7d-lines-37-70


def test_a_bare_reply_continues_the_request_it_answers(kw_memory: Memory, tmp_path: Path) -> None:
    """ "yes" to the agent's proposal asks nothing of its own: the work it approved is the request's."""
    [unit] = units_of("38917d7d-lines-37-70")
    assert unit.prompt == "where else is settings.Telemetry used ?" and YES in unit.record_uuids
    assert [c.name for c in unit.tool_calls][-3:] == ["Read", "Edit", "ExitPlanMode"]  # the approved work
    [ep] = capture_transcript(kw_memory, copy("38917d7d-lines-37-70", tmp_path)).added
    assert ep.summary.startswith("where else is settings.Telemetry used ?\nHere's where settings.Telemetry is used")
    assert YES in ep.source.record_uuids and "stale comment in main.go:27" in ep.summary  # the answer it approved
    assert {"Edit", "ExitPlanMode"} <= set(ep.context.tools) and ep.outcome.status == "partial"


def test_a_reply_after_a_capture_updates_the_episode_of_its_request(kw_memory: Memory, tmp_path: Path) -> None:
    """A Stop before the "yes" stored the request; Stops after it update that episode, never add a "yes" one."""
    lines = (ENTIRE / "38917d7d-lines-37-70.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    live = tmp_path / "projects" / "-Users-dev-cli" / "38917d7d.jsonl"
    live.parent.mkdir(parents=True)
    live.write_text("".join(lines[:18]), encoding="utf-8")  # the Stop after the agent's proposal
    [first] = capture_transcript(kw_memory, live).added
    for end in (19, len(lines)):  # the reply written, then the work it approved
        live.write_text("".join(lines[:end]), encoding="utf-8")
        result = capture_transcript(kw_memory, live)
        assert result.added == [] and [e.id for e in result.updated] == [first.id]
    [stored] = kw_memory.store.iter_episodes()
    assert stored.id == first.id and YES in stored.source.record_uuids and "ExitPlanMode" in stored.context.tools
    assert stored.summary.startswith("where else is settings.Telemetry used ?")


def test_a_prompt_sent_again_after_a_hook_stopped_it_is_one_request() -> None:
    turns = segment_turns(read_transcript(next(ENTIRE.glob("1ecba475*.jsonl"))))
    assert [t.prompt for t in turns] == ["fix tests", "fix the test, the code is right"]


def test_a_prompt_sent_early_then_whole_is_one_request_named_by_its_whole_text() -> None:
    [turn] = segment_turns(read_transcript(next(ENTIRE.glob("60b38d1e-lines-159-166.jsonl"))))
    assert turn.prompt.startswith('instead of "Another sessions..."') and turn.prompt.endswith("<claude or gemini>")
    assert not turn.interrupted and turn.records[-1].type == "assistant"


def test_units_of_one_request_that_nothing_tells_apart_stay_one(kw_memory: Memory, tmp_path: Path) -> None:
    """Tests fail, are fixed and pass, then pass again in the full suite, no closing words: cut at the green tests,
    both units would read "fix mise test" (one with the file, one without)."""
    [unit] = units_of("3de3ff10")
    assert [r.passed for r in unit.test_runs] == [False, True, True]
    [ep] = capture_transcript(kw_memory, copy("3de3ff10", tmp_path)).added
    assert ep.summary == "fix mise test" and ep.context.files_modified == ["cmd/entire/cli/reset_test.go"]
    assert ep.outcome.status == "success"
