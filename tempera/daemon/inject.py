"""The warm answers to SessionStart and UserPromptSubmit: the brief (ask-backs, corrections, should-have-asked
triggers, calibration), relevant episodes by hybrid retrieval with a relevance floor, and the session's log of
what it already received, all rendered under one size budget."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from tempera.core import textsearch
from tempera.core.brief import prompt_brief, session_start
from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.retrieve import Hit, retrieve
from tempera.facts.promptfacts import prompt_facts
from tempera.hooks import injectlog, render
from tempera.hooks.payload import HookPayload
from tempera.transcripts import automemory

log = logging.getLogger("tempera.daemon")

HEADER_BRIEF = "Tempera brief: what earlier sessions in this project recorded."
HEADER_FACTS = "Tempera facts: decisions and constraints recorded earlier that the prompt touches."
# Shares of the budget. At UserPromptSubmit related past work is the point, so the brief and the facts the prompt
# touches may not crowd it out: on the real entire-cli sessions they took 1,400 of the 2,000 characters and left
# room for one episode. At SessionStart the brief (the ask-back, corrections) is the point and keeps half.
PROMPT_BRIEF_SHARE, PROMPT_FACTS_SHARE, SESSION_BRIEF_SHARE = 0.25, 0.2, 0.5


def _hit_dict(h: Hit, project: ProjectRef, similarity: float | None) -> dict[str, Any]:
    ep = h.episode
    return {"id": ep.id, "created_at": ep.created_at.isoformat(), "outcome": ep.outcome.status,
            "verification": ep.outcome.verification.value, "summary": ep.summary,
            "origin": ep.source.origin, "prompt": ep.intent.raw_prompt[:render.PROMPT_CHARS],
            "files": [render.relative_to(f, ep.project_path) for f in ep.context.files_modified],
            "score": round(h.score, 4), "relevance": round(h.relevance, 4),
            "salience": round(h.salience, 4), "utility": round(ep.utility.value, 4),
            "similarity": None if similarity is None else round(similarity, 4),
            "bm25": None if h.bm25 is None else round(h.bm25, 4),
            "project_note": f"from project {ep.project_name}" if ep.project_id != project.id else "",
            "author": ep.source.author, "provenance": _provenance(ep)}


def _provenance(ep: Episode) -> str:
    """Where a note that is not Tempera's own came from (Claude Code's auto memory names its file)."""
    if ep.source.origin != automemory.ORIGIN:
        return ""
    return f"Claude Code auto memory, {os.path.basename(ep.source.transcript_path or '')}"


def sync_auto_memory(mem: Memory, project: ProjectRef, cwd: str) -> None:
    """At SessionStart Claude Code has just read its auto memory: store the notes it did not load. Never fails
    the answer: a broken note file costs only its notes."""
    try:
        if automemory.enabled(Path(project.path or cwd)):
            report = automemory.sync(mem, project, cwd)
            if report.added or report.retired:
                log.info("auto memory %s: %s", project.name, report)
    except Exception:
        log.exception("auto memory sync failed for %s", cwd)


def relevant_hits(mem: Memory, prompt: str, project: ProjectRef, exclude: set[str]) -> list[dict[str, Any]]:
    """Hybrid hits that clear the floor: cosine >= inject.min_similarity, or a strong literal match (enough
    distinct prompt terms, and not semantically unrelated). A prompt without content ("continue", "yes") gets none:
    whatever it matched would be the budget filled, not an answer."""
    cfg = mem.config.inject
    if cfg.max_episodes == 0 or not textsearch.content_terms(prompt):
        return []
    qvec = mem.embedder.embed_one(prompt) if mem.embedder and mem.store.vector_status().state == "ok" else None
    hits = retrieve(mem.store, prompt, project_id=project.id, cfg=mem.config.retrieval,
                    limit=cfg.max_episodes + len(exclude) + 3, mode="hybrid", cross_project=True, query_vector=qvec)
    chosen = []
    for h in hits:
        if h.episode.id in exclude:
            continue
        sim = h.similarity
        if sim is None and qvec is not None and h.vector is not None:
            sim = float(np.dot(qvec, h.vector))
        literal = h.matched_terms >= cfg.min_keyword_hits and (sim is None or sim >= cfg.min_similarity / 2)
        if (sim is not None and sim >= cfg.min_similarity) or literal:
            chosen.append(_hit_dict(h, project, sim))
        if len(chosen) >= cfg.max_episodes:
            break
    return chosen


def _given_keys(mem: Memory, session_id: str) -> set[str]:
    return {r[0] for r in mem.db.query("SELECT key FROM session_context WHERE session_id = ?", (session_id,))}


def _remember_keys(mem: Memory, session_id: str, event: str, keys: list[str]) -> None:
    now = datetime.now(timezone.utc).isoformat()
    with mem.db.transaction():
        for key in keys:
            mem.db.execute("INSERT OR IGNORE INTO session_context(session_id, key, event, created_at) "
                           "VALUES (?, ?, ?, ?)", (session_id, key, event, now))


def answer(mem: Memory, req: dict[str, Any]) -> str:
    """The additionalContext for one hook request ('' when there is nothing new worth saying)."""
    from tempera.hooks.coldpath import useful_recent

    started = time.perf_counter()
    event = str(req.get("event", ""))
    if event not in ("SessionStart", "UserPromptSubmit"):
        return ""
    session_id = str(req.get("session_id") or "")
    project = project_for_path(str(req.get("cwd") or os.getcwd()))
    mem.store.ensure_project(project)
    seen = injectlog.injected_ids(mem.db.conn, session_id)
    given = _given_keys(mem, session_id)
    budget = mem.config.inject.budget_chars
    prompt = str(req.get("prompt") or "")
    if event == "SessionStart":
        sync_auto_memory(mem, project, str(req.get("cwd") or os.getcwd()))
        brief = session_start(mem, project.id, by=session_id or "unknown-session")
        hits = useful_recent(mem.db.conn, project, exclude=seen, limit=mem.config.inject.max_episodes,
                             weights=mem.config.retrieval.salience_weights())
        header = render.HEADER_SESSION
        facts: list[str] = []
        brief_share = SESSION_BRIEF_SHARE
    else:
        brief = prompt_brief(mem, project.id, prompt, project.path)
        hits = relevant_hits(mem, prompt, project, seen)
        header = render.HEADER_PROMPT
        facts = render.fit([line for line in prompt_facts(mem, prompt, project_id=project.id)
                            if "fact:" + line not in given], int(budget * PROMPT_FACTS_SHARE), prefix="- ")
        brief_share = PROMPT_BRIEF_SHARE
    statements = brief.select(int(budget * brief_share), exclude=given) if brief is not None else []
    text = render.render_blocks([(HEADER_BRIEF, [f"- {s.text}" for s in statements]),
                                 (HEADER_FACTS, [f"- {line}" for line in facts]),
                                 (header, [render.episode_line(h) for h in hits])], budget)
    keys = [s.key for s in statements] + ["fact:" + line for line in facts]
    if keys:
        _remember_keys(mem, session_id, event, keys)
    if hits:
        latency = round((time.perf_counter() - started) * 1000, 2)
        hits = [{**h, "latency_ms": latency} for h in hits]
        injectlog.record(mem.db.conn, session_id=session_id, project_id=project.id, event=event,
                         prompt=prompt or None, hits=hits)
    return text


def handle_hook(mem: Memory, event: str, doc: dict[str, Any],
                enqueue: Callable[[HookPayload], None]) -> dict[str, Any] | None:
    """One hook call answered with this process's memory, through the hook's own gate (disabled, paused,
    stop_hook_active, no transcript): the daemon's relay requests and the MCP turn tools both run this."""
    from tempera.hooks import entry, settings

    return entry.handle(event, doc, settings.load(), answer=lambda hp: answer(mem, hp._asdict()), enqueue=enqueue)
