"""capture_transcript and the bulk importer on a real SQLite file: cursors, idempotence, grown turns, rewinds,
projects, outcomes, and what is never stored (Tempera's own injected context)."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_paths import DATA, TRANSCRIPTS
from transcript_writer import SessionWriter

from tempera.core.errors import NotFound
from tempera.core.marker import wrap
from tempera.core.memory import Memory
from tempera.core.project import project_for_name
from tempera.transcripts import capture_transcript
from tempera.transcripts.importer import find_sessions, import_transcripts


def _episodes(mem: Memory) -> list:
    return list(mem.store.iter_episodes(newest_first=False))


def test_importing_twice_adds_nothing(kw_memory: Memory) -> None:
    files = find_sessions([TRANSCRIPTS, DATA])
    first = import_transcripts(kw_memory, files)
    assert first.added == first.units >= first.turns > 20 and first.lines_skipped == 3
    assert not any(f.name.startswith("agent-") for f in files)
    second = import_transcripts(kw_memory, files)
    assert (second.added, second.updated, second.skipped) == (0, 0, first.units)
    assert kw_memory.store.count() == first.added


def test_appended_turns_add_exactly_those(kw_memory: Memory, session: SessionWriter) -> None:
    for n in (1, 2):
        session.prompt(f"rename helper number {n}")
        session.say(f"Renamed helper {n}.")
    assert len(capture_transcript(kw_memory, session.path).added) == 2
    for n in (3, 4):
        session.prompt(f"rename helper number {n}")
        session.say(f"Renamed helper {n}.")
    result = capture_transcript(kw_memory, session.path)
    assert [e.intent.raw_prompt for e in result.added] == ["rename helper number 3", "rename helper number 4"]
    assert (result.turns, len(result.updated), result.skipped) == (4, 0, 2)
    again = capture_transcript(kw_memory, session.path)
    assert (len(again.added), len(again.updated), again.skipped) == (0, 0, 4)
    assert kw_memory.store.count() == 4


def test_grown_last_turn_updates_its_episode(kw_memory: Memory, session: SessionWriter) -> None:
    """Stop fires after every assistant turn; more work before the user speaks again grows the same turn."""
    session.prompt("make the checkout tests pass")
    session.bash("pytest -q tests/test_checkout.py", "1 failed, 4 passed in 0.3s", ok=False)
    (first,) = capture_transcript(kw_memory, session.path).added
    assert first.outcome.status == "failure"
    session.tool(
        "Edit",
        {"file_path": "/nonexistent/work/shop/checkout.py", "old_string": "a", "new_string": "b"},
        "The file has been updated.",
    )
    session.bash("pytest -q tests/test_checkout.py", "5 passed in 0.3s")
    session.say("Fixed the rounding in checkout.py; all 5 tests pass.")
    result = capture_transcript(kw_memory, session.path)
    assert result.added == [] and [e.id for e in result.updated] == [first.id]
    stored = kw_memory.store.get(first.id)
    assert stored.outcome.status == "success" and stored.context.files_modified == ["checkout.py"]
    assert stored.created_at == first.created_at and kw_memory.store.count() == 1


def test_prompt_without_work_is_kept_then_grows(kw_memory: Memory, session: SessionWriter) -> None:
    session.prompt("why is the nightly export slow?")
    (ep,) = capture_transcript(kw_memory, session.path).added
    assert ep.outcome.status == "unknown"
    session.say("The export query scans the orders table without an index on created_at.")
    assert [e.id for e in capture_transcript(kw_memory, session.path).updated] == [ep.id]
    assert kw_memory.store.get(ep.id).outcome.status == "success"


def test_partial_last_line_waits_for_the_rest(kw_memory: Memory, session: SessionWriter) -> None:
    session.prompt("bump the version")
    session.say("Bumped to 1.2.0.")
    whole = session.path.read_bytes()
    session.prompt("now tag the release")
    session.say("Tagged v1.2.0.")
    full = session.path.read_bytes()
    session.path.write_bytes(full[: len(full) - 40])  # the writer is mid-line
    result = capture_transcript(kw_memory, session.path)
    assert result.lines_skipped == 0 and len(result.added) == 2  # second prompt whole, its reply not yet
    session.path.write_bytes(full)
    result = capture_transcript(kw_memory, session.path)
    assert [e.summary.splitlines()[-1] for e in result.updated] == ["Tagged v1.2.0."]
    assert len(whole) < len(full)


def test_rewind_after_capture_adds_the_new_branch(kw_memory: Memory, session: SessionWriter) -> None:
    session.prompt("add a discount field")
    fork = session.say("Added `discount` to Order.")
    session.prompt("store it in cents")
    session.say("Discount is now stored in cents.")
    assert len(capture_transcript(kw_memory, session.path).added) == 2
    session.last = fork  # the user rewinds to before "store it in cents" and asks something else
    session.prompt("store it as a percentage instead")
    session.say("Discount is now a percentage.")
    result = capture_transcript(kw_memory, session.path)
    assert [e.intent.raw_prompt for e in result.added] == ["store it as a percentage instead"]
    assert result.turns == 2  # the rewound branch is no longer a turn of the conversation


def test_injected_context_never_reaches_memory(kw_memory: Memory, session: SessionWriter) -> None:
    injected = "Past episode: the PAYMENTS_SANDBOX flag breaks refunds"
    session.attachment({"type": "hook_additional_context", "content": [wrap(injected)], "hookEvent": "SessionStart"})
    session.prompt(f"{wrap(injected)}\nrefund order 42 again\n<system-reminder>{injected}</system-reminder>")
    session.tool(
        "Read",
        {"file_path": "/nonexistent/work/shop/refunds.py"},
        f"def refund(): ...\n<system-reminder>{wrap(injected)}</system-reminder>",
    )
    session.say("Refunded order 42.")
    (ep,) = capture_transcript(kw_memory, session.path).added
    assert ep.intent.raw_prompt == "refund order 42 again"
    kw_memory.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert b"PAYMENTS_SANDBOX" not in kw_memory.db.path.read_bytes()


def test_project_is_the_git_root_of_the_cwd(kw_memory: Memory, tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    (repo / "api").mkdir()
    writer = SessionWriter(tmp_path / "t" / "a1.jsonl", cwd=str(repo / "api"))
    writer.prompt("list the routes")
    writer.say("There are 12 routes.")
    (ep,) = capture_transcript(kw_memory, writer.path).added
    assert (ep.project_path, ep.project_name) == (str(repo.resolve()), "shop")


def test_project_of_a_cwd_not_on_this_machine_and_override(kw_memory: Memory, session: SessionWriter) -> None:
    session.prompt("list the routes")
    session.say("There are 12 routes.")
    result = capture_transcript(kw_memory, session.path, dry_run=True)
    assert result.project and result.project.path == "/nonexistent/work/shop"
    assert kw_memory.store.count() == 0  # dry run
    with pytest.raises(NotFound, match="unknown project 'storefront'"):  # a typo must not make a project
        capture_transcript(kw_memory, session.path, project="storefront")
    kw_memory.store.projects.ensure(project_for_name("storefront"))
    (ep,) = capture_transcript(kw_memory, session.path, project="storefront").added
    assert ep.project_name == "storefront" and ep.project_path is None


def test_outcome_tests_commit_and_followups(kw_memory: Memory, session: SessionWriter) -> None:
    session.prompt("fix the failing invoice total test")
    session.bash(
        "python -m pytest tests/test_invoice.py -q",
        "FAILED tests/test_invoice.py::test_total - assert 10.0 == 10.5\n1 failed in 0.2s",
        ok=False,
    )
    session.tool(
        "Edit",
        {"file_path": "/nonexistent/work/shop/invoice.py", "old_string": "x", "new_string": "y"},
        "The file has been updated.",
    )
    session.attachment(
        {
            "type": "queued_command",
            "prompt": "and keep the rounding mode",
            "commandMode": "prompt",
            "origin": {"kind": "human"},
        }
    )
    session.bash("python -m pytest tests/test_invoice.py -q", "3 passed in 0.2s")
    session.bash("git commit -am 'Fix invoice total rounding'", "[main 3f9a2c1] Fix invoice total rounding\n 1 file")
    session.say("Fixed: totals were rounded before tax. Tests pass and the fix is committed.")
    (ep,) = capture_transcript(kw_memory, session.path).added
    assert ep.intent.task_type == "bugfix" and "python" in ep.intent.domains
    assert ep.intent.raw_prompt.endswith("Then: and keep the rounding mode")
    assert [(t.passed, t.summary) for t in ep.outcome.tests_before] == [(False, "1 failed in 0.2s")]
    assert [(t.passed, t.summary) for t in ep.outcome.tests_after] == [(True, "3 passed in 0.2s")]
    assert ep.outcome.status == "success" and ep.outcome.commit == "3f9a2c1"
    assert ep.outcome.verification.value == "tests_pass"
    (err,) = ep.context.errors
    assert err.resolved and "invoice.py" in (err.resolution or "")
    assert "Fixed: totals were rounded before tax." in ep.summary


def test_same_error_elsewhere_has_the_same_fingerprint(
    kw_memory: Memory, session: SessionWriter, tmp_path: Path
) -> None:
    other = SessionWriter(tmp_path / "other" / "b2.jsonl", cwd="/elsewhere/shop")
    for writer, path in ((session, "/nonexistent/work/shop/app.py"), (other, "/home/x/shop/src/app.py")):
        writer.prompt("run the app")
        writer.bash(
            "python app.py",
            f"Traceback (most recent call last):\n  File \"{path}\", line 3\nKeyError: 'DATABASE_URL'",
            ok=False,
        )
        writer.say("It needs DATABASE_URL.")
    a = capture_transcript(kw_memory, session.path).added[0].context.errors[0]
    b = capture_transcript(kw_memory, other.path).added[0].context.errors[0]
    assert a.message == "KeyError: 'DATABASE_URL'" and a.fingerprint == b.fingerprint and not a.resolved
