"""The learning loop: evidence from use (implicit feedback), from neighbours (propagation), from time (temporal
credit, session links), decay of freshness, verification from git, and loss-free consolidation.

Every module writes `feedback_events` rows with a `source` and an evidence JSON, so `tempera learn explain` can show why
an episode has its utility. Kept import-light: `core.migrations` imports `schema` from here.
"""
