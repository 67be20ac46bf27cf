"""The assembler of what a hook injects: the candidates (the prompt's related episodes; at SessionStart those of the
branch's words or, after a compaction, of the work in progress), the brief and facts, rendered under one budget,
and what was shown logged. The daemon (`inject/warm.py`) finds them; this module only renders and records.
"""

from __future__ import annotations

import time
from typing import Any

from tempera.core.directives import shown_lines
from tempera.core.project import ProjectRef
from tempera.inject import injectlog, render
from tempera.inject.hits import InjectHit
from tempera.inject.payload import HookPayload


def compose(
    conn: Any,
    hp: HookPayload,
    project: ProjectRef,
    *,
    budget: int,
    hits: list[InjectHit],
    brief: list[str],
    facts: list[str] | None,
    started: float,
) -> str:
    """The additionalContext for one injecting event ('' when there is nothing new worth saying); the episodes
    shown are logged (`injections`), so none is shown twice while the session's context holds it and implicit
    feedback can find them, and so are the facts of a prompt the facts channel answered (`fact_injections`, []
    when none was shown; `facts` None when the channel did not run). `started`: when the answer began
    (perf_counter), for the latency logged."""
    header = (
        render.HEADER_PROMPT
        if hp.event == "UserPromptSubmit"
        else render.HEADER_COMPACT
        if hp.searches
        else render.HEADER_SESSION
    )
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
