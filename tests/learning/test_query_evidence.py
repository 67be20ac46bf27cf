"""Query-dependent evidence: verdicts of past injections count in proportion to how alike their prompt is to the
one being ranked for, through the real store, the injections table and the offline embedding model."""

from __future__ import annotations

import pytest
from learnbook import Book

from tempera.core.models import Episode
from tests.learning.test_ranking import FLAKY, QUERY

# One word only each flaky episode holds: a prompt about something else that still retrieves that episode.
DISTINCT = dict(zip(FLAKY, ["freezegun", "redirect", "generator", "directory", "currency"]))


def unrelated(ep: Episode) -> str:
    return f"upgrade the {DISTINCT[ep.summary]} dependency in the release pipeline"


def scores(book: Book, query: str) -> dict[str, float]:
    return {h.episode.id: h.score for h in book.memory.retrieve(query, project=str(book.root), limit=10)}


def ignored_for(book: Book, ep: Episode, prompt: str, times: int) -> None:
    """`ep` was shown for `prompt` in `times` sessions and judged ignored each time (no global evidence row)."""
    for i in range(times):
        book.inject(f"s{i}", ep, prompt=prompt)
    book.memory.db.execute("UPDATE injections SET used = 0, evaluated_at = 'x' WHERE episode_id = ?", (ep.id,))


@pytest.fixture
def flaky(book: Book) -> list[Episode]:
    book.memory.config.retrieval.query_evidence_effect = 0.5
    return [book.add(summary, at=-i) for i, summary in enumerate(FLAKY)]


def test_ignored_for_a_similar_prompt_demotes_but_not_for_an_unrelated_one(book: Book, flaky: list[Episode]) -> None:
    top = max(scores(book, QUERY).items(), key=lambda kv: kv[1])[0]
    ep = next(e for e in flaky if e.id == top)
    before_unrelated = scores(book, unrelated(ep))
    ignored_for(book, ep, "fix the flaky test", 3)
    after = scores(book, QUERY)
    assert max(after, key=lambda k: after[k]) != top
    after_unrelated = scores(book, unrelated(ep))
    assert top in before_unrelated
    assert after_unrelated[top] == pytest.approx(before_unrelated[top])
