"""Hybrid fusion on the shipped coding corpus (real store, real offline model): a BM25 hit counts by the share of
the query's words it holds, so a paraphrase's nearest embedding is not outvoted by a text sharing one of its
words."""

from __future__ import annotations

from tempera.core import textsearch
from tempera.core.memory import Memory
from tempera.evaluation.harness import corpus_uuid, load_corpus
from tests.conftest import REPO


def test_a_bm25_first_holding_one_word_of_a_paraphrase_does_not_outvote_the_nearest_embedding(
    memory: Memory,
) -> None:
    """A paraphrase of the session-cookie episode shares no term with it; BM25's first holds one of the query's eight
    words ("authenticated") and is the vector list's second or third. By rank alone, its BM25 first plus vector third
    outvoted the vector list's first (`evals/coding_failures.py`, q-lose-auth-hopping-sites)."""
    load_corpus(memory, REPO / "evals" / "corpus" / "episodes.jsonl")
    query = "shoppers lose their authenticated state when hopping from the marketing site to the store"
    kw = memory.retrieve(query, project="webshop", mode="keyword")
    vec = memory.retrieve(query, project="webshop", mode="vector")
    right = corpus_uuid("ws-session-cookie-subdomain")
    assert right not in [h.episode.id for h in kw] and vec[0].episode.id == right
    literal = kw[0]
    assert literal.episode.id in [h.episode.id for h in vec[1:3]]
    assert literal.matched_terms == 1 and len(textsearch.query_words(query)) == 8
    assert memory.retrieve(query, project="webshop", mode="hybrid")[0].episode.id == right
    cfg = memory.config.retrieval
    memory.config.retrieval = cfg.model_copy(update={"hybrid_keyword_coverage_power": 0.0})
    assert memory.retrieve(query, project="webshop", mode="hybrid")[0].episode.id == literal.episode.id
