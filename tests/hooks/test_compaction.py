"""After a compaction the agent's context no longer holds what the hooks injected: at SessionStart `compact` what
was shown before may be shown again, when it bears on the work in progress (read from the transcript's tail, with
the prompt's relevance gate); a new session shows what its branch's name is about; `clear`, `resume` and `fork` answer
as inject/sessionstart.py says. Real store, real
embedding model, the JSON Claude Code sends, through the hook's gate (`handle_hook`, as the daemon answers it) and
through the hook command without the daemon (simpler there); the transcripts are the real compacted one in
tests/data with the conversation's words put in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hookrun import ENTRY, context_of, run_hook
from shop import BUTTON, EPISODES, FLAKY, PAGES, VAULT, ids_of, shop_repo

from tempera.core import paths
from tempera.core.memory import Memory
from tempera.inject import render
from tempera.inject.warm import handle_hook
from tempera.transcripts.inprogress import TAIL_BYTES
from tests.conftest import FIXTURES
from tests.support.datadir import kill_daemon

COMPACTED = FIXTURES / "transcripts" / "claude-code-log" / "dag_compact_after_rewind.jsonl"
FLAKY_PROMPT = "the checkout test in src/cart/checkout.py is flaky again, fix it"
FLAKY_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. The summary below covers "
    "the earlier portion of the conversation.\n\nSummary:\n1. Primary Request and Intent:\n   The user asked to fix "
    "the flaky checkout test in src/cart/checkout.py.\n\n2. Current Work:\n   Making each checkout test build its "
    "own basket instead of the shared fixture's stale one.\n"
)
UNRELATED_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context.\n\nSummary:\n"
    "1. Primary Request and Intent:\n   The user asked which paint colour suits a small bedroom.\n\n"
    "2. Current Work:\n   Comparing warm whites with pale greys for a north-facing room.\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return shop_repo(tmp_path)


def line_of(summary: str) -> str:
    return ids_of([summary])[summary]


def held(before: str, after: str) -> list[str]:
    """The episodes of `before` that `after` shows again."""
    return [line_of(s) for s, _ in EPISODES if line_of(s) in before and line_of(s) in after]


def transcript(tmp_path: Path, *, summary: str | None = None, last_prompt: str | None = None, output: int = 0) -> Path:
    """The real compacted transcript with words put in: `summary` as its compaction summary, ending there; or,
    as Claude Code's file stands when SessionStart `compact` runs (before the summary is written), cut before the
    compaction with `last_prompt` as its last prompt, followed by `output` bytes of tool output (a long turn)."""
    records = [json.loads(line) for line in COMPACTED.read_text().splitlines()]
    at = next(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    if summary is not None:
        records = records[: at + 2]
        records[-1]["message"]["content"] = [{"type": "text", "text": summary}]
    else:
        records = records[:at]
        prompt = max(i for i, r in enumerate(records) if r["type"] == "user")
        records[prompt]["message"]["content"] = [{"type": "text", "text": last_prompt}]
        if output:
            result = {"type": "tool_result", "tool_use_id": "toolu_long", "content": "ok\n" * (output // 3)}
            records.insert(prompt + 1, {**records[prompt], "message": {"role": "user", "content": [result]}})
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def hook(event: str, repo: Path, session: str, **fields: Any) -> str:
    doc = {"session_id": session, "cwd": str(repo), "hook_event_name": event, **fields}
    with Memory() as mem:
        out = handle_hook(mem, event, doc)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def start(repo: Path, session: str, source: str, path: Path | None = None) -> str:
    return hook("SessionStart", repo, session, source=source, transcript_path=str(path or ""))


def on_branch(repo: Path, branch: str) -> None:
    """The checkout's HEAD on `branch`, as git writes it."""
    (repo / ".git" / "HEAD").write_text(f"ref: refs/heads/{branch}\n")


def test_a_new_session_shows_the_work_its_branch_names_and_nothing_on_the_default_branch(repo: Path) -> None:
    on_branch(repo, "main")
    assert start(repo, "s8", "startup") == ""  # nothing says what the session is about: no "recent work"
    on_branch(repo, "alex/fix-flaky-checkout-test")
    text = start(repo, "s9", "startup")
    assert render.HEADER_SESSION in text and line_of(FLAKY) in text
    assert not any(line_of(s) in text for s in (BUTTON, VAULT, PAGES))
    on_branch(repo, "alex/paint-colour-for-the-bedroom")
    assert start(repo, "s10", "startup") == ""  # a branch about nothing stored: the gate keeps silent


