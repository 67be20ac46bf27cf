"""The gate reads standings, not cosines (core/standing.py): on a model whose every cosine is `0.5 + 0.5 * cos` of
another's (bge-small's unrelated pairs score ~0.5 where MiniLM's score ~0.1) it decides the same, for prompts that
inject and for prompts that must not. Real store, the real offline model; the second model is that model with each
vector v stored as (v, 1) / sqrt(2), whose cosines are exactly 0.5 + 0.5 * the first's: an embedding model is the
outside world here, and this one is the real one seen through a monotone map."""

from __future__ import annotations

from pathlib import Path

import pytest
from shop import EPISODES, shop_repo

from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.core.retrieve import Hit
from tempera.inject.warm import GATE_FEATURES, gate_features, relevant_hits
from tests.support.shifted import shifted_memory

PROMPTS = [
    "the checkout test in src/cart/checkout.py is flaky again, fix it",
    "the checkout button colour looks wrong on the product page",
    "rotate the staging database password again",
    "What brand of paint colour suits a small bedroom?",
    "What pages of the history book cover the vault of the cathedral?",
    "What's a good substitute for buttermilk in pancakes?",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return shop_repo(tmp_path)


def test_the_gate_decides_the_same_when_every_cosine_goes_through_a_monotone_map(repo: Path, tmp_path: Path) -> None:
    project = project_for_path(str(repo))
    with Memory() as mem:
        assert mem.embedder is not None
        shifted = shifted_memory(tmp_path, mem.embedder, repo, EPISODES)
        try:
            decided = []
            for prompt in PROMPTS:
                plain = relevant_hits(mem, prompt, project, set())
                mapped = relevant_hits(shifted, prompt, project, set())
                assert [h.summary for h in plain] == [h.summary for h in mapped], prompt
                assert [h.p_relevant for h in plain] == pytest.approx([h.p_relevant for h in mapped], abs=2e-3)
                decided.append(bool(plain))
        finally:
            shifted.close()
    assert decided == [True, True, True, False, False, False]  # it decides something, and the right things


def test_a_hit_without_a_vector_stands_at_the_backgrounds_centre() -> None:
    """A hit no vector scored (only the keyword list found it, and no vector is indexed for it) stands at 0, no share
    of the pool's best; one below the centre is no share either, not a negative one that a negative weight would
    turn into the pool's likeliest hit."""
    from tempera.core.models import Episode, Intent, ValidityScope

    def hit(summary: str, standing: float | None) -> Hit:
        scope = ValidityScope.parse("project")
        return Hit(
            Episode(project_id="p", project_name="cli", summary=summary, intent=Intent(extracted=summary, scope=scope)),
            standing=standing,
        )

    hits = [hit("Reviewed the logging levels", 6.0), hit("Renamed the config loader", None), hit("Bumped a pin", -1.0)]
    features = gate_features(hits, "logging")
    at = GATE_FEATURES.index
    assert [f[at("standing")] for f in features] == [6.0, 0.0, -1.0]
    assert [f[at("standing_to_best")] for f in features] == [1.0, 0.0, 0.0]
