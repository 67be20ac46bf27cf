"""reflect: a written reflection for each project-day with enough signal, as a markdown page under
DATA_DIR/reflections/ and a row in `reflections`.

Only completed days are looked at (today is still happening). A day needs `dream.reflect_min_episodes` episodes and
some free signal (see digest.py) before anything is spent on it; then the cheap model's triage score gates the
better model's reflection. The verdict is cached per project-day the moment it is paid for, so a day is never
triaged twice; a day whose reflection was refused by the budget keeps its verdict and only the reflection is left
for the next cycle. Without the LLM the signal score is the verdict and the reflection is the extractive digest;
both are free, so they are replaced once the LLM can be used, while LLM output is final.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from tempera.core import paths
from tempera.dream.budget import json_reply
from tempera.dream.digest import DayDigest, gather, local_day
from tempera.dream.pages import project_dir, write_page
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan

TRIAGE_TOKENS = 120
REFLECT_TOKENS = 900
MIN_REFLECTION_CHARS = 80  # a shorter answer is not a reflection: the extractive one is kept
TRIAGE_SYSTEM = (
    "You decide whether one day of an AI coding agent's work in one project deserves a written "
    "reflection that the agent will read before similar work. Worth it: failures and what fixed them, "
    "user corrections, decisions, recurring trouble. Not worth it: routine or chat-only days. "
    'Answer with JSON only: {"score": <0.0 to 1.0>, "why": "<one line>"}'
)
REFLECT_SYSTEM = (
    "You write a short reflection on one day of an AI coding agent's work in one project, for the agent "
    "to read before similar work. Markdown, under 250 words, starting with a '# ' title line: what was "
    "attempted, what worked, what failed and why, what the user corrected, and the lessons, stated as "
    "plain facts about this project. No preamble."
)


@dataclass
class DayWork:
    digest: DayDigest
    triage: bool  # the day still needs its (paid) triage
    score: float | None  # the cached verdict's score when it is final
    cost: float  # worst case of the calls this day may need


def _days(ctx: DreamContext) -> list[date]:
    if ctx.days:
        return ctx.days
    today = local_day(ctx.now)
    return [today - timedelta(days=k) for k in range(1, ctx.mem.config.dream.reflect_lookback_days + 1)]


def _prompt(digest: DayDigest) -> str:
    return f"One day of work, digested from the session transcripts:\n\n{digest.markdown()}"


def plan(ctx: DreamContext) -> Plan:
    cfg, budget, db = ctx.mem.config.dream, ctx.budget, ctx.mem.db
    work: list[DayWork] = []
    for digest in gather(ctx.mem, _days(ctx)):
        if len(digest.episodes) < cfg.reflect_min_episodes or digest.points() <= 0:
            continue
        key = (digest.project_id, digest.day.isoformat())
        written = db.one("SELECT written_by FROM reflections WHERE project_id = ? AND day = ?", key)
        if written and (written[0] == "llm" or not budget.llm_on):
            continue
        verdict = db.one("SELECT score, judged_by FROM dream_verdicts WHERE project_id = ? AND day = ?", key)
        final = verdict is not None and (verdict[1] == "llm" or not budget.llm_on)
        if final and verdict[0] < cfg.reflect_min_score:
            continue
        prompt = _prompt(digest)
        cost = budget.estimate(cfg.reflect_model, REFLECT_SYSTEM + prompt, REFLECT_TOKENS)
        if not final:
            cost += budget.estimate(cfg.triage_model, TRIAGE_SYSTEM + prompt, TRIAGE_TOKENS)
        work.append(DayWork(digest, not final, verdict[0] if final else None, cost))
    work.sort(key=lambda w: w.digest.day, reverse=True)  # the freshest day matters most
    items, deferred, estimate = budget.take(work, lambda w: w.cost)
    triage = sum(w.triage for w in items)
    return Plan(
        items,
        estimate,
        deferred,
        f"{len(items)} project-day(s), {triage} to triage" + (f"; {deferred} wait for budget" if deferred else ""),
    )


def parse_score(text: str) -> tuple[float, str] | None:
    """(score, why) from the triage answer: its JSON, else the first number in [0, 1]."""
    data = json_reply(text)
    if data is not None:
        try:
            return min(1.0, max(0.0, float(data["score"]))), str(data.get("why", ""))[:300]
        except (ValueError, KeyError, TypeError):
            pass
    m = re.search(r"\b(0(?:\.\d+)?|1(?:\.0+)?)\b", text)
    return (float(m.group(1)), text.strip()[:300]) if m else None


def _save_verdict(
    ctx: DreamContext, digest: DayDigest, score: float, judged_by: str, model: str | None, reason: str, cost: float
) -> None:
    with ctx.mem.db.transaction() as conn:
        conn.execute(
            "INSERT INTO dream_verdicts(project_id, day, score, judged_by, model, reason, evidence, cost_usd, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project_id, day) DO UPDATE SET "
            "score = excluded.score, judged_by = excluded.judged_by, model = excluded.model, "
            "reason = excluded.reason, evidence = excluded.evidence, cost_usd = excluded.cost_usd, "
            "created_at = excluded.created_at",
            (
                digest.project_id,
                digest.day.isoformat(),
                score,
                judged_by,
                model,
                reason,
                json.dumps(digest.evidence),
                cost,
                datetime.now(timezone.utc).isoformat(),
            ),
        )


def _triage(ctx: DreamContext, digest: DayDigest, report: PhaseReport) -> float:
    model = ctx.mem.config.dream.triage_model
    if ctx.budget.llm_on:
        before = ctx.budget.spent
        answer = ctx.budget.ask(TRIAGE_SYSTEM, _prompt(digest), model=model, max_tokens=TRIAGE_TOKENS)
        if answer is not None:
            score, why = parse_score(answer) or (digest.score(), "unreadable answer: the signal score stands in")
            _save_verdict(ctx, digest, score, "llm", model, why, ctx.budget.spent - before)
            report.counts["days triaged by the LLM"] += 1
            return score
    score = digest.score()
    _save_verdict(ctx, digest, score, "heuristic", None, f"{digest.points():.1f} signal points", 0.0)
    report.counts["days triaged by signal"] += 1
    return score


def _split_title(text: str) -> tuple[str | None, str]:
    lines = text.strip().splitlines()
    if lines and lines[0].startswith("# "):
        return lines[0][2:].strip(), "\n".join(lines[1:]).strip()
    return None, text.strip()


def page_text(digest: DayDigest, title: str, body: str, byline: str, score: float) -> str:
    evidence = "\n".join(
        f"- `{ep.id[:8]}` [{ep.outcome.status}] {ep.summary.splitlines()[0][:160]}" for ep in digest.episodes
    )
    return (
        f"# {title}\n\n_{digest.project_name} · {digest.day.isoformat()} · {byline} · triage score "
        f"{score:.2f}_\n\n{body.strip()}\n\n## Evidence\n{evidence}\n"
    )


def _compose(ctx: DreamContext, digest: DayDigest) -> tuple[str, str, str | None, float]:
    """(title, body, the model that wrote it or None for the extractive page, cost)."""
    model, before = ctx.mem.config.dream.reflect_model, ctx.budget.spent
    answer = (
        ctx.budget.ask(REFLECT_SYSTEM, _prompt(digest), model=model, max_tokens=REFLECT_TOKENS)
        if ctx.budget.llm_on
        else None
    )
    cost = ctx.budget.spent - before
    if answer and len(answer.strip()) >= MIN_REFLECTION_CHARS:
        title, body = _split_title(answer)
        return title or f"Reflection: {digest.headline()}", body, model, cost
    return digest.headline(), digest.markdown(), None, cost


def _reflect(ctx: DreamContext, digest: DayDigest, score: float, report: PhaseReport) -> None:
    title, body, model, cost = _compose(ctx, digest)
    written_by, byline = ("llm", f"written by {model}") if model else ("extractive", "extractive")
    path = (
        project_dir(ctx.data_dir, paths.REFLECTIONS_DIR, digest.project_name, digest.project_id)
        / f"{digest.day.isoformat()}.md"
    )
    write_page(path, page_text(digest, title, body, byline, score))
    now = datetime.now(timezone.utc).isoformat()
    with ctx.mem.db.transaction() as conn:
        conn.execute(
            "INSERT INTO reflections(project_id, day, title, body, written_by, model, score, evidence, path, "
            "cost_usd, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(project_id, day) DO UPDATE SET title = excluded.title, body = excluded.body, "
            "written_by = excluded.written_by, model = excluded.model, score = excluded.score, "
            "evidence = excluded.evidence, path = excluded.path, cost_usd = excluded.cost_usd, "
            "updated_at = excluded.updated_at",
            (
                digest.project_id,
                digest.day.isoformat(),
                title,
                body,
                written_by,
                model,
                score,
                json.dumps(digest.evidence),
                str(path),
                cost,
                now,
                now,
            ),
        )
    report.counts[f"reflections written ({written_by})"] += 1


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    threshold = ctx.mem.config.dream.reflect_min_score
    for work in plan.items:
        ctx.checkpoint()
        score = _triage(ctx, work.digest, report) if work.triage else work.score
        assert score is not None
        if score < threshold:
            report.counts["days below the triage threshold"] += 1
            continue
        _reflect(ctx, work.digest, score, report)


PHASE = Phase(
    "reflect", "triage each completed day (cheap model), write reflections for the worthwhile ones", True, plan, run
)
