"""Time words in prompts, resolved against the time the prompt was asked (a Tuesday, in Berlin's winter time)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tempera.core import timeq

BERLIN = timezone(timedelta(hours=1))
ASKED = datetime(2026, 12, 1, 0, 30, tzinfo=BERLIN)  # Tuesday 1 Dec, 00:30 local: still 30 Nov in UTC


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=BERLIN)


@pytest.mark.parametrize(
    "prompt, start, end, topic",
    [
        ("what did we do yesterday", day(2026, 11, 30), day(2026, 12, 1), False),
        ("What happened last week?", day(2026, 11, 23), day(2026, 11, 30), False),
        ("what was I working on this morning", day(2026, 12, 1), day(2026, 12, 2), False),
        ("the login fix from last Friday", day(2026, 11, 27), day(2026, 11, 28), True),
        ("what did we change 3 days ago in the parser", day(2026, 11, 28), day(2026, 11, 29), True),
        ("deploys in the last 2 weeks", day(2026, 11, 17), day(2026, 12, 2), True),
        ("When did Melanie go camping in June?", day(2026, 6, 1), day(2026, 7, 1), True),
        ("When did Caroline go to a pride parade during the summer?", day(2026, 6, 1), day(2026, 9, 1), True),
        ("What did we decide on 8 May 2023?", day(2023, 5, 8), day(2023, 5, 9), True),
        ("the schema change last month", day(2026, 11, 1), day(2026, 12, 1), True),
        ("what did we ship in 2025", day(2025, 1, 1), day(2026, 1, 1), True),
    ],
)
def test_windows_are_resolved_against_the_time_asked(prompt: str, start: datetime, end: datetime, topic: bool) -> None:
    tq = timeq.parse(prompt, ASKED)
    assert tq is not None
    assert (tq.start, tq.end, tq.order, tq.topic) == (start, end, None, topic)


def test_a_month_not_yet_reached_this_year_is_last_years() -> None:
    tq = timeq.parse("the outage in December", datetime(2026, 3, 2, tzinfo=BERLIN))
    assert tq is not None and (tq.start, tq.end) == (day(2025, 12, 1), day(2026, 1, 1))


@pytest.mark.parametrize(
    "prompt, order",
    [
        ("the first time we saw the flaky login test", "earliest"),
        ("when did we first add the retry?", "earliest"),
        ("how did we originally set up the cache", "earliest"),
        ("the most recent deploy failure", "latest"),
        ("what did we do last time the build broke", "latest"),
    ],
)
def test_orderings(prompt: str, order: str) -> None:
    tq = timeq.parse(prompt, ASKED)
    assert tq is not None and (tq.order, tq.start, tq.end) == (order, None, None)


def test_before_an_event_asks_the_anchor_when_it_happened() -> None:
    migration = day(2026, 10, 14)
    asked: list[str] = []

    def anchor(event: str) -> datetime | None:
        asked.append(event)
        return migration

    tq = timeq.parse("what broke before the migration?", ASKED, anchor)
    assert tq is not None and (tq.start, tq.end, tq.topic) == (None, migration, True)
    assert asked == ["the migration"]
    after = timeq.parse("what changed since June", ASKED, anchor)
    assert after is not None and (after.start, after.end) == (day(2026, 6, 1), None)
    assert asked == ["the migration"]  # a date needs no anchor


def test_an_unknown_event_bounds_nothing() -> None:
    assert timeq.parse("what broke before the migration?", ASKED, lambda _: None) is None


@pytest.mark.parametrize(
    "prompt", ["run the linter before you commit", "after that, fix the flaky test", "rebase before committing"]
)
def test_an_instruction_with_before_or_after_is_no_event(prompt: str) -> None:
    assert timeq.parse(prompt, ASKED, lambda _: day(2026, 10, 14)) is None


@pytest.mark.parametrize(
    "prompt",
    [
        "fix the flaky login test",
        "When did Melanie run a charity race?",
        "first, run the tests",
        "may I rename this module?",
        "continue",
        "can we check when we fill the first prompt field in sessionState?",
        "Implement the following plan: use the latest schema. " + "Step. " * 80,
    ],
)
def test_prompts_without_time_words_pass_unchanged(prompt: str) -> None:
    assert timeq.parse(prompt, ASKED) is None
