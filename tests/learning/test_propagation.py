"""Propagation moves neighbours toward their source, hop by hop, and re-running it changes nothing."""

from __future__ import annotations

from itertools import pairwise

import pytest
from learnbook import Book

from tempera.core.learning.propagation import propagate
from tempera.core.utility import record_feedback

LOOP = "Fixed the login redirect loop by validating the return URL in the auth middleware"
EXPIRED = "Auth middleware sends users to the login page when the session cookie has expired"  # 0.69 to LOOP
REFRESH = "Session cookies expire after 30 minutes; the auth middleware refreshes them"  # 0.57 to LOOP, 0.87 to EXPIRED
PAGING = "Added keyset pagination to the orders API endpoint"  # ~0.1 to all


@pytest.fixture
def graph(book: Book) -> dict[str, object]:
    book.memory.config.bellman.propagation_threshold = 0.6  # LOOP-EXPIRED and EXPIRED-REFRESH are edges
    return {
        name: book.add(text)
        for name, text in (("loop", LOOP), ("expired", EXPIRED), ("refresh", REFRESH), ("paging", PAGING))
    }


def _feedback(book: Book, ep: object, signal: str, times: int) -> None:
    for _ in range(times):
        record_feedback(book.memory.db, ep.id, signal)  # type: ignore[attr-defined]


def test_helpful_source_lifts_neighbours_by_hop(book: Book, graph: dict) -> None:
    _feedback(book, graph["loop"], "helpful", 3)
    report = propagate(book.memory)
    u = {k: book.utility(v) for k, v in graph.items()}
    assert report.sources == 1 and [h.hop for h in report.hops] == [1, 2]
    assert u["loop"] == pytest.approx(0.8)  # the source keeps its own value
    assert u["loop"] > u["expired"] > u["refresh"] > 0.5  # toward the source, less at hop 2
    assert u["paging"] == 0.5  # not a neighbour
    [row] = book.rows(graph["refresh"], "propagation")
    assert row["signal"] == "helpful" and row["evidence"]["hop"] == 2 and row["evidence"]["origin"] == graph["loop"].id


def test_unhelpful_source_lowers_neighbours(book: Book, graph: dict) -> None:
    _feedback(book, graph["loop"], "unhelpful", 3)
    propagate(book.memory)
    assert book.utility(graph["loop"]) < book.utility(graph["expired"]) < book.utility(graph["refresh"]) < 0.5
    assert book.utility(graph["paging"]) == 0.5


def test_equal_values_change_nothing(book: Book, graph: dict) -> None:
    _feedback(book, graph["loop"], "helpful", 1)
    _feedback(book, graph["loop"], "unhelpful", 1)  # strong evidence, value exactly 0.5
    report = propagate(book.memory)
    assert report.sources == 1 and report.evidence_rows == 0
    assert {book.utility(e) for e in graph.values()} == {0.5}


def test_neighbour_moves_toward_but_never_past_the_source(book: Book, graph: dict) -> None:
    _feedback(book, graph["loop"], "helpful", 1)  # source at 2/3
    record_feedback(book.memory.db, graph["expired"].id, "helpful", weight=3.0, source="temporal")  # not direct
    before = book.utility(graph["expired"])
    assert before > book.utility(graph["loop"])  # the neighbour starts above its source ...
    propagate(book.memory)
    assert book.utility(graph["loop"]) < book.utility(graph["expired"]) < before  # ... and is pulled down to it


def test_converges_and_rerunning_is_idempotent(book: Book, graph: dict) -> None:
    book.memory.config.bellman.max_propagation_depth = 10
    _feedback(book, graph["loop"], "helpful", 4)
    first = propagate(book.memory)
    assert first.converged and len(first.hops) < 10, first
    assert all(a.max_change > b.max_change for a, b in pairwise(first.hops))
    values = {k: book.utility(v) for k, v in graph.items()}
    count = book.memory.db.one("SELECT COUNT(*) FROM feedback_events WHERE source = 'propagation'")[0]
    second = propagate(book.memory)
    assert {k: book.utility(v) for k, v in graph.items()} == values
    assert book.memory.db.one("SELECT COUNT(*) FROM feedback_events WHERE source = 'propagation'")[0] == count
    assert second.evidence_rows == first.evidence_rows


def test_depth_limit_is_reported_as_not_converged(book: Book, graph: dict) -> None:
    book.memory.config.bellman.max_propagation_depth = 1
    _feedback(book, graph["loop"], "helpful", 3)
    report = propagate(book.memory)
    assert not report.converged and report.stopped_by == "maximum depth"
    assert book.utility(graph["refresh"]) == 0.5  # two hops away


def test_project_scope_leaves_other_projects_alone(book: Book, graph: dict, tmp_path) -> None:
    from learnbook import Book as Other

    other_root = tmp_path / "other"
    other_root.mkdir()
    other = Other(book.memory, other_root)
    twin = other.add(EXPIRED)
    _feedback(book, graph["loop"], "helpful", 3)
    propagate(book.memory, project_id=book.project.id)
    assert book.utility(graph["expired"]) > 0.5 and other.utility(twin) == 0.5


def test_without_vectors_propagation_says_why_and_still_refreshes_shares(book: Book, graph: dict) -> None:
    from tempera.core.memory import Memory

    _feedback(book, graph["loop"], "helpful", 3)
    with Memory(use_model=False) as keyword_only:
        report = propagate(keyword_only)
    assert report.skipped and "keyword-only" in report.skipped and not report.converged
    assert book.utility(graph["expired"]) == 0.5
