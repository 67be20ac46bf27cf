"""Values the hooks need without pydantic (standard library only); config.py uses the same numbers. The knobs a
hook reads, with their bounds, are in core/settings.py."""

AUTO_MEMORY_ORIGIN = "auto-memory"  # Source.origin of the notes read from Claude Code's auto memory

# salience weight per verification state: later states weigh more (the original Tempera: 0.30 untested, 0.60 merged)
VERIFICATION_WEIGHTS = {"untested": 0.30, "tests_pass": 0.45, "merged": 0.60, "stable_no_revert": 0.80}
# Decay per day by validity scope, from the table of the original Tempera (github.com/anvanster/tempera);
# `legacy` = no scope set.
DECAY_RATES = {
    "forever": 0.0,
    "language": 0.001,
    "domain": 0.005,
    "project": 0.010,
    "crate": 0.020,
    "workaround": 0.050,
    "legacy": 0.010,
}
# How far evidence may move a score (core/ranking.py). Utility 0 or 1 scales it by 1 -/+ UTILITY_EFFECT: one
# explicit vote moves it by a sixth, four unhelpful votes cut it by a third. The best verification state adds
# VERIFICATION_EFFECT. Full decay costs 1 - FRESHNESS_FLOOR, less than one vote: age orders equals, evidence wins.
UTILITY_EFFECT = 0.5
VERIFICATION_EFFECT = 0.2
FRESHNESS_FLOOR = 0.9
# Query-dependent evidence (core/retrieve.py `_query_evidence`): past injections' verdicts and outcome links
# (core/learning/outcomes.py), weighted by how alike their prompt is to this one, scale a score by 1 -/+ this at
# most; a link of weight w counts as OUTCOME_LINK_WEIGHT x w verdicts. Chosen on the real-session dev splits:
# effect 1 and weight 300 ranked better than every smaller setting on all three, 1000 no better (the figures:
# docs/experiments/outcome-links.md, "Choosing on dev").
QUERY_EVIDENCE_EFFECT = 1.0
OUTCOME_LINK_WEIGHT = 300.0
