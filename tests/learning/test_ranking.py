"""Evidence moves ranks among comparably relevant episodes at any age (score = relevance x salience), through the
real store, the offline embedding model and the `tempera feedback` command."""

from __future__ import annotations

from datetime import timedelta

import pytest
from learnbook import NOW, Book

from tempera.core.models import Episode
from tests.support.cli import tempera

FLAKY = [
    "Fixed the flaky checkout test by freezing time with freezegun",
    "Fixed the flaky login test by waiting for the redirect instead of sleeping",
    "Fixed the flaky search test by seeding the random generator",
    "Fixed the flaky upload test by using a temporary directory per test",
    "Fixed the flaky billing test by mocking the currency rate service",
]
QUERY = "flaky test fix"


def vote(signal: str, ep_id: str, times: int) -> None:
    for _ in range(times):
        tempera("feedback", signal, "-e", ep_id, check=True)


def ranking(book: Book, query: str = QUERY, mode: str | None = None) -> list[str]:
    return [h.episode.id for h in book.memory.retrieve(query, project=str(book.root), limit=10, mode=mode)]


def votes_long_ago(book: Book, ep: Episode, days: float) -> None:
    """The helpful votes were given `days` ago: freshness counts from then, as if the votes were that old."""
    book.memory.db.execute(
        "UPDATE episodes SET last_useful_at = ? WHERE id = ?", ((NOW - timedelta(days=days)).isoformat(), ep.id)
    )


@pytest.fixture
def flaky(book: Book) -> list[Episode]:
    return [book.add(summary, at=-i) for i, summary in enumerate(FLAKY)]


def test_four_unhelpful_votes_demote_the_top_hit(book: Book, flaky: list[Episode]) -> None:
    first, runner_up = ranking(book)[:2]
    vote("unhelpful", first, 4)
    after = ranking(book)
    assert after.index(first) > after.index(runner_up)
    assert after[0] != first


def test_helpful_votes_lift_one_to_the_top(book: Book, flaky: list[Episode]) -> None:
    before = ranking(book)
    last = before[-1]
    vote("helpful", last, 3)
    assert ranking(book)[0] == last


def test_old_but_repeatedly_helpful_outranks_fresh_unproven(book: Book) -> None:
    summary = "Fixed the flaky checkout test by freezing time with freezegun"
    fresh = book.add(summary)  # stored first: ties of equal relevance go its way
    old = book.add(summary, at=-24 * 300)
    vote("helpful", old.id, 4)
    votes_long_ago(book, old, 300)
    assert ranking(book)[:2] == [old.id, fresh.id]


def test_fresh_beats_stale_of_equal_relevance_without_evidence(book: Book) -> None:
    summary = "Fixed the flaky checkout test by freezing time with freezegun"
    old = book.add(summary, at=-24 * 300)  # stored first: ties of equal relevance go its way
    fresh = book.add(summary)
    assert ranking(book)[:2] == [fresh.id, old.id]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_a_year_old_project_episode_still_ranks_when_it_is_the_only_relevant_one(book: Book, mode: str) -> None:
    old = book.add(
        "Rotated the staging database password and updated the deploy secrets in the vault",
        at=-24 * 365,
        scope="project",
    )
    for i, summary in enumerate(
        [
            "Updated the staging database connection string in the deploy config",
            "Changed the staging database backup schedule to nightly",
            "Rotated the TLS certificate on the staging load balancer",
        ]
    ):
        book.add(summary, at=-i)
    assert ranking(book, "rotate the staging database password", mode=mode)[0] == old.id


def test_implicit_use_over_sessions_lifts_one_to_the_top(book: Book) -> None:
    """Injected, then used by successful turns (its file modified, its fix repeated) in three sessions: the
    evidence path of the hooks and capture, no vote."""
    from tempera.core.learning.implicit import apply_implicit_feedback

    flaky = [book.add(summary, at=-i, modified=[f"tests/test_{i}.py"]) for i, summary in enumerate(FLAKY)]
    last = next(e for e in flaky if e.id == ranking(book)[-1])
    for n in range(3):
        session = f"s{n}"
        book.inject(session, last, prompt="this test is flaky again")
        turn = book.add(
            f"Stabilised the suite ({n}) by {last.summary.split(' by ', 1)[1]}",
            session=session,
            outcome="success",
            modified=last.context.files_modified,
        )
        [result] = apply_implicit_feedback(book.memory, session, turn)
        assert result.signal == "helpful", result
    assert ranking(book)[0] == last.id


def test_an_episode_ignored_session_after_session_falls_below_the_next(book: Book, flaky: list[Episode]) -> None:
    """The third hit (comparably relevant to the fourth) is injected into three sessions and ignored by each
    (their turns change other files). Once it was ignored in every session it was shown in, three times, the third
    ignore weighs implicit_chronic_weight and the fourth hit takes its place; three ignores of 0.05 each (utility
    0.47, score x0.97) would leave it where it was."""
    from tempera.core.learning.implicit import apply_implicit_feedback

    shown_id, next_id = ranking(book)[2:4]
    shown = next(e for e in flaky if e.id == shown_id)
    for n in range(3):
        session = f"s{n}"
        book.inject(session, shown, prompt="this test is flaky again")
        turn = book.add(
            f"Bumped the copyright year ({n})", session=session, outcome="success", modified=["footer.html"]
        )
        [result] = apply_implicit_feedback(book.memory, session, turn)
        assert result.signal == "unhelpful", result
    rows = book.rows(shown, "implicit")
    assert [r["weight"] for r in rows] == [0.05, 0.05, book.memory.config.bellman.implicit_chronic_weight]
    assert rows[-1]["evidence"]["chronic"] and "chronic" not in rows[0]["evidence"]
    after = ranking(book)
    assert after.index(shown_id) > after.index(next_id)


