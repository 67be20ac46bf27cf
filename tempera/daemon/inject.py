"""The warm answers to SessionStart and UserPromptSubmit: hybrid retrieval with a relevance floor, the brief,
and the session's injection log, rendered under the size budget."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tempera.core.memory import Memory
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.retrieve import Hit, retrieve
from tempera.hooks import injectlog, render


def _hit_dict(h: Hit, project: ProjectRef, similarity: float | None) -> dict[str, Any]:
    ep = h.episode
    return {"id": ep.id, "created_at": ep.created_at.isoformat(), "outcome": ep.outcome.status,
            "verification": ep.outcome.verification.value, "summary": ep.summary,
            "files": ep.context.files_modified, "score": round(h.score, 4), "relevance": round(h.relevance, 4),
            "salience": round(h.salience, 4), "utility": round(ep.utility.value, 4),
            "similarity": None if similarity is None else round(similarity, 4),
            "bm25": None if h.bm25 is None else round(h.bm25, 4),
            "project_note": f"from project {ep.project_name}" if ep.project_id != project.id else ""}


def relevant_hits(mem: Memory, prompt: str, project: ProjectRef, exclude: set[str]) -> list[dict[str, Any]]:
    """Hybrid hits that clear the floor: cosine >= inject.min_similarity, or a strong literal match (enough
    distinct prompt terms, and not semantically unrelated)."""
    cfg = mem.config.inject
    if cfg.max_episodes == 0 or not prompt.strip():
        return []
    hits = retrieve(mem.store, prompt, project_id=project.id, cfg=mem.config.retrieval,
                    limit=cfg.max_episodes + len(exclude) + 3, mode="hybrid", cross_project=True)
    qvec = mem.embedder.embed_one(prompt) if mem.embedder and mem.store.vector_status().state == "ok" else None
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


def useful_recent(mem: Memory, project: ProjectRef, exclude: set[str]) -> list[dict[str, Any]]:
    from tempera.hooks.coldpath import useful_recent as by_sql

    return by_sql(mem.db.conn, project, exclude=exclude, limit=mem.config.inject.max_episodes)


def answer(mem: Memory, req: dict[str, Any]) -> str:
    """The additionalContext for one hook request (empty when there is nothing worth saying)."""
    event = str(req.get("event", ""))
    session_id = str(req.get("session_id") or "")
    project = project_for_path(str(req.get("cwd") or os.getcwd()))
    seen = injectlog.injected_ids(mem.db.conn, session_id)
    sections: list[tuple[str, list[str]]] = []
    if event == "UserPromptSubmit":
        hits = relevant_hits(mem, str(req.get("prompt") or ""), project, seen)
        sections.append((render.HEADER_PROMPT, [render.episode_line(h) for h in hits]))
    elif event == "SessionStart":
        hits = useful_recent(mem, project, seen)
        sections.append((render.HEADER_SESSION, [render.episode_line(h) for h in hits]))
    else:
        return ""
    text = render.render_blocks(sections, mem.config.inject.budget_chars)
    if text and hits:
        injectlog.record(mem.db.conn, session_id=session_id, project_id=project.id, event=event,
                         prompt=str(req.get("prompt") or "") or None, hits=hits)
    return text
