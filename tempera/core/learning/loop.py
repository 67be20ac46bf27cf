"""The cheap learning that follows every captured episode, in one call: the `learn` step of the steps after capture
(`transcripts/pipeline.py`), for a transcript's episodes and an explicit capture's alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tempera.core.learning.chaining import LinkMade, link_episode
from tempera.core.learning.credit import credit_success
from tempera.core.learning.evidence import Evidence
from tempera.core.learning.implicit import ImplicitResult, apply_implicit_feedback
from tempera.core.models import Episode

if TYPE_CHECKING:
    from tempera.core.memory import Memory


@dataclass
class CaptureLearning:
    links: list[LinkMade] = field(default_factory=list)
    temporal: list[Evidence] = field(default_factory=list)
    implicit: list[ImplicitResult] = field(default_factory=list)


def learn_from_capture(mem: "Memory", episode: Episode) -> CaptureLearning:
    """Link the new episode into its session, hand temporal credit back if it succeeded, and judge what was
    injected into its session before it (a correction turns those verdicts later: `correction_verdicts`)."""
    out = CaptureLearning(links=link_episode(mem, episode), temporal=credit_success(mem, episode))
    if episode.session_id:
        out.implicit = apply_implicit_feedback(mem, episode.session_id, episode)
    return out
