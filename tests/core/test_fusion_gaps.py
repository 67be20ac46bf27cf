"""Hybrid fusion on real stores (the offline model, the shipped coding corpus): a clear score gap within a list
counts, not only the rank; near-equal scores stay equal, so freshness and evidence still order them."""

from __future__ import annotations

from tempera.core.memory import Memory
from tempera.evaluation.harness import corpus_uuid, load_corpus
from tests.conftest import REPO


def test_a_clearly_nearest_embedding_outranks_a_literal_hit_the_vector_list_ranks_second(memory: Memory) -> None:
    """A paraphrase of the SQLite lock episode shares no term with it; the BM25 list's best hit (generic words) is
    also the vector list's second, far below the first (cosine 0.32 against 0.43). Counted by rank alone the two
    lists' agreement on the second outvoted the vector list's clear first."""
    load_corpus(memory, REPO / "evals" / "corpus" / "episodes.jsonl")
    query = "parallel inserts fail because another writer holds the embedded store"
    kw = memory.retrieve(query, project="rust-cli", mode="keyword")
    vec = memory.retrieve(query, project="rust-cli", mode="vector")
    right = corpus_uuid("rc-sqlx-sqlite-locked")
    assert right not in [h.episode.id for h in kw] and vec[0].episode.id == right
    assert kw[0].episode.id == vec[1].episode.id  # the literal hit both lists hold
    assert vec[1].similarity is not None and vec[0].similarity is not None
    assert vec[1].similarity < 0.8 * vec[0].similarity  # a clear gap, not noise
    assert memory.retrieve(query, project="rust-cli", mode="hybrid")[0].episode.id == right
