"""No fact comes with most of a project's prompts unless they name it: a stance found by two words of its subject
alone is held back while it has been shown on a fifth of the project's recent prompts; one whose identifier the
prompt writes is shown every time. Measured on real sessions: one local decision (`Keep REMEDIATION_BATCH_SIZE`)
came with 25 of a TypeScript project's 37 prompts."""

from __future__ import annotations

from pathlib import Path

from tempera.core.memory import Memory
from tempera.facts import FactStore
from tempera.inject.payload import HookPayload
from tempera.inject.warm import answer

KEEP = "Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint)"


def test_a_fact_found_by_words_alone_comes_with_at_most_a_fifth_of_the_prompts(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    with Memory(db_path=tmp_path / "t.db", use_model=False) as mem:
        FactStore(mem.db).transact(
            f'[[:decision/keep-remediation-batch-size :description "{KEEP}"]]', reason="t", valid_from="2026-01-30"
        )

        def shown(session: str, prompt: str) -> bool:
            hp = HookPayload("UserPromptSubmit", session_id=session, cwd=str(repo), prompt=prompt)
            return KEEP in answer(mem, hp)

        by_words = [shown(f"w{n}", "the remediation batch runs slowly again") for n in range(20)]
        assert by_words[0] and sum(by_words) == 4, by_words  # prompts 1, 6, 11, 16
        assert all(shown(f"n{n}", "why is REMEDIATION_BATCH_SIZE 50?") for n in range(5))  # named: every session
