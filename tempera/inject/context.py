"""The one assembler of what a hook injects, for both paths: the session's log of what it already received, the
candidates (the prompt's related episodes; at SessionStart those of the branch's words or, after a compaction, of
the work in progress), the brief and facts when the warm path has them, rendered under one budget and logged.

Standard library only: without the daemon (`cold_answer`) it runs in the hook process with the stdlib sqlite3
and keyword SQL; the daemon (`inject/warm.py`) passes its hybrid search and its brief.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from tempera.core import paths
from tempera.core.directives import shown_lines
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.settings import HookSettings
from tempera.inject import gate, injectlog, render, sessionstart, sqlhits
from tempera.inject.hits import InjectHit
from tempera.inject.payload import HookPayload

Related = Callable[[str, ProjectRef, set[str]], list[InjectHit]]  # (prompt, project, ids shown already) -> hits
# (project, budget) -> brief and fact statements; facts None when the facts channel did not run (SessionStart, off)
Notes = Callable[[ProjectRef, int], tuple[list[str], list[str] | None]]


def compose(
    conn: Any,
    hp: HookPayload,
    project: ProjectRef,
    *,
    budget: int,
    related: Related,
    notes: Notes | None = None,
) -> str:
    """The additionalContext for one injecting event ('' when there is nothing new worth saying); the episodes
    shown are logged (`injections`), so none is shown twice while the session's context holds it and implicit
    feedback can find them, and so are the facts of a prompt the facts channel answered (`fact_injections`, []
    when none was shown). After a compaction the work in progress is the prompt (inject/sessionstart.py)."""
    started = time.perf_counter()
    if hp.event == "SessionStart" and hp.source in sessionstart.EMPTIED:
        injectlog.context_emptied(conn, hp.session_id)
    seen = injectlog.injected_ids(conn, hp.session_id)
    # at SessionStart the prompt is the work in progress or the branch's words, when the warm path read them
    hits = related(hp.prompt, project, seen) if hp.prompt else []
    header = (
        render.HEADER_PROMPT
        if hp.event == "UserPromptSubmit"
        else render.HEADER_COMPACT
        if hp.searches
        else render.HEADER_SESSION
    )
    brief, facts = notes(project, budget) if notes is not None else ([], None)
    text = render.render_blocks(
        [
            (render.HEADER_BRIEF, shown_lines(brief)),
            (render.HEADER_FACTS, shown_lines(facts or [])),
            (header, [render.episode_line(h) for h in hits]),
        ],
        budget,
    )
    shown = hits if text else []
    if shown or facts is not None:
        latency = round((time.perf_counter() - started) * 1000, 2)
        injectlog.record(
            conn,
            session_id=hp.session_id,
            project_id=project.id,
            event=hp.event,
            prompt=hp.prompt or None,
            hits=[h._replace(latency_ms=latency) for h in shown],
            facts=None if facts is None else facts if text else [],
        )
    return text


def cold_answer(hp: HookPayload, settings: HookSettings) -> str:
    """Without the daemon: keyword-only hits (UserPromptSubmit), read with the stdlib driver; at SessionStart no
    episodes (the log emptied after a compaction: inject/sessionstart.py); no database or schema yet means nothing
    to say."""
    conn = sqlhits.open_db(paths.db_path())
    if conn is None:
        return ""

    def related(prompt: str, project: ProjectRef, seen: set[str]) -> list[InjectHit]:
        return sqlhits.keyword_hits(
            conn,
            prompt,
            project,
            exclude=seen,
            limit=settings.max_episodes,
            min_hits=settings.min_keyword_hits,
            weights=settings.salience,
        )

    try:
        return compose(
            conn,
            hp,
            project_for_path(hp.cwd or os.getcwd()),
            budget=settings.budget_chars,
            related=related,
        )
    except sqlite3.OperationalError as exc:  # the schema is being created right now: nothing to say
        gate.log(f"{hp.event}: keyword path skipped ({exc})")
        return ""
    finally:
        conn.close()
