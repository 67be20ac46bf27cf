"""Optional LLM refinement of episode drafts: a one-sentence intent, a checkable claim with its falsifiability and
category, and a validity scope suggestion (conservative default `project`). Only redacted drafts are sent, each
call is paid from the capture's budget, and any failure leaves the heuristic draft as it was."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from tempera.core.errors import InvalidInput
from tempera.core.llm import LLM, Budget, BudgetExceeded, LLMUnavailable
from tempera.core.models import Episode, ValidityScope
from tempera.core.redact import redact

log = logging.getLogger("tempera.transcripts")

CATEGORIES = ("bug_cause", "fix", "api_usage", "config", "convention", "tooling", "performance", "other")
SYSTEM = (
    "You read what a coding agent did for one user request and extract what is worth remembering. "
    "Answer with one JSON object and nothing else."
)
INSTRUCTIONS = """Return a JSON object with these keys:
  "intent": the user's request as one plain sentence;
  "claim": one sentence stating a checkable fact learned here that would help next time, or null;
  "falsifiability": a number from 0 to 1, how easily the claim can be checked;
  "category": one of {categories};
  "scope": where the claim holds: "project" (use it when unsure), "language:<name>", "crate:<name>@<version>",
           "domain:<tag>" or "workaround:<ref>".
The work (secrets were removed):
<work>
{digest}
</work>"""
_JSON = re.compile(r"\{.*\}", re.S)


def digest(ep: Episode, limit: int = 6000) -> str:
    """The parts of a draft an extractor needs, compact."""
    ctx, out = ep.context, ep.outcome
    lines = [
        f"Request: {ep.intent.raw_prompt[:1500]}",
        f"Task type: {ep.intent.task_type}",
        f"Outcome: {out.status} ({'; '.join(out.evidence)})",
    ]
    if ctx.files_modified:
        lines.append("Files modified: " + ", ".join(ctx.files_modified[:20]))
    if ctx.commands:
        lines.append("Commands: " + " | ".join(c[:160] for c in ctx.commands[:10]))
    for err in ctx.errors[:5]:
        lines.append(
            f"Error ({'resolved: ' + (err.resolution or '') if err.resolved else 'unresolved'}): {err.message[:200]}"
        )
    for run in out.tests_before + out.tests_after:
        lines.append(f"Test run: {run.command[:120]} -> {'pass' if run.passed else 'fail'} {run.summary[:120]}")
    lines.append(f"Summary: {ep.summary[:1500]}")
    return "\n".join(lines)[:limit]


def parse_reply(text: str) -> dict[str, Any] | None:
    m = _JSON.search(text or "")
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def apply(ep: Episode, data: dict[str, Any]) -> Episode:
    """Copy the extracted fields that are well-formed onto the draft; keep the heuristic value otherwise."""
    intent = ep.intent.model_copy()
    if isinstance(data.get("intent"), str) and data["intent"].strip():
        intent.extracted = data["intent"].strip()[:300]
    if isinstance(data.get("claim"), str) and data["claim"].strip():
        intent.claim = data["claim"].strip()[:500]
    if isinstance(data.get("falsifiability"), (int, float)):
        intent.falsifiability = min(1.0, max(0.0, float(data["falsifiability"])))
    if data.get("category") in CATEGORIES:
        intent.category = data["category"]
    try:
        intent.scope = ValidityScope.parse(data.get("scope") if isinstance(data.get("scope"), str) else None)
    except InvalidInput:
        intent.scope = ValidityScope()
    return ep.model_copy(update={"intent": intent}).redacted()


def refine(episodes: list[Episode], llm: LLM, budget: Budget) -> list[Episode]:
    """Each draft refined while the budget lasts; the rest come back unchanged."""
    out = []
    for n, ep in enumerate(episodes):
        prompt = INSTRUCTIONS.format(categories=", ".join(CATEGORIES), digest=redact(digest(ep)))
        try:
            reply = llm.complete(prompt, system=SYSTEM, budget=budget, max_tokens=400)
        except (BudgetExceeded, LLMUnavailable) as exc:
            log.info("LLM extraction stopped after %d of %d drafts: %s", n, len(episodes), exc)
            return out + episodes[n:]
        data = parse_reply(reply.text)
        out.append(apply(ep, data) if data else ep)
    return out
