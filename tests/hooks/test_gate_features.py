"""The gate's relative features stay shares of the pool's best: a hit farther from the prompt than orthogonal
(an episode another list found, its cosine recomputed against the prompt) is no share of it, not a large negative
number that the feature's negative weight turns into the pool's likeliest hit."""

from __future__ import annotations

from tempera.core.config import InjectConfig
from tempera.core.models import Episode, Intent, ValidityScope
from tempera.core.retrieve import Hit
from tempera.inject.warm import GATE_FEATURES, gate_features, gate_probability

UNRELATED = "What's a good substitute for buttermilk in pancakes?"


def episode(summary: str) -> Episode:
    return Episode(
        project_id="p",
        project_name="cli",
        summary=summary,
        intent=Intent(extracted=summary, scope=ValidityScope.parse("project")),
    )


def test_a_negative_cosine_is_no_share_of_the_pools_best_and_stays_under_the_bar() -> None:
    hits = [
        Hit(episode("Reviewed the logging levels of the hooks"), similarity=0.01),
        Hit(episode("can you write a test - which should fail right now - for each P1 item"), similarity=-0.05),
    ]
    features = gate_features(hits, UNRELATED)
    assert features[1][GATE_FEATURES.index("cosine_to_best")] == 0.0
    cfg = InjectConfig()
    assert gate_probability(features, cfg.gate_weights)[1] < cfg.gate_bar
