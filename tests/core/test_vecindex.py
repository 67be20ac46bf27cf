"""The daemon's in-memory vectors answer exactly as sqlite-vec does, whatever another process writes meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempera.core import textsearch
from tempera.core.capture_input import CaptureInput
from tempera.core.forget import Selector, forget
from tempera.core.learning.retire import restore, retire
from tempera.core.episodes import EpisodeStore
from tempera.core.memory import Memory
from tempera.core.models import Episode, Intent, ValidityScope
from tempera.core.project import project_for_path
from tempera.core.retrieve import _vector, retrieve
from tempera.core.vecindex import VectorCache

QUERIES = [
    "login redirect loop after the session cookie expired",
    "flaky checkout test",
    "postgres deadlock",
    "asyncio cancellation",
    "pin numpy for the legacy pipeline",
]
SUMMARIES = [
    "Fixed the login redirect loop by trimming the session cookie",
    "Flaky checkout test fixed by freezing time",
    "Postgres deadlock in the billing job fixed by ordering the updates",
    "asyncio.gather swallows cancellation unless return_exceptions is set",
    "Pinned numpy below 2 for the legacy pipeline",
    "Docker build cache busted by the COPY order",
]


@pytest.fixture
def pair(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A daemon-like reader holding a cache, and a writer: two connections to one database file."""
    repo, other = tmp_path / "repo", tmp_path / "other"
    for d in (repo, other):
        (d / ".git").mkdir(parents=True)
    with Memory() as writer, Memory() as reader:
        reader.store.vectors.cache = VectorCache()
        yield reader, writer, repo, other


def same_as_vec0(reader: Memory, project: str) -> None:
    """For every query: the cache's nearest episodes and cosines equal sqlite-vec's, in the project and across, and
    so does the project's background (core/standing.py: every vector, here fewer than the sample vec0 reads)."""
    cache = reader.store.vectors.cache
    for q in QUERIES:
        qvec = reader.embedder.embed_one(q)
        for cross in (False, True):
            reader.store.vectors.cache = None
            expected, _, expected_background = _vector(reader.store, qvec, project, cross, 10)
            reader.store.vectors.cache = cache
            got, _, background = _vector(reader.store, qvec, project, cross, 10)
            assert [r for r, _ in got] == [r for r, _ in expected], (q, cross)
            assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
            assert (background.centre, background.spread) == pytest.approx(
                (expected_background.centre, expected_background.spread), abs=1e-5
            )


def test_cache_follows_every_kind_of_write(pair) -> None:  # type: ignore[no-untyped-def]
    reader, writer, repo, other = pair
    pid = project_for_path(repo).id
    eps = [writer.capture(CaptureInput(summary=s, project=str(repo))) for s in SUMMARIES]
    same_as_vec0(reader, pid)
    assert reader.store.vectors.cache._parts  # the reader loaded the project: later checks test the refresh

    eps.append(
        writer.capture(CaptureInput(summary="Session cookie SameSite=None broke the login redirect", project=str(repo)))
    )  # added
    same_as_vec0(reader, pid)
    first = writer.store.get(eps[0].id)
    first.summary = "Rewrote the payment webhook retry with exponential backoff"  # updated: a new vector
    writer.store.update(first)
    same_as_vec0(reader, pid)
    writer.capture(
        CaptureInput(
            summary="asyncio TaskGroup cancels siblings on the first error",
            project=str(other),
            validity_scope="language:python",
        )
    )  # transferable, another project
    same_as_vec0(reader, pid)
    writer.store.delete(eps[1].id)  # deleted
    same_as_vec0(reader, pid)
    retire(writer.store, eps[2].id, "expired")  # retired: out of retrieval
    same_as_vec0(reader, pid)
    restore(writer.store, eps[2].id)
    same_as_vec0(reader, pid)
    forget(writer.db, Selector("episode", eps[3].id))  # forgotten in bulk
    same_as_vec0(reader, pid)
    writer.store.vectors.reindex(full=True)  # the vector table rebuilt
    same_as_vec0(reader, pid)
    with writer.db.transaction():  # a reader that fell behind the pruned log reloads
        writer.db.execute("DELETE FROM vector_changes")
    writer.capture(CaptureInput(summary="Kafka consumer lag fixed by raising max.poll.records", project=str(repo)))
    same_as_vec0(reader, pid)


def test_hybrid_ranking_is_the_same_with_the_cache(pair) -> None:  # type: ignore[no-untyped-def]
    reader, writer, repo, _ = pair
    pid = project_for_path(repo).id
    for s in SUMMARIES:
        writer.capture(CaptureInput(summary=s, project=str(repo)))
    cache = reader.store.vectors.cache
    for q in QUERIES:
        reader.store.vectors.cache = None
        plain = [h.episode.id for h in retrieve(reader.store, q, project_id=pid, cfg=reader.config.retrieval)]
        reader.store.vectors.cache = cache
        cached = [h.episode.id for h in retrieve(reader.store, q, project_id=pid, cfg=reader.config.retrieval)]
        assert cached == plain, q


def test_log_is_pruned(memory: Memory, tmp_path: Path) -> None:
    with memory.db.transaction():
        for _ in range(10_050):
            memory.store.vectors.rebuilt()
    low, high, n = memory.db.one("SELECT min(seq), max(seq), count(*) FROM vector_changes")
    assert n == 10_000 and high - low == 9_999


def test_fts_migration_stems_and_scopes_existing_rows(tmp_path: Path) -> None:
    """A database from before core.066 (unstemmed FTS, rows without scope tokens) searches stemmed and per
    project after it, with every episode still found, and other projects' episodes only when transferable."""
    from tempera.core.db import apply_migrations
    from tempera.core.migrations import connect
    from tempera.core.migrations import MIGRATIONS

    names = [name for name, _ in MIGRATIONS]
    # the schema before core.066, plus the file and symbol indexes today's store writes with every episode
    later = [MIGRATIONS[names.index(n)] for n in ("core.071_episode_files", "core.074_code_symbols")]
    old = MIGRATIONS[: names.index("core.066_fts_stemmed_scoped")] + later
    path = tmp_path / "old.db"
    db = connect(path, migrate=False)
    apply_migrations(db, old)
    repo, other = project_for_path(tmp_path / "repo"), project_for_path(tmp_path / "other")
    store = EpisodeStore(db, None)
    store._fts_body = lambda ep: textsearch.expand(ep.search_text())  # type: ignore[method-assign]
    for ref, summary, scope in (
        (repo, "Painted the dashboard charts with the new palette", "project"),
        (other, "Painting the billing charts broke their legend", "project"),
        (other, "matplotlib charts need Agg when painted headless", "language:python"),
    ):
        store.add(
            Episode(
                project_id=ref.id,
                project_name=ref.name,
                project_path=ref.path,
                summary=summary,
                intent=Intent(raw_prompt=summary, extracted=summary, scope=ValidityScope.parse(scope)),
            )
        )
    db.close()
    with Memory(db_path=path) as mem:  # applies core.066 and later
        assert "__project_" in mem.db.one("SELECT body FROM episodes_fts LIMIT 1")[0]
        pid = repo.id
        mine = retrieve(mem.store, "paints charts", project_id=pid, cfg=mem.config.retrieval, mode="keyword")
        assert [h.episode.summary[:7] for h in mine] == ["Painted"]  # stemmed: paints ~ painted
        both = retrieve(
            mem.store, "paints charts", project_id=pid, cfg=mem.config.retrieval, mode="keyword", cross_project=True
        )
        assert sorted(h.episode.summary[:10] for h in both) == ["Painted th", "matplotlib"]
