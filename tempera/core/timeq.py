"""Time in questions: "what did we do yesterday", "last week", "in June", "before the migration", "the first time".

`parse` reads one prompt against the time it was asked (the prompt's own time; for evals the question's reference
time) and returns a `TimeQuery`: a window of time the prompt points at, and/or an ordering (earliest or latest
first). `apply` is the one retrieval step that uses it, after fusion and salience: hits whose episode falls in the
window are boosted, episodes of the window that no index found join the candidates (a prompt like "what did we do
yesterday" has no words to search for), and an ordering lifts the earliest or latest of the comparably relevant
hits. A window boosts rather than filters: an episode's date is when the work was done, and a conversation's
"last week" is a loose bound. Calendar words use the reference time's own time zone. Standard library only
(textsearch is too).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol, TypeVar

from tempera.core import textsearch

WINDOW_BOOST = 1.0  # an episode inside the window scores (1 + this) x its score
ORDER_BOOST = 0.5  # the earliest (or latest) comparably relevant hit scores up to (1 + this) x
ORDER_BAND = 0.5  # "comparably relevant": relevance at least this share of the best hit's
WINDOW_ONLY_RELEVANCE = 0.1  # the relevance of an episode found by its date alone
MAX_QUERY_CHARS = 400  # a longer prompt (a pasted plan, a log) is not a question about time: its "latest" is not

Order = Literal["earliest", "latest"]

MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        1,
    )
}
MONTHS |= {m[:3]: i for m, i in list(MONTHS.items()) if m != "may"} | {"sept": 9}
WEEKDAYS = {d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month; northern hemisphere
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
    "couple of": 2,
    "few": 3,
}
# words a prompt about time alone still has ("what did we work on yesterday")
GENERIC = frozenset(
    {
        "happened",
        "happen",
        "work",
        "worked",
        "working",
        "go",
        "going",
        "went",
        "done",
        "doing",
        "time",
        "day",
        "week",
        "month",
        "year",
        "last",
        "recent",
        "ago",
        "since",
    }
)
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_NUM = r"\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True))
_UNIT = r"(day|week|month|year)s?"
_EARLIEST = re.compile(
    r"\b(first time|(?:did|do|have) (?:we|i|you) first|at first|initially|originally|earliest|"
    r"in the beginning)\b"
)
_LATEST = re.compile(r"\b(last time|most recent(?:ly)?|latest|recently|lately)\b")
_AGO = re.compile(rf"\b({_NUM})\s+{_UNIT}\s+ago\b")
_PAST_N = re.compile(rf"\b(?:last|past|previous)\s+({_NUM})\s+{_UNIT}\b")
_PERIOD = re.compile(r"\b(this|last|past|previous)\s+(week|weekend|month|year|morning|night)\b")
_WEEKDAY = re.compile(r"\b(?:on|last|this|past)\s+(" + "|".join(WEEKDAYS) + r")\b")
_SEASON = re.compile(r"\b(?:in|during|over|this|last)\s+(?:the\s+)?(" + "|".join(SEASONS) + r")(?:\s+(\d{4}))?\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\b(?:,?\s+(\d{{4}}))?")
_MONTH_DAY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?")
_MONTH_YEAR = re.compile(rf"\b(?:in|during|of|since|before|after|last|this)\s+({_MONTH})\b(?:,?\s+(\d{{4}}))?")
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d{2})\b")
# an event names its subject: "before the migration", "after her wedding", not "before you commit", "after that"
_EVENT = re.compile(r"(the|our|my|your|his|her|their|we|i)\s")
_BOUND = re.compile(r"\b(before|after|since|until|prior to)\s+(.+?)\s*(?:[?.!;,]|$)")


@dataclass(frozen=True)
class TimeQuery:
    """What a prompt says about time: a window [start, end) and/or an ordering; `topic`: it also names a subject
    (else it asks only about a time: "what did we do yesterday")."""

    start: datetime | None = None
    end: datetime | None = None
    order: Order | None = None
    topic: bool = True

    def contains(self, when: datetime) -> bool:
        return (self.start is None or when >= self.start) and (self.end is None or when < self.end)

    @property
    def has_window(self) -> bool:
        return self.start is not None or self.end is not None


class Scored(Protocol):
    """What `apply` changes of a retrieval hit."""

    relevance: float
    score: float


H = TypeVar("H", bound=Scored)


def _day(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(year: int, month: int, like: datetime) -> tuple[datetime, datetime]:
    start = like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    end = start.replace(year=year + month // 12, month=month % 12 + 1)
    return start, end


def _months(first: int, count: int, year: int | None, now: datetime) -> tuple[datetime, datetime]:
    """`count` months from `first`; without a year, the latest such span that has begun by `now`."""
    y = year if year is not None else (now.year if (now.year, now.month) >= (now.year, first) else now.year - 1)
    start, _ = _month(y, first, now)
    last = first + count - 1
    _, end = _month(y + (last - 1) // 12, (last - 1) % 12 + 1, now)
    return start, end


def _number(text: str) -> int:
    return int(text) if text.isdigit() else NUMBERS[text]


def _date(text: str, now: datetime) -> tuple[datetime, datetime, str] | None:
    """A calendar phrase ("8 May 2023", "June", "yesterday", "last week") as a window and the words that said it."""
    q = text.lower()
    today = _day(now)
    if m := re.search(r"\bday before yesterday\b", q):
        return today - timedelta(days=2), today - timedelta(days=1), m.group(0)
    if m := re.search(r"\byesterday\b|\blast night\b", q):
        return today - timedelta(days=1), today, m.group(0)
    if m := re.search(r"\b(today|this morning|this afternoon|tonight|earlier today)\b", q):
        return today, today + timedelta(days=1), m.group(0)
    if m := _AGO.search(q):
        n, days = _number(m.group(1)), UNITS[m.group(2)]
        centre = today - timedelta(days=n * days)
        half = timedelta(days=days // 2)
        return centre - half, centre + half + timedelta(days=1), m.group(0)
    if m := _PAST_N.search(q):
        return today - timedelta(days=_number(m.group(1)) * UNITS[m.group(2)]), today + timedelta(days=1), m.group(0)
    for pattern, (d, mo) in ((_DAY_MONTH, (1, 2)), (_MONTH_DAY, (2, 1))):
        if m := pattern.search(q):
            year = int(m.group(3)) if m.group(3) else None
            try:
                start = today.replace(year=year or now.year, month=MONTHS[m.group(mo)], day=int(m.group(d)))
            except ValueError:
                continue
            if year is None and start > today:
                start = start.replace(year=start.year - 1)
            return start, start + timedelta(days=1), m.group(0)
    if m := _WEEKDAY.search(q):
        back = (today.weekday() - WEEKDAYS[m.group(1)]) % 7 or 7
        return today - timedelta(days=back), today - timedelta(days=back - 1), m.group(0)
    if m := _PERIOD.search(q):
        return *_period(m.group(1), m.group(2), now), m.group(0)
    if m := _SEASON.search(q):
        return *_months(SEASONS[m.group(1)], 3, int(m.group(2)) if m.group(2) else None, now), m.group(0)
    if m := _MONTH_YEAR.search(q):
        return *_months(MONTHS[m.group(1)], 1, int(m.group(2)) if m.group(2) else None, now), m.group(0)
    if m := _YEAR.search(q):
        start = today.replace(year=int(m.group(1)), month=1, day=1)
        return start, start.replace(year=start.year + 1), m.group(0)
    return None


def _period(which: str, unit: str, now: datetime) -> tuple[datetime, datetime]:
    """this/last week, weekend, month, year, morning, night."""
    today = _day(now)
    last = which != "this"
    if unit in ("morning", "night"):
        return (today - timedelta(days=1), today) if last else (today, today + timedelta(days=1))
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        return (monday - timedelta(days=7), monday) if last else (monday, today + timedelta(days=1))
    if unit == "weekend":
        saturday = today - timedelta(days=(today.weekday() - 5) % 7)
        if last and saturday + timedelta(days=2) > now:
            saturday -= timedelta(days=7)
        return saturday, saturday + timedelta(days=2)
    if unit == "month":
        start, _ = _month(now.year, now.month, now)
        return (
            (_month(start.year - (start.month == 1), (start.month - 2) % 12 + 1, now)[0], start)
            if last
            else (start, today + timedelta(days=1))
        )
    start = today.replace(month=1, day=1)
    return (start.replace(year=start.year - 1), start) if last else (start, today + timedelta(days=1))


def parse(query: str, now: datetime, anchor: Callable[[str], datetime | None] | None = None) -> TimeQuery | None:
    """What `query`, asked at `now` (aware), says about time; None when it says nothing (or is too long to be a
    question about time).

    "before/after/since/until X": X is a date phrase, else an event ("the ...", "we ...") whose time `anchor` looks
    up ("before the migration": when the migration was done); an unknown event bounds nothing, and neither does an
    instruction ("run lint before you commit")."""
    if len(query) > MAX_QUERY_CHARS:
        return None
    q = " ".join(query.lower().split())
    order: Order | None = "earliest" if _EARLIEST.search(q) else "latest" if _LATEST.search(q) else None
    start = end = None
    if m := _BOUND.search(q):
        word, what = m.group(1), m.group(2)
        window = _date(m.group(0), now)
        event = anchor(what) if anchor and _EVENT.match(what) else None
        point = (window[1] if word == "after" else window[0]) if window else event
        if point is not None:
            start, end = (point, None) if word in ("after", "since") else (None, point)
            q = q.replace(m.group(0) if window else m.group(1), " ")  # the event's words are the topic
    if start is None and end is None and (window := _date(q, now)):
        start, end, said = window
        q = q.replace(said, " ")
    if start is None and end is None and order is None:
        return None
    for pattern in (_EARLIEST, _LATEST):
        q = pattern.sub(" ", q)
    topic = bool(set(textsearch.query_terms(q)) - GENERIC)
    return TimeQuery(start, end, order, topic)


def apply(
    hits: list[H],
    tq: TimeQuery | None,
    when: Callable[[H], datetime],
    window_episodes: Callable[[TimeQuery], list[H]] | None = None,
) -> list[H]:
    """The hits re-scored (in place) and re-sorted for the time query, best first.

    A prompt with a topic ("the login fix last week") boosts the hits in its window, and the window's other
    episodes (`window_episodes`: those not among the hits, scored by salience alone) join at a low relevance.
    A prompt only about time ("what did we do yesterday") keeps only the window's episodes. An ordering lifts the
    earliest (latest) of the comparably relevant hits."""
    if tq is None:
        return hits
    if tq.has_window:
        extra = window_episodes(tq) if window_episodes else []
        for h in extra:
            h.relevance, h.score = WINDOW_ONLY_RELEVANCE, WINDOW_ONLY_RELEVANCE * h.score
        hits = [h for h in hits if tq.topic or tq.contains(when(h))] + extra
        for h in hits:
            if tq.contains(when(h)):
                h.score *= 1 + WINDOW_BOOST
    if tq.order and hits:
        top = max(h.relevance for h in hits)
        band = sorted((h for h in hits if h.relevance >= ORDER_BAND * top), key=when, reverse=tq.order == "latest")
        for i, h in enumerate(band):
            h.score *= 1 + ORDER_BOOST * (1 - i / max(1, len(band) - 1))
    return sorted(hits, key=lambda h: -h.score)
