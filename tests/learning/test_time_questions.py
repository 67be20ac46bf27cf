"""Prompts about time rank by episode dates, through the real store, the offline embedding model and every mode."""

from __future__ import annotations

import pytest
from learnbook import NOW, Book

from tempera.core.models import Episode

DAY = 24.0
# Hours since NOW's midnight: "yesterday" is a calendar day, so its episodes sit at fixed times of that day (22 hours
# ago is today after 22:00, and an hour ago is yesterday before 01:00: the test failed in those hours).
SINCE_MIDNIGHT = (NOW - NOW.replace(hour=0, minute=0, second=0)).total_seconds() / 3600


def ranking(book: Book, query: str, mode: str = "hybrid") -> list[str]:
    return [h.episode.id for h in book.memory.retrieve(query, project=str(book.root), limit=10, mode=mode, now=NOW)]


@pytest.fixture
def week(book: Book) -> dict[str, Episode]:
    """A fortnight of work, one episode per day or so; the login test was fixed twice."""
    return {
        "login_first": book.add("Fixed the flaky login test by waiting for the redirect", at=-13 * DAY),
        "migration": book.add("Ran the migration of the orders table to PostgreSQL", at=-10 * DAY),
        "login_again": book.add("Fixed the flaky login test again: the session cookie expired", at=-8 * DAY),
        "cache": book.add("Added a Redis cache in front of the product search", at=-3 * DAY),
        "yesterday_docs": book.add("Wrote the API docs for the billing endpoints", at=-SINCE_MIDNIGHT - 14),
        "yesterday_ci": book.add("Sped up the CI pipeline by caching the pip wheels", at=-SINCE_MIDNIGHT - 10),
        "today": book.add("Reviewed the pull request for the checkout page", at=-SINCE_MIDNIGHT / 2),
    }


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "vector"])
def test_what_did_we_do_yesterday_names_yesterdays_work_only(book: Book, week: dict[str, Episode], mode: str) -> None:
    got = ranking(book, "what did we do yesterday?", mode)
    assert set(got) == {week["yesterday_docs"].id, week["yesterday_ci"].id}


def test_a_topic_in_a_window_beats_the_same_topic_outside_it(book: Book, week: dict[str, Episode]) -> None:
    plain = ranking(book, "the flaky login test fix")
    assert plain.index(week["login_again"].id) < plain.index(week["login_first"].id)  # newer first, as usual
    got = ranking(book, "the flaky login test fix from two weeks ago")
    assert got.index(week["login_first"].id) < got.index(week["login_again"].id)


def test_the_first_time_prefers_the_earliest_of_comparably_relevant(book: Book, week: dict[str, Episode]) -> None:
    got = ranking(book, "when did we first fix the flaky login test? the first time")
    assert got[0] == week["login_first"].id
    assert ranking(book, "the most recent flaky login test fix")[0] == week["login_again"].id


def test_after_an_event_uses_the_events_date(book: Book, week: dict[str, Episode]) -> None:
    """ "the migration" is looked up in the store: the login fix done after it wins."""
    assert ranking(book, "the flaky login test fix after the migration")[0] == week["login_again"].id
    assert ranking(book, "the flaky login test fix before the migration")[0] == week["login_first"].id


def test_a_prompt_without_time_words_ranks_as_before(book: Book, week: dict[str, Episode]) -> None:
    cfg = book.memory.config.retrieval
    query = "fix the flaky login test"
    with_step = ranking(book, query)
    book.memory.config.retrieval = cfg.model_copy(update={"time_in_questions": False})
    assert ranking(book, query) == with_step
