"""The daemon's answers, with its warm memory: relevant episodes by hybrid retrieval that clear a calibrated bar, the
brief (ask-backs, corrections, should-have-asked triggers, calibration) and the facts the prompt touches, through
the hook's gate and the assembler (`inject/gate.py`, `inject/context.py`). The daemon's relay requests
(`hook_reply`) and the MCP turn tools (`handle_hook`) both run this; until the daemon's model is warm its answers are
keyword-only (`keyword_only`)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from tempera.core import jobs, project_lineage, textsearch
from tempera.core.config import Config
from tempera.core.brief import Brief, hook_session_start, prompt_brief
from tempera.core.directives import reads_as_directive
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.retrieve import Hit
from tempera.facts.promptfacts import prompt_facts
from tempera.inject import context, gate, injectlog, longprompt, payload, render, sessionstart, workcontext
from tempera.inject.hits import InjectHit, episode_hit
from tempera.inject.payload import HookPayload

log = logging.getLogger("tempera")

# Shares of the budget. At UserPromptSubmit related past work is the point, so the brief and the facts the prompt
# touches may not crowd it out: on the real entire-cli sessions they took 1,400 of the 2,000 characters and left
# room for one episode. At SessionStart the brief (the ask-back, corrections) is the point and keeps half.
PROMPT_BRIEF_SHARE, PROMPT_FACTS_SHARE, SESSION_BRIEF_SHARE = 0.25, 0.2, 0.5


GATE_FEATURES = (
    "standing",  # the hit's cosine to the prompt against the store's background of unrelated pairs (core/standing.py)
    "standing_to_best",  # its standing over the pool's best standing (0 at or below the background's centre)
    "bm25_to_best",  # over the pool's best BM25 (0 when BM25 did not find it)
    "terms_matched",  # share of the prompt's search terms the episode holds
    "named",  # 1 when it names a file or identifier the prompt names
    "rank_inverse",  # 1 / its place in hybrid's order
)


def gate_features(hits: list[Hit], prompt: str) -> "np.ndarray":
    """One row of GATE_FEATURES per hit (in hybrid's order), from what retrieval already computed: no query more.
    The relative ones compare a hit with the best of its pool, which a fixed floor cannot do (a paraphrase's right
    episode scores 0.25, a literal one's 0.6). Standings, not cosines: the same weights decide the same on any model
    (a hit without a vector stands at the background's centre, 0; one below it is no share of the best)."""
    n_terms = len(textsearch.query_terms(prompt))
    standings = [h.standing or 0.0 for h in hits]
    bm25s = [h.bm25 or 0.0 for h in hits]
    top_standing, top_bm25 = max(standings, default=0.0), max(bm25s, default=0.0)
    return np.array(
        [
            [
                st,
                max(st, 0.0) / top_standing if top_standing > 0 else 0.0,
                bm / top_bm25 if top_bm25 > 0 else 0.0,
                h.matched_terms / n_terms if n_terms else 0.0,
                1.0 if h.names_rank is not None else 0.0,
                1.0 / rank,
            ]
            for rank, (h, st, bm) in enumerate(zip(hits, standings, bm25s), 1)
        ],
        dtype=np.float64,
    ).reshape(len(hits), len(GATE_FEATURES))


def gate_probability(features: "np.ndarray", weights: list[float]) -> "np.ndarray":
    """P(relevant) of each row: logistic regression, `weights` = intercept then one per GATE_FEATURES."""
    w = np.asarray(weights, dtype=np.float64)
    z = np.clip(w[0] + features @ w[1:], -500.0, 500.0)  # extreme weights saturate P instead of overflowing exp
    return 1.0 / (1.0 + np.exp(-z))


def candidates(
    mem: Memory, prompt: str, project: ProjectRef, exclude: set[str], context: str = "", *, keyword_only: bool = False
) -> tuple[list[Hit], bool]:
    """The prompt's hybrid hits in hybrid's order (with the session's `context`, `inject/workcontext.py`), each
    with its cosine to the prompt and its standing (core/standing.py; computed from its vector when only the context
    found it), and whether the prompt had a vector at all (none while `keyword_only`: BM25 alone); none for a prompt
    without content ("continue", "yes"): whatever it matched would be the budget filled, not an answer."""
    cfg = mem.config.inject
    if cfg.max_episodes == 0 or not textsearch.content_terms(longprompt.search_text(prompt)):
        return [], False
    embedded = longprompt.vector_text(prompt)  # a long prompt's title (inject/longprompt.py)
    embedder = None if keyword_only else mem.embedder
    qvec = embedder.embed_query(embedded) if embedder and mem.store.vectors.status().state == "ok" else None
    hits = workcontext.related(
        mem.store,
        prompt,
        context,
        project_id=project.id,
        cfg=mem.config.retrieval,
        limit=cfg.max_episodes + len(exclude) + 3,
        mode="keyword" if keyword_only else "hybrid",  # hybrid without a vector would embed the prompt itself
        cross_project=True,
        query_vector=qvec,
    )
    context_only = [h for h in hits if h.similarity is None and h.vector is not None]
    if qvec is not None and context_only:  # hits only the session's context found (workcontext.py): their match
        background = mem.store.vectors.background(project.id)
        for h in context_only:
            h.similarity = float(np.dot(qvec, h.vector))
            h.standing = background.standing(h.similarity)
    return hits, qvec is not None


def choose(p: "np.ndarray", shown_before: list[bool], *, bar: float, top_share: float, limit: int) -> list[int]:
    """The indexes of the hits worth their room, in hybrid's order: P(relevant) at least `bar` (`gate_bar`), and at
    least `top_share` (`gate_top_share`) of the best P among the hits not yet shown. Room left in the budget is no
    reason to fill it: an item far less likely than the best one costs the agent reading for little expected value."""
    fresh = [i for i, seen in enumerate(shown_before) if not seen]
    best = max((float(p[i]) for i in fresh), default=0.0)
    keep = max(bar, top_share * best)
    return [i for i in fresh if p[i] >= keep][:limit]


def relevant_hits(
    mem: Memory, prompt: str, project: ProjectRef, exclude: set[str], context: str = "", *, keyword_only: bool = False
) -> list[InjectHit]:
    """The hybrid hits that clear the calibrated bar (`choose`). Without a prompt vector (no model, the daemon's
    model not warm yet, or the vector index is being rebuilt) the fitted estimate has nothing to go on, and a hit
    needs a literal match of `min_keyword_hits` distinct prompt terms."""
    cfg = mem.config.inject
    hits, with_vector = candidates(mem, prompt, project, exclude, context, keyword_only=keyword_only)
    if not with_vector:
        fresh = [h for h in hits if h.episode.id not in exclude and h.matched_terms >= cfg.min_keyword_hits]
        return [shown(h, project) for h in fresh[: cfg.max_episodes]]
    features = gate_features(hits, longprompt.search_text(prompt))  # the terms it was searched by
    p = gate_probability(features, cfg.gate_weights)
    seen = [h.episode.id in exclude for h in hits]
    picked = choose(p, seen, bar=cfg.gate_bar, top_share=cfg.gate_top_share, limit=cfg.max_episodes)
    return [shown(hits[i], project, gate=(float(p[i]), features[i])) for i in picked]


def shown(h: Hit, project: ProjectRef, gate: tuple[float, "np.ndarray"] | None = None) -> InjectHit:
    """A retrieval hit as the hook renders and logs it, with the numbers that put it there; `gate`: its P(relevant)
    and gate features, logged so that the verdicts capture gives it can refit the gate (inject/gatefit.py)."""
    scores = {"relevance": h.relevance, "salience": h.salience, "similarity": h.similarity, "bm25": h.bm25}
    hit = episode_hit(h.episode, project, score=h.score, **scores)
    if gate is None:
        return hit
    p, row = gate
    return hit._replace(p_relevant=round(p, 4), gate={k: round(float(v), 4) for k, v in zip(GATE_FEATURES, row)})


def _given_keys(mem: Memory, session_id: str) -> set[str]:
    """The brief statements and facts the session's context holds: given since it was last emptied."""
    sql = f"SELECT key FROM session_context WHERE session_id = ? AND {injectlog.SINCE_EMPTIED}"
    return {r[0] for r in mem.db.query(sql, (session_id,) * 2)}


def _remember_keys(mem: Memory, session_id: str, event: str, keys: list[str]) -> None:
    now = datetime.now(timezone.utc).isoformat()
    with mem.db.transaction():
        for key in keys:
            mem.db.execute(
                "INSERT INTO session_context(session_id, key, event, created_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(session_id, key) DO UPDATE SET event = excluded.event, created_at = excluded.created_at",
                (session_id, key, event, now),
            )


def _facts(mem: Memory, prompt: str, project: ProjectRef, given: set[str]) -> list[str]:
    """The prompt's facts not yet given in this session and not read as orders (the renderer withholds those): one
    found by words alone only while it has been shown on at most a fifth of the project's recent prompts, so no
    fact comes with most prompts unless they name it (`injectlog.worn_facts`)."""
    found = [
        f
        for f in prompt_facts(mem, prompt, project_id=project.id)
        if "fact:" + f.text not in given and not reads_as_directive(f.text)
    ]
    worn = injectlog.worn_facts(mem.db.conn, project.id) if not all(f.named for f in found) else set()
    return [f.text for f in found if f.named or f.text not in worn]


def notes(mem: Memory, hp: HookPayload, project: ProjectRef, cfg: Config) -> tuple[list[str], list[str] | None]:
    """The brief's statements and the prompt's facts the session's context does not hold yet, marked given now;
    facts None when the facts channel did not run (SessionStart, or `inject.facts` off)."""
    budget = cfg.inject.budget_chars
    given = _given_keys(mem, hp.session_id)
    facts: list[str] | None = None
    brief: Brief | None
    if not hp.searches:
        brief = hook_session_start(mem, project.id, by=hp.session_id or "unknown-session")
        share = SESSION_BRIEF_SHARE
    else:
        brief = prompt_brief(mem, project.id, longprompt.search_text(hp.prompt), project.path)  # its names
        if cfg.inject.facts:
            facts = render.fit(_facts(mem, hp.prompt, project, given), int(budget * PROMPT_FACTS_SHARE), prefix="- ")
        share = PROMPT_BRIEF_SHARE
    statements = brief.select(int(budget * share), exclude=given) if brief is not None else []
    keys = [s.key for s in statements] + ["fact:" + line for line in facts or []]
    if keys:
        _remember_keys(mem, hp.session_id, hp.event, keys)
    return [s.text for s in statements], facts


def answer(
    mem: Memory,
    hp: HookPayload,
    *,
    cfg: Config | None = None,
    wake: Callable[[], None] = lambda: None,
    keyword_only: bool = False,
) -> str:
    """The additionalContext for SessionStart or UserPromptSubmit ('' when there is nothing new worth saying); after
    a compaction, for the work in progress (inject/sessionstart.py). At SessionStart, the sync of Claude Code's auto
    memory is queued (`wake` tells the worker), never waited for. `cfg`: the call's config (read now when None);
    `keyword_only`: the daemon's model is not warm yet (`relevant_hits`)."""
    cfg = cfg or mem.current_config()  # as config.toml says now: the gate's kill switch is read per call too
    cwd = hp.cwd or os.getcwd()
    words = workcontext.checkout_context(cwd)  # the branch's: fused with a thin prompt, a new session's prompt
    hp = sessionstart.with_work(hp, words)
    project = project_for_path(cwd)
    if mem.db.one("SELECT 1 FROM projects WHERE id = ?", (project.id,)) is None:  # a checkout seen the first time
        mem.store.projects.ensure(project)
        try:
            project_lineage.adopt(mem.db, project)  # takes in what was imported from its copies elsewhere
        except Exception:  # the answer goes on without it: `tempera projects merge` does it by hand
            log.exception("taking in the memory of copies of %s failed", project.path)
    if hp.event == "SessionStart":
        jobs.enqueue_auto_memory(mem.db.conn, project_id=project.id, cwd=cwd)
        wake()
    started = time.perf_counter()
    if hp.event == "SessionStart" and hp.source in sessionstart.EMPTIED:
        injectlog.context_emptied(mem.db.conn, hp.session_id)
    seen = injectlog.injected_ids(mem.db.conn, hp.session_id)
    # at SessionStart the prompt is the work in progress or the branch's words
    context_words = "" if hp.prompt == words else words
    hits = relevant_hits(mem, hp.prompt, project, seen, context_words, keyword_only=keyword_only) if hp.prompt else []
    brief, facts = notes(mem, hp, project, cfg)
    return context.compose(
        mem.db.conn,
        hp,
        project,
        budget=cfg.inject.budget_chars,
        hits=hits,
        brief=brief,
        facts=facts,
        started=started,
    )


def handle_hook(
    mem: Memory,
    event: str,
    doc: dict[str, Any],
    *,
    enqueue: Callable[[HookPayload], None] | None = None,
    wake: Callable[[], None] = lambda: None,
    keyword_only: bool = False,
) -> dict[str, Any] | None:
    """One hook call answered with this memory, through the hook's gate, with config.toml read once; a capture goes
    to this memory's job queue unless `enqueue` takes it (the MCP finalize tool runs it at once)."""
    cfg = mem.current_config()
    hp = gate.admitted(event, doc, disabled=cfg.general.disabled)
    if hp is None:
        return None
    if event in gate.CAPTURING:
        if enqueue is not None:
            enqueue(hp)
        else:
            jobs.enqueue_capture(mem.db.conn, session_id=hp.session_id, transcript_path=hp.transcript_path)
            wake()
        return None
    return gate.output(event, answer(mem, hp, cfg=cfg, wake=wake, keyword_only=keyword_only))


def hook_reply(
    mem: Memory, event_arg: str, raw: bytes, *, wake: Callable[[], None], keyword_only: bool = False
) -> bytes:
    """What the hook prints for relay.py's request (its argument and raw stdin)."""
    event = gate.known_event(event_arg)
    if event is None:
        return b""
    return gate.output_bytes(handle_hook(mem, event, payload.decode(raw), wake=wake, keyword_only=keyword_only))
