"""One episode chosen for injection as the agent reads it and the injection log records it: what retrieval found
(a stored Episode and its scores), seen from the prompt's project (`episode_hit`). The renderer and the injection
log read only this."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from tempera.core.defaults import AUTO_MEMORY_ORIGIN
from tempera.core.models import Episode
from tempera.core.project import ProjectRef, relative_to

PROMPT_CHARS = 1000  # of the request, enough to tell whether the summary opens with it
# what the log keeps; `p_relevant` and `gate` (its features by name) are what the UserPromptSubmit gate saw, so a
# user can refit the gate on the verdicts capture later gives these rows (`tempera learn refit-gate`, inject/gatefit.py)
SCORE_KEYS = ("score", "relevance", "salience", "similarity", "bm25", "utility", "latency_ms", "p_relevant", "gate")


class InjectHit(NamedTuple):
    id: str
    created_at: str  # ISO 8601
    outcome: str
    summary: str
    score: float
    verification: str = "untested"
    origin: str = ""  # transcript | manual | mcp | import | auto-memory
    prompt: str = ""  # the request that started the episode, clipped to PROMPT_CHARS
    files: tuple[str, ...] = ()  # modified, relative to the project root when inside it
    project_note: str = ""  # "from project X" when it is not the prompt's project
    author: str | None = None  # the teammate who recorded it
    provenance: str = ""  # where a note that is not Tempera's own came from
    relevance: float | None = None
    salience: float | None = None
    utility: float | None = None
    similarity: float | None = None
    bm25: float | None = None
    latency_ms: float | None = None
    p_relevant: float | None = None  # the gate's estimate (inject/warm.py), on the warm path with a prompt vector
    gate: dict[str, float] | None = None  # the gate's features, by their names in inject/warm.py GATE_FEATURES

    def scores(self) -> dict[str, Any]:
        """The numbers that put it there, for the injection log."""
        return {k: v for k in SCORE_KEYS if (v := getattr(self, k)) is not None}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def episode_hit(
    ep: Episode,
    current: ProjectRef,
    *,
    score: float,
    relevance: float | None = None,
    salience: float | None = None,
    similarity: float | None = None,
    bm25: float | None = None,
) -> InjectHit:
    """A stored episode as a hit, seen from the prompt's project `current`, with the numbers that put it there."""
    provenance = ""
    if ep.source.origin == AUTO_MEMORY_ORIGIN:  # Claude Code's auto memory: name its file
        provenance = f"Claude Code auto memory, {os.path.basename(ep.source.transcript_path or '')}"
    return InjectHit(
        id=ep.id,
        created_at=ep.created_at.isoformat(),
        outcome=ep.outcome.status,
        summary=ep.summary,
        score=round(score, 4),
        verification=ep.outcome.verification.value,
        origin=ep.source.origin,
        prompt=ep.intent.raw_prompt[:PROMPT_CHARS],
        files=tuple(relative_to(f, ep.project_path) for f in ep.context.files_modified),
        project_note=f"from project {ep.project_name}" if ep.project_id != current.id else "",
        author=ep.source.author,
        provenance=provenance,
        relevance=_round(relevance),
        salience=_round(salience),
        utility=_round(ep.utility.value),
        similarity=_round(similarity),
        bm25=_round(bm25),
    )
