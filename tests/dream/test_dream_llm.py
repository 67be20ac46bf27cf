"""The LLM steps against the local Messages API stub (the real `anthropic` SDK over HTTP): models used, the
triage gate and its cache, labels, verdicts and templates through one budget charged from real usage; budget
exhaustion mid-cycle (later phases skipped, nothing half-written); dry runs; fallbacks when the API fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import NOW
from dream_support import pages
from support.anthropic_stub import AnthropicStub

from tempera.core import paths
from tempera.core.llm import parse_prices
from tempera.core.memory import Memory
from tempera.dream import plan_cycle, run_cycle

REFLECTION = (
    "# Totals rounding keeps breaking\n\nThe ledger's totals were fixed, broke again and were fixed with "
    "half-up rounding; verbose output moved from logging to stderr."
)


class Routed(AnthropicStub):
    """Replies by what is asked (the system prompt), so tests need not know the order of calls."""

    def __init__(self, routes: dict[str, dict[str, Any]]):
        super().__init__()
        self.routes = routes

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
        system = body.get("system", "")
        return next(
            (reply(body) if callable(reply) else reply for key, reply in self.routes.items() if key in system),
            {"text": "{}"},
        )


def kind(request: dict[str, Any]) -> str:
    system = request.get("system", "")
    for key, name in (
        ("deserves a written reflection", "triage"),
        ("short reflection", "reflect"),
        ("name a theme", "label"),
        ("factual contradiction", "judge"),
        ("reusable procedure", "steps"),
    ):
        if key in system:
            return name
    return "other"


ROUTES: dict[str, Any] = {
    "deserves a written reflection": lambda body: {
        "text": json.dumps(
            {"score": 0.9 if "ledger on" in body["messages"][0]["content"] else 0.2, "why": "a bug came back"}
        ),
        "input_tokens": 700,
        "output_tokens": 30,
    },
    "short reflection": {"text": REFLECTION, "input_tokens": 900, "output_tokens": 150},
    "name a theme": {
        "text": json.dumps(
            {"label": "Totals rounding regressions", "summary": "Rounding of totals was fixed three times."}
        )
    },
    "factual contradiction": {
        "text": json.dumps({"contradiction": True, "confidence": 0.9, "claim": "how verbose output is written"})
    },
    "reusable procedure": {
        "text": json.dumps({"title": "Fix a rounding bug", "steps": ["run the tests", "edit the totals"]})
    },
}


@pytest.fixture
def routed(monkeypatch: pytest.MonkeyPatch) -> Any:
    def start(routes: dict[str, Any] = ROUTES, base_url: str | None = None) -> Routed:
        stub = Routed(routes).__enter__()
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("TEMPERA_LLM__ENABLED", "true")
        monkeypatch.setenv("TEMPERA_LLM__BASE_URL", base_url or stub.url)
        stubs.append(stub)
        return stub

    stubs: list[Routed] = []
    yield start
    for s in stubs:
        s.__exit__()


def fresh(mem: Memory) -> Memory:
    """Reopen the memory so the config picks up the LLM settings of the test."""
    mem.close()
    return Memory()


def cost_of(requests: list[dict[str, Any]], usage: dict[str, tuple[int, int]], prices: str) -> float:
    table = parse_prices(prices)
    return sum(table[r["model"]].cost(*usage[kind(r)]) for r in requests)


def test_triage_gates_the_reflection_and_a_day_is_never_triaged_twice(seeded: Memory, routed: Any) -> None:
    stub = routed()
    mem = fresh(seeded)
    cfg = mem.config.dream
    report = run_cycle(mem, phases=["reflect"], now=NOW)
    kinds = [kind(r) for r in stub.requests]
    assert kinds.count("triage") == 4 and kinds.count("reflect") == 2  # ledger's two days pass the gate
    assert {r["model"] for r in stub.requests if kind(r) == "triage"} == {cfg.triage_model}
    assert {r["model"] for r in stub.requests if kind(r) == "reflect"} == {cfg.reflect_model}
    rows = mem.db.query(
        "SELECT p.name, r.day, r.written_by, r.model, r.title, r.path FROM reflections r "
        "JOIN projects p ON p.id = r.project_id ORDER BY r.day"
    )
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("ledger", "2026-03-01", "llm", cfg.reflect_model, "Totals rounding keeps breaking"),
        ("ledger", "2026-03-02", "llm", cfg.reflect_model, "Totals rounding keeps breaking"),
    ]
    page = Path(rows[0][5]).read_text(encoding="utf-8")
    assert page.startswith("# Totals rounding keeps breaking") and f"written by {cfg.reflect_model}" in page
    verdicts = {
        (r[0], r[1]): r[2:]
        for r in mem.db.query(
            "SELECT p.name, v.day, v.judged_by, v.score FROM dream_verdicts v JOIN projects p ON p.id = v.project_id"
        )
    }
    assert verdicts[("webshop", "2026-03-02")] == ("llm", 0.2) and verdicts[("ledger", "2026-03-01")] == ("llm", 0.9)
    usage = {"triage": (700, 30), "reflect": (900, 150)}
    assert report.spent_usd == pytest.approx(cost_of(stub.requests, usage, mem.config.llm.prices))
    stub.requests.clear()
    again = run_cycle(mem, phases=["reflect"], now=NOW)
    assert stub.requests == [] and not again.phases[0].counts  # verdicts cached: webshop's low days stay closed
    mem.close()


def test_fallback_reflections_are_replaced_once_the_llm_is_available(seeded: Memory, routed: Any) -> None:
    run_cycle(seeded, phases=["reflect"], now=NOW)
    assert {r[0] for r in seeded.db.query("SELECT written_by FROM reflections")} == {"extractive"}
    routed()
    mem = fresh(seeded)
    run_cycle(mem, phases=["reflect"], now=NOW)
    by_day = dict(
        mem.db.query(
            "SELECT p.name || ' ' || r.day, r.written_by FROM reflections r JOIN projects p ON p.id = r.project_id"
        )
    )
    assert by_day["ledger 2026-03-01"] == "llm" and by_day["ledger 2026-03-02"] == "llm"
    assert by_day["webshop 2026-03-02"] == "extractive"  # the LLM's triage said no: the free page stays
    mem.close()


def test_every_paid_phase_uses_the_llm_through_one_budget(seeded: Memory, routed: Any) -> None:
    stub = routed()
    mem = fresh(seeded)
    report = run_cycle(mem, now=NOW)
    assert report.llm == "on" and {p.mode for p in report.phases[2:]} == {"llm"}
    assert all(p.spent_usd > 0 for p in report.phases[2:]), [(p.phase, p.spent_usd) for p in report.phases]
    assert report.spent_usd == pytest.approx(sum(p.spent_usd for p in report.phases))
    assert (
        mem.db.one("SELECT COUNT(*) FROM patterns WHERE labelled_by = 'llm' AND label = 'Totals rounding regressions'")[
            0
        ]
        >= 1
    )
    checks = mem.db.query("SELECT judged_by, contradicts, confidence, model FROM contradiction_checks")
    assert checks and set(checks) == {("llm", 1, 0.9, mem.config.dream.triage_model)}
    assert mem.db.one("SELECT COUNT(*) FROM reasoning_templates WHERE extracted_by = 'llm'")[0] >= 1
    assert {kind(r) for r in stub.requests} == {"triage", "reflect", "label", "judge", "steps"}
    mem.close()


def test_budget_exhaustion_mid_cycle_skips_later_phases_and_leaves_nothing_half_written(
    seeded: Memory, routed: Any
) -> None:
    expensive = dict(
        ROUTES, **{"short reflection": {"text": REFLECTION, "input_tokens": 150_000, "output_tokens": 100}}
    )
    stub = routed(expensive)
    mem = fresh(seeded)
    data = mem.db.path.parent
    report = run_cycle(mem, max_usd=0.2, now=NOW)  # the first reflection alone costs $0.45
    status = {p.phase: (p.status, p.notes) for p in report.phases}
    assert status["verify_advance"][0] == status["decay"][0] == "done"
    assert status["reflect"][0] == "budget" and "left" in status["reflect"][1][0]
    assert all(
        status[p] == ("skipped", ["budget exhausted earlier in the cycle"])
        for p in ("patterns", "contradict", "templates")
    )
    # newest day first: webshop 03-03 is triaged (and turned down), ledger 03-02 triaged and reflected, at a
    # price that empties the budget; the next day's triage is refused before it is asked
    assert [kind(r) for r in stub.requests] == ["triage", "triage", "reflect"]
    [(path,)] = mem.db.query("SELECT path FROM reflections")
    assert Path(path).read_text(encoding="utf-8").startswith("# Totals rounding keeps breaking")
    assert mem.db.one("SELECT COUNT(*) FROM dream_verdicts")[0] == 2
    for table in ("patterns", "contradiction_checks", "reasoning_templates"):
        assert mem.db.one(f"SELECT COUNT(*) FROM {table}")[0] == 0, table
    assert list(pages(data / paths.REFLECTIONS_DIR)) == [str(Path(path).relative_to(data / paths.REFLECTIONS_DIR))]
    assert not (data / paths.PATTERNS_DIR).exists()
    # the next cycle resumes: the paid verdicts are not asked again, the two other days are
    stub.routes = ROUTES
    stub.requests.clear()
    run_cycle(mem, now=NOW)
    assert [kind(r) for r in stub.requests].count("triage") == 2
    assert mem.db.one("SELECT COUNT(*) FROM reflections")[0] == 2
    mem.close()


def test_a_phase_whose_estimate_does_not_fit_is_skipped_without_a_call(seeded: Memory, routed: Any) -> None:
    stub = routed()
    mem = fresh(seeded)
    report = run_cycle(mem, max_usd=0.0004, now=NOW)  # less than any single call's worst case
    assert stub.requests == []
    for p in report.phases[2:]:
        assert p.status == "skipped" and p.notes[0].startswith("estimate does not fit"), (p.phase, p.notes)
    assert [p.status for p in report.phases[:2]] == ["done", "done"]
    assert mem.db.one("SELECT COUNT(*) FROM reflections")[0] == 0
    mem.close()


def test_dry_run_prices_the_plan_without_calling_or_writing(seeded: Memory, routed: Any) -> None:
    stub = routed()
    mem = fresh(seeded)
    plan = plan_cycle(mem, now=NOW)
    assert stub.requests == []
    assert (
        not (mem.db.path.parent / paths.REFLECTIONS_DIR).exists()
        and not (mem.db.path.parent / paths.PATTERNS_DIR).exists()
    )
    estimates = {p.phase: p.estimate_usd for p in plan.phases}
    assert estimates["verify_advance"] == estimates["decay"] == 0
    assert all(estimates[p] > 0 for p in ("reflect", "patterns", "contradict", "templates")), estimates
    assert sum(estimates.values()) <= mem.config.dream.default_max_usd
    for table in ("dream_cycles", "dream_verdicts", "reflections", "patterns", "contradiction_checks"):
        assert mem.db.one(f"SELECT COUNT(*) FROM {table}")[0] == 0, table
    mem.close()


def test_an_unreachable_api_sends_the_rest_of_the_cycle_to_fallbacks(seeded: Memory, routed: Any) -> None:
    routed(base_url="http://127.0.0.1:9")  # nothing listens there
    mem = fresh(seeded)
    report = run_cycle(mem, now=NOW)
    assert report.llm.startswith("the API failed: Messages API call failed")
    assert report.spent_usd == 0 and report.status == "done"
    assert report.phases[2].mode == "llm" and {p.mode for p in report.phases[3:]} == {"fallback"}
    assert {r[0] for r in mem.db.query("SELECT written_by FROM reflections")} == {"extractive"}
    assert {r[0] for r in mem.db.query("SELECT judged_by FROM dream_verdicts")} == {"heuristic"}
    assert {r[0] for r in mem.db.query("SELECT labelled_by FROM patterns")} == {"terms"}
    assert {r[0] for r in mem.db.query("SELECT judged_by FROM contradiction_checks")} == {"heuristic"}
    assert {r[0] for r in mem.db.query("SELECT extracted_by FROM reasoning_templates")} == {"mined"}
    mem.close()
