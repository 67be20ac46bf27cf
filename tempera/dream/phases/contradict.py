"""contradict: do memories the agent keeps being shown disagree with each other?

The `dream.contradict_top_n` most retrieved live episodes are paired within a project (or across projects when
both are transferable); pairs whose similarity lies in the configured band are about the same thing without being
duplicates (those are consolidation's business). The cheap model judges each pair for a factual disagreement;
without the LLM, two signals stand in: opposite outcomes on the same files (one turn succeeded where another
failed), and opposite polarity (one side negates, the other asserts) about the same files or several shared terms.
A verdict is kept with a digest of both sides and is asked again only when a side changes (or, for a free
heuristic verdict, once the LLM can be used). Fact-graph conflicts are read live (see contradictions.py).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from tempera.core.learning.retire import retired_ids
from tempera.core.models import Episode
from tempera.dream.budget import json_reply
from tempera.dream.contradictions import contradiction_rate, fact_conflicts
from tempera.dream.digest import local_day
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan
from tempera.dream.vectors import TextItem, item_vectors, terms

JUDGE_TOKENS = 200
MIN_SHARED_TERMS = 3
JUDGE_SYSTEM = (
    "You check two memories of an AI coding agent about the same project for a factual contradiction: "
    "statements that cannot both be true now (one says something works, is used or is the rule; the "
    "other says it fails, is not used or is not the rule). Different topics, or details that fit "
    'together, are not contradictions. Answer with JSON only: {"contradiction": true or false, '
    '"confidence": <0.0 to 1.0>, "claim": "<the disputed point, one line>"}'
)
NEGATION = re.compile(
    r"\b(?:not|no|never|none|without|avoid|instead|stop(?:ped)?|remove[ds]?|drop(?:ped|s)?|"
    r"revert(?:ed|s)?|don't|doesn't|didn't|isn't|aren't|wasn't|shouldn't|mustn't|can't|"
    r"cannot|won't|couldn't|fail(?:s|ed|ing)?|broken)\b",
    re.IGNORECASE,
)


@dataclass
class Pair:
    a: Episode  # the older one
    b: Episode
    similarity: float
    cost: float = 0.0


def side(ep: Episode) -> str:
    """What a judge sees of one episode (and what its digest covers)."""
    files = ", ".join(ep.context.files_modified[:8])
    claim = f"\nClaim: {ep.intent.claim}" if ep.intent.claim else ""
    return (
        f"{local_day(ep.created_at).isoformat()}, outcome {ep.outcome.status}"
        + (f", changed {files}" if files else "")
        + f"\n{ep.summary[:1500]}{claim}"
    )


def _digest(ep: Episode) -> str:
    return hashlib.sha1(side(ep).encode()).hexdigest()[:16]


def _claim(ep: Episode) -> str:
    return ep.intent.claim or " ".join(ep.summary.splitlines()[:2])


def heuristic_verdict(a: Episode, b: Episode) -> tuple[bool, float, str]:
    """(contradicts, confidence, claim) from outcomes and polarity alone."""
    shared = sorted(set(a.context.files_modified) & set(b.context.files_modified))
    statuses = {a.outcome.status, b.outcome.status}
    where = ", ".join(shared[:3])
    if shared and statuses == {"success", "failure"}:
        ok, bad = (a, b) if a.outcome.status == "success" else (b, a)
        return (
            True,
            0.75,
            (
                f"opposite outcomes on {where}: '{ok.summary.splitlines()[0][:90]}' succeeded, "
                f"'{bad.summary.splitlines()[0][:90]}' failed"
            ),
        )
    ca, cb = _claim(a), _claim(b)
    common = sorted(set(terms(ca)) & set(terms(cb)))
    if bool(NEGATION.search(ca)) != bool(NEGATION.search(cb)) and (shared or len(common) >= MIN_SHARED_TERMS):
        neg, pos = (a, b) if NEGATION.search(ca) else (b, a)
        return (
            True,
            0.7 if shared else 0.6,
            (f"opposite claims about {where or ', '.join(common[:4])}: '{_claim(pos)[:90]}' vs '{_claim(neg)[:90]}'"),
        )
    if shared and statuses == {"success", "partial"}:
        return True, 0.55, f"one turn on {where} succeeded, a similar one only partly"
    return False, 0.5, ""


def parse_verdict(text: str) -> tuple[bool, float, str] | None:
    data = json_reply(text)
    if data is None:
        return None
    try:
        return bool(data["contradiction"]), min(1.0, max(0.0, float(data["confidence"]))), str(data.get("claim", ""))
    except (ValueError, KeyError, TypeError):
        return None


def _candidates(ctx: DreamContext) -> list[Episode]:
    cfg = ctx.mem.config.dream
    retired = retired_ids(ctx.mem.db)
    rows = ctx.mem.db.query(
        "SELECT rowid FROM episodes WHERE retrieval_count > 0 ORDER BY retrieval_count DESC, created_at DESC LIMIT ?",
        (cfg.contradict_top_n + len(retired),),
    )
    found = ctx.mem.store.get_many_by_rowid(r[0] for r in rows)
    return [found[r[0]] for r in rows if r[0] in found and found[r[0]].id not in retired][: cfg.contradict_top_n]


def _prompt(pair: Pair) -> str:
    return f"Memory A ({side(pair.a)})\n\nMemory B ({side(pair.b)})"


def plan(ctx: DreamContext) -> Plan:
    cfg, budget = ctx.mem.config.dream, ctx.budget
    eps = _candidates(ctx)
    pairs: list[Pair] = []
    if len(eps) >= 2:
        vectors, _ = item_vectors(ctx.mem, [TextItem(ep.embed_text(), ep.id) for ep in eps])
        sim = vectors @ vectors.T
        for i, a in enumerate(eps):
            for j in range(i + 1, len(eps)):
                b = eps[j]
                related = a.project_id == b.project_id or (a.scope.transferable and b.scope.transferable)
                if related and cfg.contradict_min_similarity <= sim[i, j] <= cfg.contradict_max_similarity:
                    older, newer = sorted((a, b), key=lambda e: (e.created_at, e.id))
                    pairs.append(Pair(older, newer, float(sim[i, j])))
    pairs = sorted(pairs, key=lambda p: -p.similarity)[: cfg.contradict_max_pairs]
    todo = []
    for pair in pairs:
        known = ctx.mem.db.one(
            "SELECT a_digest, b_digest, judged_by FROM contradiction_checks WHERE a_id = ? AND b_id = ?",
            (pair.a.id, pair.b.id),
        )
        if (
            known
            and (known[0], known[1]) == (_digest(pair.a), _digest(pair.b))
            and (known[2] == "llm" or not budget.llm_on)
        ):
            continue
        pair.cost = budget.estimate(cfg.triage_model, JUDGE_SYSTEM + _prompt(pair), JUDGE_TOKENS)
        todo.append(pair)
    items, deferred, estimate = budget.take(todo, lambda p: p.cost)
    return Plan(
        items,
        estimate,
        deferred,
        f"{len(eps)} frequently retrieved episode(s), {len(pairs)} pair(s) in "
        f"the similarity band, {len(items)} to judge" + (f"; {deferred} wait for budget" if deferred else ""),
    )


def _judge(ctx: DreamContext, pair: Pair) -> tuple[bool, float, str, str, str | None, float]:
    """(contradicts, confidence, claim, judged_by, model, cost)."""
    model = ctx.mem.config.dream.triage_model
    if ctx.budget.llm_on:
        before = ctx.budget.spent
        answer = ctx.budget.ask(JUDGE_SYSTEM, _prompt(pair), model=model, max_tokens=JUDGE_TOKENS)
        if answer is not None:
            verdict = parse_verdict(answer) or heuristic_verdict(pair.a, pair.b)  # paid for: final either way
            return *verdict, "llm", model, ctx.budget.spent - before
    return *heuristic_verdict(pair.a, pair.b), "heuristic", None, 0.0


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    cfg = ctx.mem.config.dream
    for pair in plan.items:
        ctx.checkpoint()
        contradicts, confidence, claim, judged_by, model, cost = _judge(ctx, pair)
        with ctx.mem.db.transaction() as conn:
            conn.execute(
                "INSERT INTO contradiction_checks(a_id, b_id, a_digest, b_digest, similarity, contradicts, "
                "confidence, claim, judged_by, model, cost_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?) ON CONFLICT(a_id, b_id) DO UPDATE SET a_digest = excluded.a_digest, "
                "b_digest = excluded.b_digest, similarity = excluded.similarity, "
                "contradicts = excluded.contradicts, confidence = excluded.confidence, "
                "claim = excluded.claim, "
                "judged_by = excluded.judged_by, model = excluded.model, cost_usd = excluded.cost_usd, "
                "created_at = excluded.created_at",
                (
                    pair.a.id,
                    pair.b.id,
                    _digest(pair.a),
                    _digest(pair.b),
                    pair.similarity,
                    int(contradicts),
                    confidence,
                    claim[:500],
                    judged_by,
                    model,
                    cost,
                    datetime.now(timezone.utc).isoformat(),
                ),
            )
        report.counts[f"pairs judged ({judged_by})"] += 1
        report.counts["contradictions found"] += contradicts and confidence >= cfg.contradict_min_confidence
    rate = contradiction_rate(ctx.mem.db, cfg.contradict_min_confidence)
    if rate["pairs"]:
        report.notes.append(
            f"contradiction rate {rate['contradictions']}/{rate['pairs']} "
            f"(95% CI {rate['ci95'][0]:.2f}-{rate['ci95'][1]:.2f})"
        )
    facts = len(fact_conflicts(ctx.mem.db))
    if facts:
        report.notes.append(f"{facts} conflicting fact(s) in the fact graph")


PHASE = Phase(
    "contradict", "judge pairs of frequently retrieved, similar episodes for factual disagreement", True, plan, run
)
