"""One USD allowance for a whole dream cycle, shared by its paid phases.

Plans use worst-case estimates (the prompt at the client's conservative chars-per-token, the full max_tokens of
output, at llm.prices) and take items, in priority order, only while they fit what is left; every call checks its
own worst case again before it is made, and the real token usage of the response is what is charged
(tempera.core.llm). A call that no longer fits raises BudgetExceeded, which ends the phase before the item it was
for is written. When the LLM cannot be used at all (switched off, no key, no price, a $0 budget) every phase runs
on its fallback and the reason is reported.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from tempera.core.config import Config
from tempera.core.llm import LLM, Budget, BudgetExceeded, LLMUnavailable, api_key, estimate_tokens, parse_prices

log = logging.getLogger("tempera.dream")
T = TypeVar("T")


def _client(config: Config, max_usd: float) -> tuple[LLM | None, str]:
    """The client, or None and why the cycle runs on fallbacks."""
    if max_usd <= 0:
        return None, "budget is $0"
    if not config.llm.enabled:
        return None, "llm.enabled is false"
    if api_key() is None:
        return None, "no ANTHROPIC_API_KEY"
    prices = parse_prices(config.llm.prices)
    for model in (config.dream.triage_model, config.dream.reflect_model):
        if model not in prices:
            return None, f"no price for {model} in llm.prices"
    return LLM(config.llm), "on"


class CycleBudget:
    def __init__(self, config: Config, max_usd: float):
        self.budget = Budget(max_usd)
        self.client, self.llm_state = _client(config, max_usd)

    @property
    def llm_on(self) -> bool:
        return self.client is not None

    @property
    def remaining(self) -> float:
        return self.budget.remaining

    @property
    def spent(self) -> float:
        return self.budget.spent

    def estimate(self, model: str, prompt: str, max_tokens: int) -> float:
        """Worst-case USD of one call (0 when the LLM is off: fallbacks are free)."""
        if self.client is None:
            return 0.0
        return self.client.price(model).cost(estimate_tokens(prompt), max_tokens)

    def take(self, items: list[T], cost: Callable[[T], float]) -> tuple[list[T], int, float]:
        """The longest prefix of `items` whose summed worst case fits what is left: (taken, deferred, estimate)."""
        total = 0.0
        for n, item in enumerate(items):
            c = cost(item)
            if total + c > self.remaining + 1e-12:
                return items[:n], len(items) - n, total
            total += c
        return items, 0, total

    def set_aside(self, usd: float) -> None:
        """Dry run: count a planned phase's estimate as spent, so the next phase is planned on what is left."""
        self.budget.spent += usd

    def ask(self, system: str, prompt: str, *, model: str, max_tokens: int) -> str | None:
        """One call (a `Drafter`, so self-improvement's template extraction can share the budget). None when the
        API failed (then for the rest of the cycle too): the caller uses its fallback. BudgetExceeded when the
        worst case no longer fits."""
        if self.client is None:
            return None
        need = self.estimate(model, system + prompt, max_tokens)
        if need > self.remaining + 1e-12:
            raise BudgetExceeded(f"${self.remaining:.4f} left; the next call to {model} may cost ${need:.4f}")
        try:
            return self.client.complete(
                prompt, budget=self.budget, system=system, max_tokens=max_tokens, model=model
            ).text
        except LLMUnavailable as exc:
            # the SDK has retried already: the rest of the cycle runs on fallbacks instead of waiting on each call
            log.warning("dream: %s; the rest of this cycle runs on fallbacks", exc)
            self.client, self.llm_state = None, f"the API failed: {str(exc)[:200]}"
            return None


def json_reply(text: str | None) -> dict[str, Any] | None:
    """The JSON object a model was asked to answer with (a ```json fence tolerated), else None."""
    try:
        data = json.loads((text or "").strip().removeprefix("```json").removesuffix("```"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
