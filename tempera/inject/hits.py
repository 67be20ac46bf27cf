"""One episode chosen for injection, whichever path found it: the warm path's hybrid retrieval (a stored Episode)
and the SQL paths (a row and its JSON document) both build it with `make_hit`, and the renderer and the injection
log read only this. Standard library only: the cold path runs in the hook process."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from tempera.core.defaults import AUTO_MEMORY_ORIGIN
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
    matched_terms: int | None = None
    latency_ms: float | None = None
    p_relevant: float | None = None  # the gate's estimate (inject/warm.py), on the warm path with a prompt vector
    gate: dict[str, float] | None = None  # the gate's features, by their names in inject/warm.py GATE_FEATURES

    def scores(self) -> dict[str, Any]:
        """The numbers that put it there, for the injection log."""
        return {k: v for k in SCORE_KEYS if (v := getattr(self, k)) is not None}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def make_hit(
    *,
    episode_id: str,
    created_at: str,
    outcome: str,
    verification: str,
    summary: str,
    origin: str,
    raw_prompt: str,
    files_modified: list[str],
    project_path: str | None,
    project_id: str,
    project_name: str | None,
    author: str | None,
    transcript_path: str | None,
    current: ProjectRef,
    score: float,
    relevance: float | None = None,
    salience: float | None = None,
    utility: float | None = None,
    similarity: float | None = None,
    bm25: float | None = None,
    matched_terms: int | None = None,
) -> InjectHit:
    """The hit from an episode's stored fields, seen from the prompt's project `current`."""
    provenance = ""
    if origin == AUTO_MEMORY_ORIGIN:  # Claude Code's auto memory: name its file
        provenance = f"Claude Code auto memory, {os.path.basename(transcript_path or '')}"
    return InjectHit(
        id=episode_id,
        created_at=created_at,
        outcome=outcome,
        summary=summary,
        score=round(score, 4),
        verification=verification,
        origin=origin,
        prompt=raw_prompt[:PROMPT_CHARS],
        files=tuple(relative_to(f, project_path) for f in files_modified),
        project_note=f"from project {project_name}" if project_id != current.id else "",
        author=author,
        provenance=provenance,
        relevance=_round(relevance),
        salience=_round(salience),
        utility=_round(utility),
        similarity=_round(similarity),
        bm25=_round(bm25),
        matched_terms=matched_terms,
    )
