"""Temporal credit flows back from a success; session chaining links turns and shares their credit."""

from __future__ import annotations

import pytest
from learnbook import Book

from tempera.core.learning.chaining import link_episode
from tempera.core.learning.credit import credit_all, credit_success
from tempera.core.learning.loop import learn_from_capture
from tempera.core.utility import record_feedback


def test_success_credits_what_led_to_it_decaying_with_distance(book: Book) -> None:
    investigate = book.add("Investigated the auth bug", at=-5, session="s1")
    cause = book.add("Found the root cause in token validation", at=-4, session="s1")
    nearby = book.add("Reviewed the token expiry settings", at=-0.5, session="other")
    old = book.add("Rotated the signing keys", at=-30, session="older")
    fix = book.add("Fixed the token expiry check", at=0, session="s1", outcome="success")
    rows = {r.episode_id: r for r in credit_success(book.memory, fix)}
    assert set(rows) == {investigate.id, cause.id, nearby.id}  # same session at any gap; the project within 1 h
    assert rows[nearby.id].weight == pytest.approx(0.3) and rows[nearby.id].evidence["steps_back"] == 1
    assert rows[cause.id].weight == pytest.approx(0.15) and rows[investigate.id].weight == pytest.approx(0.075)
    assert book.utility(cause) > book.utility(investigate) > 0.5 == book.utility(old)
    credit_success(book.memory, fix)  # re-crediting replaces, never adds
    assert len(book.rows(cause, "temporal")) == 1


def test_failures_give_no_credit_and_credit_all_rebuilds(book: Book) -> None:
    first = book.add("Tried a retry loop", at=-1, session="s1")
    book.add("Retry loop did not help", at=0, session="s1", outcome="failure")
    assert credit_all(book.memory) == 0 and book.utility(first) == 0.5
    book.add("Increased the pool size; requests pass", at=1, session="s1", outcome="success")
    assert credit_all(book.memory) == 2
    assert credit_all(book.memory) == 2 and len(book.rows(first, "temporal")) == 1


def test_session_turns_link_in_order_and_the_two_hour_rule(book: Book) -> None:
    a = book.add("Set up the CI pipeline", at=-3, session="s1")
    b = book.add("Added caching to the CI pipeline", at=-2.5, session="s1")
    c = book.add("Made the CI cache key include the lockfile", at=-1, session="s2")
    d = book.add("Unrelated later work on docs", at=5, session="s3")
    links = [(x.src_id, x.dst_id, x.relationship) for e in (a, b, c, d) for x in link_episode(book.memory, e)]
    # c is the first turn of s2, 1.5 h after b; d comes six hours later: no link
    assert links == [(a.id, b.id, "continuation"), (b.id, c.id, "same_project_window")]
    assert link_episode(book.memory, b) and book.memory.db.one("SELECT COUNT(*) FROM episode_links")[0] == 2


def test_linked_episodes_share_part_of_their_credit(book: Book) -> None:
    a = book.add("Investigated flaky test in the payments suite", at=-1, session="s1")
    b = book.add("Pinned the clock in the payments tests", at=0, session="s1")
    link_episode(book.memory, b)
    record_feedback(book.memory.db, b.id, "helpful")
    link_episode(book.memory, b)  # recomputes the share with the new evidence
    [row] = book.rows(a, "chain")
    assert row["weight"] == pytest.approx(0.25) and row["evidence"]["origin"] == b.id
    record_feedback(book.memory.db, b.id, "helpful")
    link_episode(book.memory, b)
    assert [r["weight"] for r in book.rows(a, "chain")] == [pytest.approx(0.5)]  # replaced, not stacked
    assert book.rows(b, "chain") == []  # a has no direct evidence to share


def test_learn_from_capture_runs_every_step(book: Book) -> None:
    tip = book.add("Use pytest --lf to rerun only the failing tests", at=-48, commands=["pytest --lf -x"])
    book.inject("s9", tip)
    step = book.add("Ran the failing payments tests", at=-0.2, session="s9")
    turn = book.add(
        "Reran with pytest --lf -x; all tests pass now",
        at=0,
        session="s9",
        outcome="success",
        commands=["pytest --lf -x"],
    )
    done = learn_from_capture(book.memory, turn)
    assert [link.relationship for link in done.links] == ["continuation"]
    assert [r.episode_id for r in done.temporal] == [step.id]
    assert [(r.episode_id, r.signal) for r in done.implicit] == [(tip.id, "helpful")]
