"""Hybrid fusion on the shipped coding corpus (real store, real offline model): a rank counts by the evidence behind
it, the share of the query's words a BM25 hit holds and how clearly the vector list's first stands out, so a
paraphrase's nearest embedding is not outvoted by a text sharing one of its words."""

from __future__ import annotations

import pytest

from tempera.core import textsearch
from tempera.core.memory import Memory
from tempera.evaluation.harness import corpus_uuid, load_corpus
from tests.conftest import REPO


@pytest.fixture
def corpus(memory: Memory) -> Memory:
    load_corpus(memory, REPO / "evals" / "corpus" / "episodes.jsonl")
    return memory


def test_a_bm25_first_holding_one_word_of_a_paraphrase_does_not_outvote_the_nearest_embedding(corpus: Memory) -> None:
    """A paraphrase of the session-cookie episode shares no term with it; BM25's first holds one of the query's eight
    words ("authenticated") and is the vector list's second or third. By rank alone, its BM25 first plus vector third
    outvoted the vector list's first (`evals/coding_failures.py`, q-lose-auth-hopping-sites)."""
    query = "shoppers lose their authenticated state when hopping from the marketing site to the store"
    kw = corpus.retrieve(query, project="webshop", mode="keyword")
    vec = corpus.retrieve(query, project="webshop", mode="vector")
    right = corpus_uuid("ws-session-cookie-subdomain")
    assert right not in [h.episode.id for h in kw] and vec[0].episode.id == right
    literal = kw[0]
    assert literal.episode.id in [h.episode.id for h in vec[1:3]]
    assert literal.matched_terms == 1 and len(textsearch.query_words(query)) == 8
    assert corpus.retrieve(query, project="webshop", mode="hybrid")[0].episode.id == right
    cfg = corpus.config.retrieval
    corpus.config.retrieval = cfg.model_copy(update={"hybrid_keyword_coverage_power": 0.0})
    assert corpus.retrieve(query, project="webshop", mode="hybrid")[0].episode.id == literal.episode.id


def test_a_clear_nearest_embedding_is_not_outvoted_by_agreement_lower_down(corpus: Memory) -> None:
    """The vector list's first (the locked-database episode) stands clear of its second (0.43 against 0.32); BM25's
    first holds one of the query's nine words and is the vector list's second. Counted by rank alone, kw1 + vec2
    outvoted vec1; the vector hits after a clear first count by the margin, so it does not."""
    query = "parallel inserts fail because another writer holds the embedded store"
    right = corpus_uuid("rc-sqlx-sqlite-locked")
    vec = corpus.retrieve(query, project="rust-cli", mode="vector", limit=3)
    assert vec[0].episode.id == right and vec[1].similarity is not None and vec[0].similarity is not None
    assert vec[1].similarity < 0.8 * vec[0].similarity
    kw = corpus.retrieve(query, project="rust-cli", mode="keyword", limit=3)
    assert right not in [h.episode.id for h in kw] and kw[0].episode.id == vec[1].episode.id
    assert kw[0].matched_terms == 1 and len(textsearch.query_words(query)) == 9
    hybrid = corpus.retrieve(query, project="rust-cli", mode="hybrid")
    assert hybrid[0].episode.id == right
    cfg = corpus.config.retrieval
    corpus.config.retrieval = cfg.model_copy(update={"hybrid_vector_margin_power": 0.0})
    assert corpus.retrieve(query, project="rust-cli", mode="hybrid")[0].episode.id != right
