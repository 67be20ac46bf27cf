"""Each phase on the seeded real memory with no API key: everything runs on the LLM-free fallbacks, says so,
produces useful output, and a second run changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from conftest import NOW
from dream_support import pages

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.dream import run_cycle
from tempera.dream.clustering import average_linkage
from tempera.dream.contradictions import contradiction_rate, episode_conflicts, fact_conflicts


def phase(report, name: str):  # type: ignore[no-untyped-def]
    return next(p for p in report.phases if p.phase == name)


def reflections(mem: Memory) -> dict[tuple[str, str], dict]:
    rows = mem.db.query(
        "SELECT p.name, r.day, r.written_by, r.path, r.body FROM reflections r JOIN projects p ON p.id = r.project_id"
    )
    return {(r[0], r[1]): {"by": r[2], "path": Path(r[3]), "body": r[4]} for r in rows}


def test_cycle_without_a_key_runs_every_phase_on_its_fallback_and_says_so(seeded: Memory) -> None:
    seeded.config.llm.enabled = True  # switched on, but there is no ANTHROPIC_API_KEY
    report = run_cycle(seeded, now=NOW)
    assert report.llm == "no ANTHROPIC_API_KEY" and report.status == "done" and report.spent_usd == 0
    assert [(p.phase, p.status, p.mode) for p in report.phases] == [
        ("verify_advance", "done", "free"),
        ("decay", "done", "free"),
        ("reflect", "done", "fallback"),
        ("patterns", "done", "fallback"),
        ("contradict", "done", "fallback"),
        ("templates", "done", "fallback"),
    ]
    assert all(p.counts for p in report.phases[2:]), [p.summary() for p in report.phases]
    row = seeded.db.one("SELECT status, llm, signature FROM dream_cycles WHERE id = ?", (report.id,))
    assert row[:2] == ("done", "no ANTHROPIC_API_KEY") and row[2]


def test_verify_advance_and_decay_retire_an_expired_workaround_once(seeded: Memory) -> None:
    ep = seeded.capture(
        CaptureInput(
            summary="Pin urllib3 below 2 until the proxy bug is fixed",
            project="ledger",
            validity_scope="workaround:proxy#12@2026-02-01",
        )
    )
    first = run_cycle(seeded, phases=["verify_advance", "decay"], now=NOW)
    assert phase(first, "decay").counts["expired workarounds retired"] == 1
    assert seeded.db.one("SELECT reason FROM episode_retirements WHERE episode_id = ?", (ep.id,)) == ("expired",)
    moved = sum(n for k, n in phase(first, "verify_advance").counts.items())
    assert moved == seeded.db.one("SELECT COUNT(*) FROM episodes WHERE verification != 'untested'")[0] > 0
    again = run_cycle(seeded, phases=["verify_advance", "decay"], now=NOW)
    assert not phase(again, "verify_advance").counts
    assert phase(again, "decay").counts["expired workarounds retired"] == 0


def test_reflect_fallback_writes_extractive_reflections_of_the_days_with_signal(seeded: Memory) -> None:
    report = run_cycle(seeded, phases=["reflect"], now=NOW)
    found = reflections(seeded)
    # webshop 03-04 and ledger 03-03 have one episode each; webshop 03-03 (clarify.jsonl: three requests that went
    # well, its "yes please" part of the third) has too little signal; the shared transcripts are older than the
    # lookback
    assert set(found) == {("webshop", "2026-03-02"), ("ledger", "2026-03-01"), ("ledger", "2026-03-02")}
    assert {r["by"] for r in found.values()} == {"extractive"}
    assert phase(report, "reflect").counts == {
        "days triaged by signal": 4,
        "days below the triage threshold": 1,
        "reflections written (extractive)": 3,
    }
    ledger = found[("ledger", "2026-03-01")]["path"].read_text(encoding="utf-8")
    assert "### Errors resolved" in ledger and "AssertionError: totals 10.01 != 10.0" in ledger
    assert "src/ledger/totals.py (1)" in ledger and "[success] Fix the rounding of totals" in ledger
    webshop = found[("webshop", "2026-03-02")]["body"]
    assert "### Corrections from the user" in webshop and "standard logging module" in webshop
    failed_day = found[("ledger", "2026-03-02")]["body"]
    assert "1 failure" in failed_day and "Files most touched" in failed_day
    verdicts = seeded.db.query("SELECT judged_by, score >= 0.5 FROM dream_verdicts")
    assert sorted(verdicts) == [("heuristic", 0)] + [("heuristic", 1)] * 3  # the day below the threshold: 0
    before = pages(seeded.db.path.parent / paths.REFLECTIONS_DIR)
    again = run_cycle(seeded, phases=["reflect"], now=NOW)
    assert not phase(again, "reflect").counts and pages(seeded.db.path.parent / paths.REFLECTIONS_DIR) == before


def test_patterns_fallback_finds_recurring_themes_and_keeps_them_across_cycles(seeded: Memory) -> None:
    run_cycle(seeded, phases=["reflect", "patterns"], now=NOW)
    rows = seeded.db.query(
        "SELECT p.id, pr.name, p.label, p.terms, p.evidence, p.days, p.path, p.labelled_by "
        "FROM patterns p JOIN projects pr ON pr.id = p.project_id WHERE p.active = 1"
    )
    themes = {r[1]: r for r in rows}
    assert {"ledger", "webshop"} <= set(themes)
    pid, _, label, terms, evidence, days, path, by = themes["ledger"]
    assert by == "terms" and "totals" in json.loads(terms) and "totals" in label
    assert len(json.loads(evidence)) >= 3 and len(json.loads(days)) >= 2
    page = Path(path).read_text(encoding="utf-8")
    assert page.startswith(f"# {label}") and "## Evidence" in page and "is wrong again" in page
    assert "src/ledger/totals.py" in page  # files most touched by the theme
    before = pages(seeded.db.path.parent / paths.PATTERNS_DIR)
    assert not phase(run_cycle(seeded, phases=["patterns"], now=NOW), "patterns").counts
    assert pages(seeded.db.path.parent / paths.PATTERNS_DIR) == before
    # new evidence joins the theme: the same pattern is updated, its page rewritten, none left behind
    seeded.capture(
        CaptureInput(
            summary="Fix the rounding of totals in src/ledger/totals.py again; test_totals passes",
            files_modified=["src/ledger/totals.py"],
            project="ledger",
            session_id="late",
        )
    )
    later = run_cycle(seeded, phases=["patterns"], now=NOW)
    assert phase(later, "patterns").counts["themes updated"] >= 1
    active = seeded.db.query("SELECT id, path FROM patterns WHERE active = 1")
    assert pid in {a[0] for a in active}
    files = {str(p) for p in (seeded.db.path.parent / paths.PATTERNS_DIR).rglob("*.md")}
    assert files == {a[1] for a in active}


def test_contradict_fallback_finds_opposite_outcomes_and_opposite_claims(seeded: Memory) -> None:
    report = run_cycle(seeded, phases=["contradict"], now=NOW)
    assert phase(report, "contradict").counts["contradictions found"] >= 2
    claims = [c["claim"] for c in episode_conflicts(seeded.db, seeded.config.dream.contradict_min_confidence)]
    assert any(c.startswith("opposite outcomes on src/ledger/totals.py") for c in claims), claims
    assert any(c.startswith("opposite claims about src/ledger/cli.py") for c in claims), claims
    assert any(c.startswith("opposite outcomes on src/webshop/report.py") for c in claims), claims
    rate = contradiction_rate(seeded.db, seeded.config.dream.contradict_min_confidence)
    assert rate["pairs"] >= rate["contradictions"] >= 3
    assert rate["ci95"][0] <= rate["rate"] <= rate["ci95"][1] and 0 < rate["ci95"][0] and rate["ci95"][1] < 1
    assert any("95% CI" in n for n in phase(report, "contradict").notes)
    again = run_cycle(seeded, phases=["contradict"], now=NOW)
    assert not phase(again, "contradict").counts  # every pair already judged, nothing changed


def test_fact_graph_conflicts_are_surfaced(seeded: Memory) -> None:
    from tempera.facts import FactStore

    facts = FactStore(seeded.db)
    facts.transact(
        '[[:decision/sqlite-ledger :description "Keep the ledger in SQLite"] '
        '[:decision/sqlite-ledger :subject "SQLite"] [:decision/sqlite-ledger :polarity :for] '
        '[:constraint/no-sqlite :description "No SQLite in production"] '
        '[:constraint/no-sqlite :subject "sqlite"] [:constraint/no-sqlite :polarity :against] '
        '[:preference/tabs :description "Tabs"] [:preference/tabs :subject "indent"] '
        "[:preference/tabs :polarity :for]]",
        reason="decisions from two sessions",
    )
    [conflict] = fact_conflicts(seeded.db)
    assert (conflict["subject"], {conflict["a"], conflict["b"]}) == (
        "sqlite",
        {":decision/sqlite-ledger", ":constraint/no-sqlite"},
    )
    facts.retract("[[:constraint/no-sqlite :polarity :against]]", reason="the constraint was lifted")
    assert fact_conflicts(seeded.db) == []
    report = run_cycle(seeded, phases=["contradict"], now=NOW)
    assert not any("fact graph" in n for n in phase(report, "contradict").notes)


def test_templates_fallback_mines_steps_once_per_evidence(seeded: Memory) -> None:
    report = run_cycle(seeded, phases=["verify_advance", "templates"], now=NOW)
    written = phase(report, "templates").counts
    assert written["templates written (mined)"] >= 1 and set(written) == {"templates written (mined)"}
    rows = seeded.db.query("SELECT extracted_by, steps FROM reasoning_templates")
    assert rows and all(by == "mined" and json.loads(steps) for by, steps in rows)
    assert not phase(run_cycle(seeded, phases=["templates"], now=NOW), "templates").counts


def test_average_linkage_keeps_groups_apart_and_does_not_chain() -> None:
    def unit(*v: float) -> np.ndarray:
        a = np.array(v, dtype=np.float32)
        return a / np.linalg.norm(a)

    a = [unit(1, 0.05 * k, 0) for k in range(3)]
    b = [unit(0, 1, 0.05 * k) for k in range(3)]
    bridge = unit(1, 1, 0)  # cosine ~0.7 to both groups: single linkage would chain them together
    clusters = average_linkage(np.stack([*a, *b, bridge]), 0.8)
    assert [sorted(c) for c in clusters[:2]] == [[0, 1, 2], [3, 4, 5]] and clusters[2] == [6]
    assert average_linkage(np.stack(a), 0.9999) == [[0], [1], [2]]  # nothing is that close: no theme
