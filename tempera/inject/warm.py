"""The daemon's answers, with its warm memory: relevant episodes by hybrid retrieval with a relevance floor, the
brief (ask-backs, corrections, should-have-asked triggers, calibration) and the facts the prompt touches, through
the same gate and assembler as the hook process (`inject/gate.py`, `inject/context.py`). The daemon's relay
requests (`hook_reply`) and the MCP turn tools (`handle_hook`) both run this."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from tempera.core import jobs, textsearch
from tempera.core.brief import Brief, prompt_brief, session_start
from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.retrieve import retrieve
from tempera.core.settings import hook_settings
from tempera.facts.promptfacts import prompt_facts
from tempera.inject import context, gate, payload, render
from tempera.inject.gate import Enqueue
from tempera.inject.hits import InjectHit, make_hit
from tempera.inject.payload import HookPayload

# Shares of the budget. At UserPromptSubmit related past work is the point, so the brief and the facts the prompt
# touches may not crowd it out: on the real entire-cli sessions they took 1,400 of the 2,000 characters and left
# room for one episode. At SessionStart the brief (the ask-back, corrections) is the point and keeps half.
PROMPT_BRIEF_SHARE, PROMPT_FACTS_SHARE, SESSION_BRIEF_SHARE = 0.25, 0.2, 0.5


def episode_hit(ep: Episode, current: ProjectRef, *, score: float, **scores: Any) -> InjectHit:
    """A stored episode as a hit, seen from the prompt's project."""
    return make_hit(
        episode_id=ep.id,
        created_at=ep.created_at.isoformat(),
        outcome=ep.outcome.status,
        verification=ep.outcome.verification.value,
        summary=ep.summary,
        origin=ep.source.origin,
        raw_prompt=ep.intent.raw_prompt,
        files_modified=ep.context.files_modified,
        project_path=ep.project_path,
        project_id=ep.project_id,
        project_name=ep.project_name,
        author=ep.source.author,
        transcript_path=ep.source.transcript_path,
        current=current,
        score=score,
        utility=ep.utility.value,
        **scores,
    )


def relevant_hits(mem: Memory, prompt: str, project: ProjectRef, exclude: set[str]) -> list[InjectHit]:
    """Hybrid hits that clear the floor: cosine >= inject.min_similarity, or a strong literal match (enough
    distinct prompt terms, and not semantically unrelated). A prompt without content ("continue", "yes") gets none:
    whatever it matched would be the budget filled, not an answer."""
    cfg = mem.config.inject
    if cfg.max_episodes == 0 or not textsearch.content_terms(prompt):
        return []
    qvec = mem.embedder.embed_one(prompt) if mem.embedder and mem.store.vector_status().state == "ok" else None
    hits = retrieve(
        mem.store,
        prompt,
        project_id=project.id,
        cfg=mem.config.retrieval,
        limit=cfg.max_episodes + len(exclude) + 3,
        mode="hybrid",
        cross_project=True,
        query_vector=qvec,
    )
    chosen = []
    for h in hits:
        if h.episode.id in exclude:
            continue
        sim = h.similarity
        if sim is None and qvec is not None and h.vector is not None:
            sim = float(np.dot(qvec, h.vector))
        literal = h.matched_terms >= cfg.min_keyword_hits and (sim is None or sim >= cfg.min_similarity / 2)
        if (sim is not None and sim >= cfg.min_similarity) or literal:
            chosen.append(
                episode_hit(
                    h.episode,
                    project,
                    score=h.score,
                    relevance=h.relevance,
                    salience=h.salience,
                    similarity=sim,
                    bm25=h.bm25,
                )
            )
        if len(chosen) >= cfg.max_episodes:
            break
    return chosen


def _given_keys(mem: Memory, session_id: str) -> set[str]:
    return {r[0] for r in mem.db.query("SELECT key FROM session_context WHERE session_id = ?", (session_id,))}


def _remember_keys(mem: Memory, session_id: str, event: str, keys: list[str]) -> None:
    now = datetime.now(timezone.utc).isoformat()
    with mem.db.transaction():
        for key in keys:
            mem.db.execute(
                "INSERT OR IGNORE INTO session_context(session_id, key, event, created_at) VALUES (?, ?, ?, ?)",
                (session_id, key, event, now),
            )


def _notes(mem: Memory, hp: HookPayload) -> context.Notes:
    """The brief's statements and the prompt's facts not yet given in this session, marked given now."""

    def notes(project: ProjectRef, budget: int) -> tuple[list[str], list[str]]:
        given = _given_keys(mem, hp.session_id)
        facts: list[str] = []
        brief: Brief | None
        if hp.event == "SessionStart":
            brief = session_start(mem, project.id, by=hp.session_id or "unknown-session")
            share = SESSION_BRIEF_SHARE
        else:
            brief = prompt_brief(mem, project.id, hp.prompt, project.path)
            facts = render.fit(
                [line for line in prompt_facts(mem, hp.prompt, project_id=project.id) if "fact:" + line not in given],
                int(budget * PROMPT_FACTS_SHARE),
                prefix="- ",
            )
            share = PROMPT_BRIEF_SHARE
        statements = brief.select(int(budget * share), exclude=given) if brief is not None else []
        keys = [s.key for s in statements] + ["fact:" + line for line in facts]
        if keys:
            _remember_keys(mem, hp.session_id, hp.event, keys)
        return [s.text for s in statements], facts

    return notes


def answer(mem: Memory, hp: HookPayload, *, wake: Callable[[], None] = lambda: None) -> str:
    """The additionalContext for SessionStart or UserPromptSubmit ('' when there is nothing new worth saying). At
    SessionStart, the sync of Claude Code's auto memory is queued (`wake` tells the worker), never waited for."""
    cwd = hp.cwd or os.getcwd()
    project = project_for_path(cwd)
    mem.store.ensure_project(project)
    if hp.event == "SessionStart":
        jobs.enqueue_auto_memory(mem.db.conn, project_id=project.id, cwd=cwd)
        wake()
    cfg = mem.current_config().inject  # as config.toml says now: the gate's kill switch is read per call too
    return context.compose(
        mem.db.conn,
        hp,
        project,
        budget=cfg.budget_chars,
        limit=cfg.max_episodes,
        salience=mem.config.retrieval.salience_weights(),
        related=lambda prompt, proj, seen: relevant_hits(mem, prompt, proj, seen),
        notes=_notes(mem, hp),
    )


def handle_hook(
    mem: Memory,
    event: str,
    doc: dict[str, Any],
    *,
    enqueue: Enqueue | None = None,
    wake: Callable[[], None] = lambda: None,
) -> dict[str, Any] | None:
    """One hook call answered with this memory, through the hook's own gate; a capture goes to this memory's job
    queue unless `enqueue` takes it (the MCP finalize tool runs it at once)."""

    def queue_capture(hp: HookPayload) -> None:
        jobs.enqueue_capture(mem.db.conn, session_id=hp.session_id, transcript_path=hp.transcript_path)
        wake()

    return gate.handle(
        event, doc, hook_settings(), answer=lambda hp: answer(mem, hp, wake=wake), enqueue=enqueue or queue_capture
    )


def hook_reply(mem: Memory, event_arg: str, stdin: str, *, wake: Callable[[], None]) -> bytes:
    """What the hook prints for relay.py's request (its argument and raw stdin), as `tempera-hook` would print it."""
    event = gate.known_event(event_arg)
    if event is None:
        return b""
    return gate.output_bytes(handle_hook(mem, event, payload.decode(stdin.encode("utf-8")), wake=wake))
