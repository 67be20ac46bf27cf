"""The optional LLM, seen through one small interface so every caller keeps a complete LLM-free path.

A `Drafter` makes one completion and answers None whenever no call was made or it failed (LLM disabled, no key,
no price, over budget, API error); callers then use their template. One drafter shares one budget across its
calls, so a processed capture or a templates run never spends more than its cap.
"""

from __future__ import annotations

from typing import Protocol

from tempera.core.config import Config
from tempera.core.llm import LLM, Budget, BudgetExceeded, LLMUnavailable, llm_enabled


class Drafter(Protocol):
    def __call__(self, system: str, prompt: str, *, model: str, max_tokens: int) -> str | None: ...


def drafter_for(config: Config, *, max_usd: float | None = None) -> Drafter | None:
    """A drafter on the budgeted client (default cap selfimprove.llm_max_usd), or None when self-improvement may
    not or cannot use the LLM (selfimprove.use_llm, llm.enabled, ANTHROPIC_API_KEY, a zero cap)."""
    cap = config.selfimprove.llm_max_usd if max_usd is None else max_usd
    if not config.selfimprove.use_llm or cap <= 0 or not llm_enabled(config):
        return None
    try:
        client = LLM(config.llm)
    except LLMUnavailable:
        return None
    return drafter_from(client, Budget(cap))


def drafter_from(client: LLM, budget: Budget) -> Drafter:
    """A drafter on an existing client and budget (the dream cycle shares one budget across its phases)."""

    def draft(system: str, prompt: str, *, model: str, max_tokens: int) -> str | None:
        try:
            return client.complete(prompt, budget=budget, system=system, max_tokens=max_tokens, model=model).text
        except (LLMUnavailable, BudgetExceeded):
            return None

    return draft


def one_question(text: str | None) -> str | None:
    """The reply as a single-line question, or None when it is not one (the caller keeps its template)."""
    line = " ".join((text or "").split()).strip('"')
    return line if line.endswith("?") and 8 <= len(line) <= 300 else None
