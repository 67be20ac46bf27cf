"""Near-equal scores within one of hybrid's lists share a rank, so freshness orders comparably relevant episodes
even when the lists weigh differently (real store, offline model)."""

from __future__ import annotations

from learnbook import NOW, Book

from tempera.core.retrieve import Hit

QUERY = "the flaky login test fix"


def hits(book: Book) -> dict[str, Hit]:
    return {h.episode.id: h for h in book.memory.retrieve(QUERY, project=str(book.root), limit=10, now=NOW)}


def test_two_fixes_holding_every_term_tie_in_bm25_and_freshness_decides(book: Book) -> None:
    """Both fixes hold every term of the query and score the same BM25; the BM25 list puts the older first, the
    vector list the newer (cosines 0.81 and 0.78). With the BM25 list weighing twice the vector list, ranks by
    position alone (kw1 + vec2 against kw2 + vec1) let the list's order decide instead of freshness."""
    old = book.add("Fixed the flaky login test by waiting for the redirect", at=-13 * 24)
    book.add("Ran the migration of the orders table to PostgreSQL", at=-10 * 24)
    new = book.add("Fixed the flaky login test again: the session cookie expired", at=-8 * 24)
    cfg = book.memory.config.retrieval
    book.memory.config.retrieval = cfg.model_copy(update={"hybrid_keyword_max_weight": 2.0})
    got = hits(book)
    assert (got[old.id].keyword_rank, got[new.id].keyword_rank) == (1, 2)
    assert got[new.id].vector_rank < got[old.id].vector_rank
    assert list(got).index(new.id) < list(got).index(old.id)
