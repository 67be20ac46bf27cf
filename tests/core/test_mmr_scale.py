"""MMR's line between a shared topic and a repeat is drawn in standings (core/standing.py), so it picks the same
hits on a model whose every cosine is `0.5 + 0.5 * cos` of another's (bge-small's unrelated pairs score ~0.5, where
MiniLM's near-duplicates start at 0.7). Real store, the real offline model and that model through a monotone map
(tests/support/shifted.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tests.support.shifted import shifted_memory

# one topic, each a different piece of work: pairs score ~0.4-0.6 on MiniLM, topic-mates, not repeats
SUMMARIES = [
    "Fixed the flaky checkout test by freezing time with freezegun",
    "Fixed the flaky login test by waiting for the redirect instead of sleeping",
    "Fixed the flaky search test by seeding the random generator",
    "Fixed the flaky upload test by using a temporary directory per test",
    "Fixed the flaky billing test by mocking the currency rate service",
    "Made the payment retry test deterministic with a fake clock",
]
QUERIES = ["flaky test fix", "the login test fails now and then", "tests that depend on time"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    return tmp_path / "proj"


def test_mmr_picks_the_same_when_every_cosine_goes_through_a_monotone_map(root: Path, tmp_path: Path) -> None:
    with Memory() as mem:
        assert mem.embedder is not None
        for summary in SUMMARIES:
            mem.capture(CaptureInput(summary=summary, project=str(root)))
        shifted = shifted_memory(tmp_path, mem.embedder, root, [(s, []) for s in SUMMARIES])
        try:
            for query in QUERIES:
                plain = [h.episode.summary for h in mem.retrieve(query, project=str(root), limit=3)]
                mapped = [h.episode.summary for h in shifted.retrieve(query, project=str(root), limit=3)]
                assert plain == mapped, query
        finally:
            shifted.close()