def test_after_a_compaction_an_episode_shown_before_it_is_shown_again(repo: Path, tmp_path: Path) -> None:
    flaky = line_of(FLAKY)
    assert flaky in hook("UserPromptSubmit", repo, "s1", prompt=FLAKY_PROMPT)
    assert flaky not in hook("UserPromptSubmit", repo, "s1", prompt=FLAKY_PROMPT)  # the context holds it
    # the file as it stands when the hook runs: the compaction's summary not written yet, the work in the last prompt
    text = start(repo, "s1", "compact", transcript(tmp_path, last_prompt=FLAKY_PROMPT))
    assert render.HEADER_COMPACT in text and flaky in text
    assert flaky not in hook("UserPromptSubmit", repo, "s1", prompt=FLAKY_PROMPT)  # shown since: held again
    with Memory() as mem:  # both showings stay in the log implicit feedback reads
        row = mem.db.one(
            "SELECT COUNT(*) FROM injections WHERE session_id = 's1' AND episode_id LIKE ?", (flaky[3:] + "%",)
        )
    assert row is not None and row[0] == 2


def test_a_prompt_a_long_turn_ago_is_still_the_work_in_progress(repo: Path, tmp_path: Path) -> None:
    # a megabyte of tool output since the prompt: the transcript's last 256 KB hold only the agent's last words
    path = transcript(tmp_path, last_prompt=FLAKY_PROMPT, output=4 * TAIL_BYTES)
    assert line_of(FLAKY) in start(repo, "s7", "compact", path)


def test_a_bare_reply_after_the_request_leaves_the_request_the_work_in_progress(repo: Path, tmp_path: Path) -> None:
    """The agent asked, the user said "yes, go ahead" and the work went on: the request is what is being worked on,
    not the reply (which names nothing, and would bring back nothing)."""
    path = transcript(tmp_path, last_prompt=FLAKY_PROMPT)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    prompt = max(i for i, r in enumerate(records) if r["type"] == "user")
    asked = {
        "type": "assistant",
        "uuid": "a-ask",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "Shall I make each checkout test build its own basket?"}],
        },
    }
    reply = {**records[prompt], "uuid": "u-yes", "message": {"role": "user", "content": "yes, go ahead"}}
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records[: prompt + 1], asked, reply]))
    assert line_of(FLAKY) in start(repo, "s11", "compact", path)


def test_a_summary_that_names_earlier_work_brings_its_episode_back_and_nothing_else(repo: Path, tmp_path: Path) -> None:
    text = start(repo, "s2", "compact", transcript(tmp_path, summary=FLAKY_SUMMARY))
    assert line_of(FLAKY) in text
    assert not any(line_of(s) in text for s in (BUTTON, VAULT, PAGES))


def test_an_unrelated_summary_brings_nothing_and_no_transcript_neither(repo: Path, tmp_path: Path) -> None:
    assert start(repo, "s3", "compact", transcript(tmp_path, summary=UNRELATED_SUMMARY)) == ""
    assert start(repo, "s3", "compact", tmp_path / "gone.jsonl") == ""
    assert start(repo, "s3", "compact") == ""


def test_clear_answers_as_a_new_session_would_what_was_shown_is_gone(repo: Path) -> None:
    on_branch(repo, "alex/fix-flaky-checkout-test")
    shown = start(repo, "s4", "startup")
    assert shown
    assert not held(shown, start(repo, "s4", "startup"))  # it is in the context
    assert start(repo, "s4", "clear") == shown


def test_resume_shows_what_the_context_lost_at_its_last_compaction_and_nothing_it_holds(
    repo: Path, tmp_path: Path
) -> None:
    on_branch(repo, "alex/fix-flaky-checkout-test")
    shown = start(repo, "s5", "startup")
    assert shown
    # a compaction about something else: nothing relevant, nothing injected; what was shown is out of the context
    assert start(repo, "s5", "compact", transcript(tmp_path, summary=UNRELATED_SUMMARY)) == ""
    assert start(repo, "s5", "resume") == shown
    assert not held(shown, start(repo, "s5", "resume"))  # reloaded with the transcript, so in the context


def test_a_fork_answers_nothing_its_context_is_its_parents(repo: Path) -> None:
    on_branch(repo, "alex/fix-flaky-checkout-test")
    assert start(repo, "parent", "startup")
    assert start(repo, "child", "fork") == ""


def test_across_daemon_starts_a_compaction_still_shows_again_what_it_took(
    repo: Path, tmp_path: Path, data_dir: Path
) -> None:
    """Each call finds no daemon (the last one was stopped) and starts one, which answers before its model is warm:
    the session's log, not the daemon, says what the context holds."""
    flaky = line_of(FLAKY)

    def run(event: str, **fields: Any) -> str:
        kill_daemon(data_dir)
        (data_dir / paths.DAEMON_SPAWN_NAME).unlink(missing_ok=True)  # the spawn guard of the last start
        payload = {"session_id": "s6", "cwd": str(repo), "hook_event_name": event, **fields}
        return context_of(run_hook(event, payload, command=ENTRY))

    assert flaky in run("UserPromptSubmit", prompt=FLAKY_PROMPT)
    assert flaky not in run("UserPromptSubmit", prompt=FLAKY_PROMPT)
    path = transcript(tmp_path, last_prompt=FLAKY_PROMPT)
    assert flaky in run("SessionStart", source="compact", transcript_path=str(path))  # the work in progress's
    assert flaky not in run("UserPromptSubmit", prompt=FLAKY_PROMPT)  # and the context holds it again
