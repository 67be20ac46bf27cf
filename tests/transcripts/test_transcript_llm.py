"""The budgeted Messages API client and the optional LLM extraction, against a local stub of the wire format
(plain and streaming) through the real `anthropic` SDK."""

from __future__ import annotations

import json

import pytest
from transcript_writer import SessionWriter
from support.anthropic_stub import AnthropicStub

from tempera.core.config import LLMConfig
from tempera.core.llm import LLM, Budget, BudgetExceeded, LLMUnavailable
from tempera.core.memory import Memory
from tempera.transcripts import capture_transcript

PRICES = "test-model=3/15"


def _llm(url: str) -> LLM:
    return LLM(LLMConfig(enabled=True, model="test-model", prices=PRICES, base_url=url), key="sk-test")


@pytest.mark.parametrize("stream", [False, True])
def test_call_is_charged_from_real_usage(stream: bool) -> None:
    with AnthropicStub([{"text": '{"ok": true}', "input_tokens": 1200, "output_tokens": 80}]) as stub:
        budget = Budget(0.05)
        reply = _llm(stub.url).complete("hello", system="be brief", budget=budget, stream=stream)
    assert reply.text == '{"ok": true}' and (reply.input_tokens, reply.output_tokens) == (1200, 80)
    assert reply.cost_usd == pytest.approx((1200 * 3 + 80 * 15) / 1e6)
    assert budget.spent == pytest.approx(reply.cost_usd) and budget.calls == 1
    (request,) = stub.requests
    assert request["model"] == "test-model" and request["system"] == "be brief"
    assert bool(request.get("stream")) is stream


def test_max_tokens_shrinks_to_fit_the_budget_and_a_spent_budget_refuses() -> None:
    with AnthropicStub([{"text": "x", "input_tokens": 10, "output_tokens": 10}]) as stub:
        llm = _llm(stub.url)
        llm.complete("hi", budget=Budget(0.003), max_tokens=4000)
        with pytest.raises(BudgetExceeded):
            llm.complete("hi", budget=Budget(0.0004), max_tokens=4000)
    (request,) = stub.requests  # the refused call never reached the API
    assert 32 <= request["max_tokens"] < 200


def test_unpriced_model_and_missing_key_are_refused() -> None:
    llm = LLM(LLMConfig(enabled=True, model="unknown-model", prices=PRICES), key="sk-test")
    with pytest.raises(LLMUnavailable, match="no price"):
        llm.complete("hi", budget=Budget(1.0))
    with pytest.raises(LLMUnavailable, match="ANTHROPIC_API_KEY"):
        LLM(LLMConfig(enabled=True))


def _enable(monkeypatch: pytest.MonkeyPatch, url: str, max_usd: float = 0.01) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("TEMPERA_LLM__ENABLED", "true")
    monkeypatch.setenv("TEMPERA_LLM__BASE_URL", url)
    monkeypatch.setenv("TEMPERA_LLM__MODEL", "test-model")
    monkeypatch.setenv("TEMPERA_LLM__PRICES", PRICES)
    monkeypatch.setenv("TEMPERA_CAPTURE__LLM_MAX_USD", str(max_usd))


def _two_turns(session: SessionWriter) -> None:
    session.prompt("the importer crashes on empty CSV files, DB_PASSWORD=hunter2-xyz is set")
    session.bash("python -m pytest -q tests/test_import.py", "1 failed", ok=False)
    session.say("Guarded the empty-file case in importer.py.")
    session.prompt("thanks, now bump the version")
    session.say("Bumped to 2.0.1.")


def test_capture_refines_drafts_and_sends_only_redacted_text(
    monkeypatch: pytest.MonkeyPatch, session: SessionWriter
) -> None:
    extracted = {
        "intent": "Stop the CSV importer crashing on empty files.",
        "claim": "csv.reader on an empty file yields no header row; importer.py must check for it.",
        "falsifiability": 0.9,
        "category": "bug_cause",
        "scope": "language:python",
    }
    _two_turns(session)
    with AnthropicStub(
        [
            {"text": "Here you go:\n" + json.dumps(extracted), "input_tokens": 900, "output_tokens": 70},
            {"text": "not json at all", "input_tokens": 500, "output_tokens": 5},
        ]
    ) as stub:
        _enable(monkeypatch, stub.url)
        with Memory(use_model=False) as mem:
            result = capture_transcript(mem, session.path)
            first, second = (mem.store.get(e.id) for e in result.added)
    assert first.intent.extracted == extracted["intent"] and first.intent.claim == extracted["claim"]
    assert (first.intent.category, first.intent.falsifiability) == ("bug_cause", 0.9)
    assert str(first.scope) == "language:python" and first.scope.transferable
    assert second.intent.claim is None and str(second.scope) == "project"  # unparseable reply: heuristics kept
    assert result.llm_cost_usd == pytest.approx((900 * 3 + 70 * 15 + 500 * 3 + 5 * 15) / 1e6)
    sent = json.dumps(stub.requests)
    assert len(stub.requests) == 2 and "hunter2-xyz" not in sent and "[REDACTED:secret]" in sent


def test_capture_stops_calling_when_the_budget_is_spent(
    monkeypatch: pytest.MonkeyPatch, session: SessionWriter
) -> None:
    _two_turns(session)
    with AnthropicStub(
        [{"text": '{"claim": "x is y", "scope": "nonsense:kind"}', "input_tokens": 2500, "output_tokens": 100}]
    ) as stub:
        _enable(monkeypatch, stub.url, max_usd=0.009)
        with Memory(use_model=False) as mem:
            result = capture_transcript(mem, session.path)
    assert len(stub.requests) == 1 and len(result.added) == 2
    assert result.added[0].intent.claim == "x is y" and str(result.added[0].scope) == "project"
    assert result.added[1].intent.claim is None


def test_llm_stays_off_without_config(monkeypatch: pytest.MonkeyPatch, session: SessionWriter) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # a key alone does not enable calls
    _two_turns(session)
    with Memory(use_model=False) as mem:
        assert capture_transcript(mem, session.path).llm_cost_usd == 0.0
