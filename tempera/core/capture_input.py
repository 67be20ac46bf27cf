"""Explicit capture input (CLI flags, stdin JSON, the MCP tool) turned into a stored episode."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tempera.core.errors import InvalidInput
from tempera.core.models import (
    OUTCOMES,
    TASK_TYPES,
    Context,
    Episode,
    ErrorRecord,
    Intent,
    Outcome,
    Source,
    ValidityScope,
)
from tempera.core.project import ProjectRef
from tempera.core.surrogates import repair_data


class CaptureInput(BaseModel):
    """The fields of the original Tempera's tempera_capture tool (github.com/anvanster/tempera)."""

    model_config = ConfigDict(extra="forbid")
    summary: str = Field(description="What was done and what worked, in a sentence or a paragraph")
    task_type: Literal[TASK_TYPES] = "other"  # type: ignore[valid-type]
    outcome: Literal[OUTCOMES] = "success"  # type: ignore[valid-type]
    files_modified: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    errors_resolved: list[str] = Field(default_factory=list)
    alternatives_considered: list[str] = Field(default_factory=list)
    validity_scope: str | None = Field(
        None, description="project | forever | language:X | crate:X@V | domain:X | workaround:REF[@YYYY-MM-DD]"
    )
    session_id: str | None = None
    project: str | None = Field(None, description="A project path, name or id; default the working directory")

    @model_validator(mode="before")
    @classmethod
    def _repair(cls, data: object) -> object:
        """Flags, stdin JSON and MCP arguments may carry lone surrogates (a string cut inside an emoji)."""
        return repair_data(data)

    @field_validator("summary")
    @classmethod
    def _summary(cls, v: str) -> str:
        if not v or not v.strip():
            raise ValueError("summary must not be empty")
        return v

    @field_validator("tags", "files_modified", "errors_resolved", "alternatives_considered", mode="before")
    @classmethod
    def _listify(cls, v: object) -> object:
        if isinstance(v, str):
            return [x.strip() for x in v.split(",") if x.strip()]
        return v

    def to_episode(self, project: ProjectRef, *, max_summary_chars: int) -> Episode:
        """The episode to store, its secrets redacted as a transcript's are."""
        if len(self.summary) > max_summary_chars:
            raise InvalidInput(
                f"summary is {len(self.summary):,} characters; the limit is {max_summary_chars:,} "
                "(capture.max_summary_chars): summarise it"
            )
        scope = ValidityScope.parse(self.validity_scope)
        return Episode(
            project_id=project.id,
            project_name=project.name,
            project_path=project.path,
            session_id=self.session_id,
            summary=self.summary,
            intent=Intent(raw_prompt=self.summary, extracted=self.summary, task_type=self.task_type, scope=scope),
            context=Context(
                files_modified=self.files_modified,
                errors=[ErrorRecord(message=e, resolved=True) for e in self.errors_resolved],
            ),
            outcome=Outcome(status=self.outcome),
            tags=self.tags,
            alternatives_considered=self.alternatives_considered,
            source=Source(origin="manual"),
        ).redacted()
