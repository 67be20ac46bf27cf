"""Budgeted calls to the Anthropic Messages API. Off unless `llm.enabled` is set and ANTHROPIC_API_KEY exists;
every call is capped so its worst case fits the remaining budget, and charged from the response's real usage with
the configured price table. The `anthropic` SDK is imported only when a call is made."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from tempera.core.config import Config, LLMConfig
from tempera.core.errors import InvalidInput, TemperaError
from tempera.core.extras import missing_extra

MIN_OUTPUT_TOKENS = 32
CHARS_PER_TOKEN = 3.0  # conservative (real text averages ~3.5-4), so estimates err on the expensive side
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


class LLMUnavailable(TemperaError):
    """No key, no price for the model, or the API failed: callers fall back to the LLM-free path."""


class BudgetExceeded(TemperaError):
    """The remaining budget cannot pay for even a minimal call."""


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


def parse_prices(text: str) -> dict[str, Price]:
    """`model=in/out, model=in/out` (USD per million tokens) into a table."""
    table: dict[str, Price] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        model, _, pair = item.partition("=")
        inp, _, out = pair.partition("/")
        try:
            table[model.strip()] = Price(float(inp), float(out))
        except ValueError as exc:
            raise InvalidInput(f"llm.prices: {item.strip()!r} is not `model=input/output`") from exc
    return table


class Budget:
    """A USD allowance shared by the calls of one job (one capture, one dream phase)."""

    def __init__(self, max_usd: float):
        self.max_usd = max_usd
        self.spent = 0.0
        self.calls = 0

    @property
    def remaining(self) -> float:
        return max(0.0, self.max_usd - self.spent)

    def charge(self, usd: float) -> None:
        self.spent += usd
        self.calls += 1


@dataclass
class Reply:
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    stop_reason: str | None


def api_key() -> str | None:
    return os.environ.get("ANTHROPIC_API_KEY") or None


def llm_enabled(config: Config) -> bool:
    return config.llm.enabled and api_key() is not None


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) + 16


def _anthropic() -> Any:
    """The SDK, imported at the first call; without the `llm` extra the caller falls back like on any failed call."""
    if hint := missing_extra("llm"):
        raise LLMUnavailable(f"no LLM calls: {hint}")
    import anthropic

    return anthropic


class LLM:
    """One client for a run; `complete` is the only call."""

    def __init__(self, cfg: LLMConfig, *, key: str | None = None):
        self.cfg = cfg
        self.prices = parse_prices(cfg.prices)
        self._key = key or api_key()
        if not self._key:
            raise LLMUnavailable("no ANTHROPIC_API_KEY: LLM extraction is off")
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            self._client = _anthropic().Anthropic(
                api_key=self._key, base_url=self.cfg.base_url or None, timeout=self.cfg.timeout_seconds, max_retries=1
            )
        return self._client

    def price(self, model: str) -> Price:
        price = self.prices.get(model)
        if price is None:
            raise LLMUnavailable(f"no price for model {model!r} in llm.prices; it is never called unpriced")
        return price

    def complete(
        self,
        prompt: str,
        *,
        budget: Budget,
        system: str = "",
        max_tokens: int = 512,
        model: str | None = None,
        stream: bool = False,
    ) -> Reply:
        """One message; max_tokens shrinks so the worst case fits the budget, which is charged the real cost."""
        anthropic = _anthropic()
        model = model or self.cfg.model
        price = self.price(model)
        input_cost = price.cost(estimate_tokens(system + prompt), 0)
        affordable = (
            int((budget.remaining - input_cost) * 1_000_000 / price.output_per_mtok)
            if price.output_per_mtok
            else max_tokens
        )
        if affordable < MIN_OUTPUT_TOKENS:
            raise BudgetExceeded(f"${budget.remaining:.4f} left cannot pay for a call to {model}")
        args: dict[str, Any] = {
            "model": model,
            "max_tokens": min(max_tokens, affordable),
            "messages": [{"role": "user", "content": prompt}],
        }
        if system:
            args["system"] = system
        try:
            if stream:
                with self._sdk().messages.stream(**args) as s:
                    message = s.get_final_message()
            else:
                message = self._sdk().messages.create(**args)
        except anthropic.APIError as exc:
            raise LLMUnavailable(f"Messages API call failed: {exc}") from exc
        usage = message.usage
        billed_input = (
            usage.input_tokens
            + CACHE_WRITE_FACTOR * (usage.cache_creation_input_tokens or 0)
            + CACHE_READ_FACTOR * (usage.cache_read_input_tokens or 0)
        )
        cost = price.cost(billed_input, usage.output_tokens)
        budget.charge(cost)
        text = "".join(b.text for b in message.content if getattr(b, "type", "") == "text")
        return Reply(text, model, usage.input_tokens, usage.output_tokens, cost, message.stop_reason)
