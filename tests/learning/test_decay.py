"""Scope-aware decay: what faded is reported, expired workarounds leave search but stay stored."""

from __future__ import annotations

from datetime import timedelta

from learnbook import NOW, Book

from tempera.core.learning.scope_decay import run_decay
from tempera.core.learning.retire import restore


def _search(book: Book, query: str, mode: str) -> list[str]:
    return [h.episode.id for h in book.memory.retrieve(query, project=str(book.root), mode=mode)]


def test_report_by_scope_after_simulated_time(book: Book) -> None:
    project = book.add("The billing service reads its settings from config/billing.toml", scope="project")
    forever = book.add("SQLite foreign keys are off unless PRAGMA foreign_keys = ON", scope="forever")
    report = run_decay(book.memory, now=NOW + timedelta(days=200), dry_run=True)
    assert report.checked == 2 and [f.id for f in report.faded] == [project.id]
    assert report.faded[0].freshness < 0.2
    assert report.by_scope["forever"]["mean_freshness"] == 1.0
    assert report.by_scope["project"]["faded"] == 1
    assert forever.id not in {f.id for f in report.faded}


def test_expired_workaround_is_retired_not_deleted(book: Book) -> None:
    expiry = (NOW + timedelta(days=10)).date().isoformat()
    pin = book.add("Pin urllib3 below 2 until requests issue 6432 ships", scope=f"workaround:requests#6432@{expiry}")
    keep = book.add("Pin numpy below 2 for the legacy reporting pipeline", scope="project")
    assert run_decay(book.memory, now=NOW + timedelta(days=5)).cut == []
    dry = run_decay(book.memory, now=NOW + timedelta(days=11), dry_run=True)
    assert [c.id for c in dry.cut] == [pin.id] and pin.id in _search(book, "urllib3 pin", "keyword")
    report = run_decay(book.memory, now=NOW + timedelta(days=11))
    assert [c.id for c in report.cut] == [pin.id]
    for mode in ("keyword", "vector", "hybrid"):
        assert pin.id not in _search(book, "pin urllib3 below 2", mode), mode
    assert keep.id in _search(book, "pin numpy", "keyword")
    assert book.memory.store.get(pin.id).summary.startswith("Pin urllib3")  # the row stays
    assert book.memory.db.one("SELECT reason FROM episode_retirements WHERE episode_id = ?", (pin.id,))[0] == "expired"
    assert run_decay(book.memory, now=NOW + timedelta(days=12)).cut == []  # already out
    restore(book.memory.store, pin.id)
    assert pin.id in _search(book, "pin urllib3 below 2", "hybrid")
