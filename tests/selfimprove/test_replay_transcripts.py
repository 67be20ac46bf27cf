"""Replaying real-format transcripts fills the logs with no tool call; the next session's brief shows them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from selfimprove_support import DATA, WEBSHOP, replay

from tempera.core.brief import prompt_brief, session_brief, session_start
from tempera.core.memory import Memory
from tempera.core.selfimprove import askbacks, asks, calibration, mistakes
from tempera.inject import payload, warm


def test_corrections_are_logged_with_category_and_files(mem: Memory, replayed: Callable) -> None:
    [done] = replayed("corrections")
    assert done.corrections == 3
    rows = {m.values["category"]: m for m in mistakes.mistakes(mem.db, project_id=WEBSHOP.id)}
    assert set(rows) == {"wrong_convention", "scope_creep", "reverted_edit"}
    # "No, don't pull in new dependencies ... We use the standard logging module": anchored to the turn it corrects
    assert rows["wrong_convention"].files == ["src/webshop/cli.py"]
    assert "logging module" in rows["wrong_convention"].values["correction"]
    assert "--verbose flag" in rows["wrong_convention"].values["description"]
    # the reason typed when rejecting an Edit
    assert rows["scope_creep"].files == ["src/webshop/export.py"]
    assert rows["scope_creep"].values["correction"].startswith("keep the public function name export_orders")
    # `!git checkout -- src/webshop/report.py` typed after the agent's refactor
    assert rows["reverted_edit"].files == ["src/webshop/report.py"]
    assert {m.source for m in rows.values()} == {"transcript:prompt", "transcript:rejection", "transcript:revert"}
    assert all(m.episode_id and m.session_id == "7d1c2a90-3b0e-4c1a-9a51-0c8f1e2d3a41" for m in rows.values())


def test_no_correction_from_ordinary_prompts(mem: Memory, replayed: Callable) -> None:
    """'No problem if it takes a while - please also add a test' and plain requests are not corrections."""
    replayed("corrections", "clarify")
    texts = [m.values["correction"] for m in mistakes.mistakes(mem.db)]
    assert not any(t.startswith(("No problem", "Now make", "Refactor", "Add a new", "yes")) for t in texts)


def test_questions_the_agent_asked_are_no_should_have_asked(mem: Memory, replayed: Callable) -> None:
    """A closing question answered by a change of course, and an AskUserQuestion answered "Half up": the agent
    asked, so neither is a question it should have asked."""
    [done] = replayed("clarify")
    assert done.questions == 0 and asks.asks(mem.db, project_id=WEBSHOP.id) == []


def test_corrections_show_questions_never_asked(mem: Memory, replayed: Callable) -> None:
    replayed("corrections")
    missed = {a.values["question"]: a for a in asks.asks(mem.db) if a.source == "transcript:missed"}
    # "We use the standard logging module" is a convention the agent could read, not a question for the user
    assert set(missed) == {"Which parts may this change touch, and what must stay as it is?"}
    scope = missed["Which parts may this change touch, and what must stay as it is?"]
    assert scope.files == ["src/webshop/export.py"] and "export_orders" in scope.values["answer"]


def test_replay_is_idempotent(mem: Memory, replayed: Callable, tmp_path: Path) -> None:
    first = replayed("corrections", "clarify", "vague_failure")
    counts = (len(mistakes.mistakes(mem.db)), len(asks.asks(mem.db)), len(askbacks.ask_backs(mem.db)))
    again = [replay(mem, tmp_path / "transcripts" / f"{n}.jsonl") for n in ("corrections", "clarify", "vague_failure")]
    assert [d.as_dict() for d in again] == [{"corrections": 0, "questions": 0, "ask_backs": []}] * 3
    assert counts == (3, 1, 1) and sum(d.corrections for d in first) == 3
    assert (len(mistakes.mistakes(mem.db)), len(asks.asks(mem.db)), len(askbacks.ask_backs(mem.db))) == counts


def test_turn_by_turn_capture_finds_corrections_of_earlier_captures(mem: Memory, tmp_path: Path) -> None:
    """The Stop hook captures one turn at a time: the correcting prompt arrives in a later capture than the turn it
    corrects, and a `!git checkout` lands in a turn that was already captured."""
    lines = (DATA / "corrections.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if '"permissionMode"' in line] + [len(lines)]
    live = tmp_path / "live.jsonl"
    live.write_text("", encoding="utf-8")
    for end in starts[1:]:
        with live.open("a", encoding="utf-8") as fh:
            fh.writelines(lines[len(live.read_text(encoding="utf-8").splitlines()) : end])
        replay(mem, live)
    categories = sorted(m.values["category"] for m in mistakes.mistakes(mem.db))
    assert categories == ["reverted_edit", "scope_creep", "wrong_convention"]
    assert [m.files for m in mistakes.mistakes(mem.db) if m.values["category"] == "reverted_edit"] == [
        ["src/webshop/report.py"]
    ]


def test_vague_failure_drafts_an_ask_back_for_the_next_session(mem: Memory, replayed: Callable) -> None:
    [done] = replayed("vague_failure")
    [ask] = done.ask_backs
    assert (ask.project_id, ask.status, ask.drafted_by) == (WEBSHOP.id, "pending", "template")
    assert '"fix it, still broken"' in ask.question and "test_refund_totals" in ask.question
    assert ask.question.endswith("?")
    assert "fix it, still broken" in session_brief(mem, WEBSHOP.id).render(3000)  # a brief only reads
    start = session_start(mem, WEBSHOP.id, by="session-2")
    assert [a.id for a in start.ask_backs] == [ask.id] and start.ask_backs[0].status == "consumed"
    first = start.select(2000)[0]
    assert first.key == f"askback:{ask.id}" and first.text.startswith("Pending clarifying question")
    assert session_start(mem, WEBSHOP.id, by="session-3").ask_backs == []
    assert "fix it, still broken" not in session_brief(mem, WEBSHOP.id).render(3000)
    assert [a.status for a in askbacks.ask_backs(mem.db)] == ["consumed"]


@pytest.mark.usefixtures("one_row_suffices")  # one replayed session: its single rows clear the bar here
def test_next_session_brief_and_prompt_lines(mem: Memory, replayed: Callable) -> None:
    replayed("corrections", "clarify", "vague_failure")
    session = session_brief(mem, WEBSHOP.id)
    keys = [s.key for s in session.statements()]
    assert keys[0].startswith("askback:")
    # scope_creep's only words, "keep the public function name export_orders, ...", are an order: not quoted, no line
    assert {c.category for c in session.categories} == {"wrong_convention", "reverted_edit"}
    brief = prompt_brief(mem, WEBSHOP.id, "Add a --quiet flag next to --verbose in src/webshop/cli.py", WEBSHOP.path)
    assert brief is not None and brief.files == ["src/webshop/cli.py"]
    assert [c.category for c in brief.categories] == ["wrong_convention"]
    text = brief.render(2000)
    assert "wrong_convention" in text and "logging module" in text and "reverted_edit" not in text
    seen = {st.key for st in brief.select(2000)}  # what the hook injected on this prompt
    assert brief.render(2000, exclude=seen) == ""  # the same prompt again in this session adds nothing
    # a module name names the same file; a prompt naming no known file adds nothing
    for prompt in ("is webshop.cli still importable?", "check cli.py", "see `src/webshop/cli.py`."):
        found = prompt_brief(mem, WEBSHOP.id, prompt, WEBSHOP.path)
        assert found is not None and found.files == ["src/webshop/cli.py"], prompt
    assert prompt_brief(mem, WEBSHOP.id, "what time is it", WEBSHOP.path) is None


@pytest.mark.usefixtures("one_row_suffices")
def test_the_session_start_hook_shows_the_ask_back_and_no_project_level_lines(mem: Memory, replayed: Callable) -> None:
    """Before any task is known, a correction category over all files or a calibration figure is noise; the
    ask-back drafted for this session is not. The whole brief stays for whoever asks for it (`session_start`)."""
    replayed("corrections", "clarify", "vague_failure")
    assert session_brief(mem, WEBSHOP.id).categories  # there are lines the whole brief would show
    hp = payload.parse("SessionStart", {"session_id": "s-2", "cwd": WEBSHOP.path, "source": "startup"})
    text = warm.answer(mem, hp)
    assert "Pending clarifying question" in text and "fix it, still broken" in text
    assert "Correction category" not in text and "Calibration:" not in text and "should have been asked" not in text


def test_corrected_success_does_not_count_as_verified(mem: Memory, replayed: Callable) -> None:
    replayed("corrections")
    buckets = {b.task_type: b for b in calibration.buckets(mem.db, project_id=WEBSHOP.id)}
    assert buckets["feature"].declared == 2 and buckets["feature"].corrected == 2
    assert buckets["feature"].verified == 0  # the export turn's tests passed, but the user corrected it
    assert buckets["setup"].verified == 1  # the follow-up's tests passed and nobody corrected it


def test_detection_can_be_switched_off(mem: Memory, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TEMPERA_SELFIMPROVE__DETECT_CORRECTIONS", "false")
    m = Memory(use_model=False)
    try:
        path = tmp_path / "c.jsonl"
        shutil.copy(DATA / "corrections.jsonl", path)
        assert replay(m, path).corrections == 0
        assert mistakes.mistakes(m.db) == []
    finally:
        m.close()


def test_secrets_in_corrections_are_redacted(mem: Memory, tmp_path: Path) -> None:
    token = "ghp_" + "a1B2" * 9
    path = tmp_path / "c.jsonl"
    path.write_text(
        (DATA / "corrections.jsonl")
        .read_text(encoding="utf-8")
        .replace(
            "We use the standard logging module for verbose output here.",
            f"We use the standard logging module here; the CI token is {token}.",
        ),
        encoding="utf-8",
    )
    replay(mem, path)
    [row] = [m for m in mistakes.mistakes(mem.db) if m.values["category"] == "wrong_convention"]
    assert token not in row.values["correction"] and "[REDACTED:github_token]" in row.values["correction"]
    assert not any(token in a.values["answer"] for a in asks.asks(mem.db))
