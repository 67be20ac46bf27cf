"""The LLM paths against the local Messages API stub (the real `anthropic` SDK over HTTP): ask-back drafting,
correction categories, missed-question phrasing and template extraction; and the fallbacks when the LLM
answers badly or the budget is zero."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selfimprove_support import DATA, replay
from support.anthropic_stub import AnthropicStub

from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, Intent, Outcome, TestRun, VerificationState
from tempera.core.project import project_for_path
from tempera.core.selfimprove import asks, mistakes, templates
from tempera.core.llm import LLM, Budget
from tempera.core.selfimprove.drafting import drafter_for, drafter_from, one_question


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicStub]:
    stub = AnthropicStub([])
    with stub:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("TEMPERA_LLM__ENABLED", "true")
        monkeypatch.setenv("TEMPERA_LLM__BASE_URL", stub.url)
        yield stub


@pytest.fixture
def llm_mem(llm_env: AnthropicStub) -> Iterator[Memory]:
    m = Memory(use_model=False)
    yield m
    m.close()


def test_ask_back_drafted_by_the_llm(llm_env: AnthropicStub, llm_mem: Memory, tmp_path: Path) -> None:
    llm_env.replies.append({"text": "Which report total is off, and by how much should it differ?"})
    path = tmp_path / "v.jsonl"
    shutil.copy(DATA / "vague_failure.jsonl", path)
    [ask] = replay(llm_mem, path).ask_backs
    assert (ask.drafted_by, ask.question) == ("llm", "Which report total is off, and by how much should it differ?")
    [request] = llm_env.requests
    assert request["model"] == llm_mem.config.dream.triage_model
    assert "fix it, still broken" in request["messages"][0]["content"] and "clarifying question" in request["system"]


def test_llm_answer_that_is_not_a_question_falls_back_to_the_template(
    llm_env: AnthropicStub, llm_mem: Memory, tmp_path: Path
) -> None:
    llm_env.replies.append({"text": "Sure! Here is a plan: first..."})
    path = tmp_path / "v.jsonl"
    shutil.copy(DATA / "vague_failure.jsonl", path)
    [ask] = replay(llm_mem, path).ask_backs
    assert ask.drafted_by == "template" and ask.question.startswith("Is ")


def test_llm_places_a_correction_the_heuristics_cannot(llm_env: AnthropicStub, llm_mem: Memory, tmp_path: Path) -> None:
    from tempera.transcripts.detect import process_captured_turns
    from tempera.transcripts.reader import read_transcript
    from tempera.transcripts.turns import segment_turns
    from tempera.transcripts.capture import capture_transcript

    path = tmp_path / "c.jsonl"
    text = (DATA / "corrections.jsonl").read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "No, don't pull in new dependencies for this. We use the standard logging module for verbose output here.",
            "That's wrong, verbose output goes to stderr.",
        ),
        encoding="utf-8",
    )
    llm_env.replies += [{"text": "api_misuse"}, {"text": "nonsense category"}]
    result = capture_transcript(llm_mem, path, use_llm=False)
    turns = segment_turns(read_transcript(path))
    process_captured_turns(llm_mem, turns, result.added)
    categories = {m.values["correction"][:14]: m.values["category"] for m in mistakes.mistakes(llm_mem.db)}
    assert categories["That's wrong, "] == "api_misuse"
    assert "Categories:" in llm_env.requests[0]["messages"][0]["content"]


def test_llm_phrases_the_missed_question(llm_env: AnthropicStub, llm_mem: Memory, tmp_path: Path) -> None:
    llm_env.replies += [{"text": "Must the public name export_orders stay?"}]
    path = tmp_path / "c.jsonl"
    shutil.copy(DATA / "corrections.jsonl", path)
    replay(llm_mem, path)
    missed = sorted(a.values["question"] for a in asks.asks(llm_mem.db) if a.source == "transcript:missed")
    assert missed == ["Must the public name export_orders stay?"]  # a convention is read, not asked: no question
    assert replay(llm_mem, path).questions == 0 and len(llm_env.requests) == 1  # no call for known rows


def test_template_extracted_by_the_llm_and_its_fallback(
    llm_env: AnthropicStub, llm_mem: Memory, tmp_path: Path
) -> None:
    ref = project_for_path(tmp_path / "shop")
    eps = [
        Episode(
            project_id=ref.id,
            project_name=ref.name,
            project_path=ref.path,
            summary=f"fixed handler {n}",
            intent=Intent(task_type="bugfix", domains=["auth"]),
            context=Context(files_read=["src/auth/session.py"], files_modified=[f"src/auth/h{n}.py"]),
            outcome=Outcome(
                status="success",
                verification=VerificationState.TESTS_PASS,
                tests_after=[TestRun(command="pytest", passed=True)],
            ),
        )
        for n in range(3)
    ]
    llm_mem.store.add_many(eps)
    llm_env.replies += [
        {
            "text": json.dumps(
                {"title": "Session handler fix", "steps": ["Read the session module", "Fix the handler", "Run pytest"]}
            )
        },
        {"text": "not json"},
    ]
    written = {t.domain: t for t in templates.extract_templates(llm_mem, max_usd=0.5)}
    llm_made = [t for t in written.values() if t.extracted_by == "llm"]
    mined = [t for t in written.values() if t.extracted_by == "mined"]
    assert len(llm_made) == 1 and len(mined) == 1
    assert llm_made[0].steps == ["Read the session module", "Fix the handler", "Run pytest"]
    assert mined[0].steps[0] == "read src/auth/session.py"
    assert all(r["model"] == llm_mem.config.dream.reflect_model for r in llm_env.requests)


def test_no_calls_when_disabled_or_without_budget(
    llm_env: AnthropicStub, llm_mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert drafter_for(llm_mem.config, max_usd=0) is None
    monkeypatch.setenv("TEMPERA_SELFIMPROVE__USE_LLM", "false")
    off = Memory(use_model=False)
    try:
        assert drafter_for(off.config) is None
    finally:
        off.close()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert drafter_for(llm_mem.config) is None
    assert llm_env.requests == []


def test_budget_caps_spending(llm_env: AnthropicStub, llm_mem: Memory) -> None:
    """Every reply costs ~$0.0002 at Haiku prices here; a $0.0005 cap allows two calls, the rest fall back."""
    llm_env.replies += [{"text": "Q1?", "input_tokens": 100, "output_tokens": 20}] * 5
    draft = drafter_for(llm_mem.config, max_usd=0.0005)
    assert draft is not None
    answers = [draft("s", "p", model="claude-haiku-4-5-20251001", max_tokens=40) for _ in range(5)]
    assert answers[:2] == ["Q1?", "Q1?"] and answers[-1] is None and len(llm_env.requests) < 5


def test_drafters_can_share_one_budget(llm_env: AnthropicStub, llm_mem: Memory) -> None:
    """The dream cycle passes one budget to every phase: what one drafter spends, the other cannot."""
    llm_env.replies += [{"text": "A?", "input_tokens": 100, "output_tokens": 20}] * 3
    budget = Budget(0.0005)
    client = LLM(llm_mem.config.llm)
    first, second = drafter_from(client, budget), drafter_from(client, budget)
    assert first("s", "p", model="claude-haiku-4-5", max_tokens=40) == "A?"
    assert second("s", "p", model="claude-haiku-4-5", max_tokens=40) == "A?"
    assert first("s", "p", model="claude-haiku-4-5", max_tokens=40) is None
    assert budget.calls == 2 and budget.spent <= 0.0005


@pytest.mark.parametrize(
    "reply, question",
    [
        ('"Which database does staging use?"', "Which database does staging use?"),
        ("Which\n database?", "Which database?"),
        ("Q?", None),
        ("I think you should ask about it.", None),
        (None, None),
    ],
)
def test_one_question(reply: str | None, question: str | None) -> None:
    assert one_question(reply) == question
