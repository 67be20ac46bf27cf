"""Defaults the hooks need without pydantic (standard library only); config.py uses the same numbers."""

INJECT_BUDGET_CHARS = 2000
INJECT_MAX_EPISODES = 3
INJECT_MIN_SIMILARITY = 0.35
INJECT_MIN_KEYWORD_HITS = 2
HOOK_DAEMON_TIMEOUT_SECONDS = 2.0
# salience weight per verification state: later states weigh more (the seed: 0.30 untested, 0.60 merged)
VERIFICATION_WEIGHTS = {"untested": 0.30, "tests_pass": 0.45, "merged": 0.60, "stable_no_revert": 0.80}
