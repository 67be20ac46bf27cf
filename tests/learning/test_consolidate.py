"""Consolidation keeps everything: both texts, both histories, union of files and tags, the better outcome."""

from __future__ import annotations

from learnbook import Book

from tempera.core.learning.consolidate import consolidate
from tempera.core.utility import record_feedback

A = "Fixed the login redirect loop by validating the return URL in the auth middleware"
B = "Fixed a redirect loop after login by checking the return URL in the auth middleware"  # cosine 0.98 to A
OTHER = "Added keyset pagination to the orders API endpoint"


def _pair(book: Book) -> tuple:
    failed = book.add(A, at=-5, outcome="failure", modified=["auth/middleware.py"], commands=["pytest tests/auth"])
    worked = book.add(B, at=-1, outcome="success", modified=["auth/urls.py"], tests_after=[("pytest", True)])
    other = book.add(OTHER)
    record_feedback(book.memory.db, failed.id, "unhelpful", evidence={"note": "wrong file"})
    record_feedback(book.memory.db, worked.id, "helpful")
    record_feedback(book.memory.db, worked.id, "helpful")
    return failed, worked, other


def test_dry_run_changes_nothing(book: Book) -> None:
    failed, worked, _ = _pair(book)
    report = consolidate(book.memory, dry_run=True)
    assert [(m.keep_id, m.absorbed_id) for m in report.merges] == [(worked.id, failed.id)]
    assert book.memory.db.one("SELECT COUNT(*) FROM episode_retirements")[0] == 0
    assert book.memory.store.get(worked.id).summary == B


def test_merge_keeps_both_histories_and_never_downgrades(book: Book) -> None:
    failed, worked, other = _pair(book)
    record_feedback(book.memory.db, failed.id, "helpful", weight=0.3, source="temporal", evidence={"origin": other.id})
    [merge] = consolidate(book.memory).merges
    assert (merge.keep_id, merge.absorbed_id) == (worked.id, failed.id)  # success survives a failure
    kept = book.memory.store.get(worked.id)
    assert kept.outcome.status == "success" and B in kept.summary and A in kept.summary
    assert kept.context.files_modified == ["auth/urls.py", "auth/middleware.py"]
    assert kept.context.commands == ["pytest tests/auth"]
    assert any(failed.id in line for line in kept.outcome.evidence)
    history = book.rows(worked)
    assert sorted(r["signal"] for r in history) == ["helpful", "helpful", "unhelpful"]  # direct rows moved
    assert book.rows(failed) == []  # derived rows dropped: the next propagation pass recomputes them
    assert kept.utility.value == book.utility(worked) == (1 + 2) / (2 + 3)
    db = book.memory.db
    assert (
        db.one("SELECT relationship FROM episode_links WHERE src_id = ? AND dst_id = ?", (failed.id, worked.id))[0]
        == "consolidated"
    )
    assert book.memory.store.get(failed.id).summary == A  # the absorbed episode is still stored, unchanged
    hits = [h.episode.id for h in book.memory.retrieve("redirect loop return URL", project=str(book.root))]
    assert hits[0] == worked.id and failed.id not in hits
    assert other.id not in {merge.keep_id, merge.absorbed_id}
    assert consolidate(book.memory).merges == []  # nothing left to merge


def test_later_feedback_for_the_absorbed_episode_reaches_the_survivor(book: Book) -> None:
    from tempera.core.learning.implicit import apply_implicit_feedback

    failed, worked, _ = _pair(book)
    book.inject("s1", failed)  # injected before the merge
    consolidate(book.memory)
    turn = book.add(f"Reused memory {failed.id[:8]}: validated the return URL", session="s1", outcome="success")
    [result] = apply_implicit_feedback(book.memory, "s1", turn)
    assert result.episode_id == worked.id and result.signal == "helpful"
    assert book.rows(failed) == []