def test_being_retrieved_is_not_evidence(book: Book, flaky: list[Episode]) -> None:
    before = ranking(book)
    for _ in range(20):
        ranking(book)
    assert ranking(book) == before


# The case (#38): flaky-test episodes worded differently, so some lack a word of the query ("fix").
WORDED = [
    "Fixed the flaky checkout test by freezing time with freezegun",
    "Stabilised the flaky login test by waiting for the redirect instead of sleeping",
    "Fixed the flaky search test by seeding the random generator",
    "Made the upload test stop being flaky with a temporary directory per test",
    "The billing test was flaky: mocked the currency rate service",
]


def test_votes_never_lift_an_irrelevant_episode_over_a_relevant_one(book: Book) -> None:
    """An episode about something else that hybrid still finds (it holds "fix"), far below the flaky-test ones in
    meaning, gets twelve helpful votes: it stays below each of them (salience is bounded; relevance decides)."""
    ids = [book.add(summary, at=-i).id for i, summary in enumerate(WORDED)]
    other = book.add("Fixed a typo in the README")
    vote("helpful", other.id, 12)
    found = [h.episode.id for h in book.memory.retrieve(QUERY, project=str(book.root), limit=10)]
    assert other.id in found
    assert found.index(other.id) > max(found.index(i) for i in ids)


CHECKOUT, UPLOAD = WORDED[0], WORDED[3]


def implicit_vote(book: Book, signal: str, ep_id: str, times: int) -> None:
    """What the capture's use detector records (source `implicit`), as many times as four votes."""
    from tempera.core.utility import record_feedback

    for _ in range(times):
        record_feedback(book.memory.db, ep_id, signal, source="implicit")


@pytest.fixture
def worded(book: Book) -> dict[str, str]:
    """summary -> id; the upload episode (no "fix") is a few hundredths of cosine below the checkout one."""
    ids = {summary: book.add(summary, at=-i).id for i, summary in enumerate(WORDED)}
    hits = book.memory.retrieve(QUERY, project=str(book.root), limit=10, mode="vector")
    sim = {h.episode.summary: h.similarity or 0.0 for h in hits}
    assert 0 < sim[CHECKOUT] - sim[UPLOAD] <= 0.05, sim
    return ids


def test_four_helpful_votes_lift_an_episode_over_one_a_few_hundredths_of_cosine_closer(
    book: Book, worded: dict[str, str]
) -> None:
    """Before the votes hybrid puts the upload episode below the checkout one: it lacks "fix", and the BM25 list's
    coverage weight made that a relevance gap of 0.45 against 0.99, which four votes (x1.33) could not cross."""
    before = ranking(book)
    assert before.index(worded[UPLOAD]) > before.index(worded[CHECKOUT])
    vote("helpful", worded[UPLOAD], 4)
    after = ranking(book)
    assert after.index(worded[UPLOAD]) < after.index(worded[CHECKOUT])


def test_four_unhelpful_votes_demote_an_episode_below_one_a_few_hundredths_of_cosine_further(
    book: Book, worded: dict[str, str]
) -> None:
    vote("unhelpful", worded[CHECKOUT], 4)
    after = ranking(book)
    assert after.index(worded[CHECKOUT]) > after.index(worded[UPLOAD])


def test_the_hook_injects_first_the_episode_votes_lifted(book: Book, worded: dict[str, str]) -> None:
    """What the agent sees: the UserPromptSubmit hook's episodes (`warm.relevant_hits`), in hybrid's order."""
    from tempera.inject.warm import relevant_hits

    def injected() -> list[str]:
        return [h.id for h in relevant_hits(book.memory, QUERY, book.project, set())]

    assert worded[UPLOAD] not in injected()[:1]
    vote("helpful", worded[UPLOAD], 4)
    assert injected()[0] == worded[UPLOAD]


def test_implicit_verdicts_do_not_get_the_votes_reach(book: Book, worded: dict[str, str]) -> None:
    """The use detector's verdicts still move salience, but not across the coverage gap: over the learning replay a
    third of their moves across such gaps were wrong, and learning must never hurt."""
    implicit_vote(book, "helpful", worded[UPLOAD], 4)
    after = ranking(book)
    assert after.index(worded[UPLOAD]) > after.index(worded[CHECKOUT])


def test_votes_on_one_episode_leave_the_order_of_the_others(book: Book, worded: dict[str, str]) -> None:
    before = [i for i in ranking(book) if i != worded[UPLOAD]]
    vote("helpful", worded[UPLOAD], 4)
    assert [i for i in ranking(book) if i != worded[UPLOAD]] == before
