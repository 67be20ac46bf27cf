"""The episode and its parts, with the original Tempera's validity scopes, decay table and verification states."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tempera.core import defaults
from tempera.core.errors import InvalidInput
from tempera.core.redact import redact_data

TASK_TYPES = ("bugfix", "feature", "refactor", "test", "docs", "research", "debug", "setup", "other")
OUTCOMES = ("success", "partial", "failure", "unknown")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso_utc(at: datetime | None = None) -> str:
    """A time as every time column stores it (ISO 8601 in UTC, so that stamps compare as text); now when None."""
    return (at or utcnow()).astimezone(timezone.utc).isoformat()


class VerificationState(str, Enum):
    UNTESTED = "untested"
    TESTS_PASS = "tests_pass"
    MERGED = "merged"
    STABLE_NO_REVERT = "stable_no_revert"

    @property
    def weight(self) -> float:
        """Later states weigh more in salience (the original Tempera: 0.30 untested, 0.60 merged)."""
        return VERIFICATION_WEIGHTS[self]

    @property
    def rank(self) -> int:
        return list(VerificationState).index(self)


VERIFICATION_WEIGHTS = {state: defaults.VERIFICATION_WEIGHTS[state.value] for state in VerificationState}

ScopeKind = Literal["forever", "language", "crate", "domain", "workaround", "project", "legacy"]

DECAY_RATES: dict[str, float] = defaults.DECAY_RATES  # per day, by scope kind


class ValidityScope(BaseModel):
    """Where a claim holds; `project` never crosses projects, every other kind may."""

    model_config = ConfigDict(frozen=True)
    kind: ScopeKind = "project"
    name: str | None = None  # language / crate name / domain tag / workaround ref
    version: str | None = None  # crate version
    expires: datetime | None = None  # workaround expiry

    @property
    def transferable(self) -> bool:
        return self.kind not in ("project", "legacy")

    @property
    def decay_rate(self) -> float:
        return DECAY_RATES[self.kind]

    @classmethod
    def parse(cls, text: str | None) -> "ValidityScope":
        """`project`, `forever`, `language:rust`, `crate:name@1.2`, `domain:tag`, `workaround:ref[@YYYY-MM-DD]`."""
        if text is None or not str(text).strip():
            return cls()
        raw = str(text).strip()
        kind, _, rest = raw.partition(":")
        kind = kind.strip().lower()
        rest = rest.strip()
        if kind in ("project", "forever", "legacy"):
            return cls(kind=kind)  # type: ignore[arg-type]
        if kind not in ("language", "crate", "domain", "workaround") or not rest:
            raise InvalidInput(
                f"bad validity scope {raw!r}: use project, forever, language:NAME, "
                "crate:NAME@VERSION, domain:TAG or workaround:REF[@YYYY-MM-DD]"
            )
        if kind == "crate":
            name, _, version = rest.partition("@")
            return cls(kind="crate", name=name, version=version or None)
        if kind == "workaround":
            ref, _, exp = rest.rpartition("@") if re.search(r"@\d{4}-\d{2}-\d{2}", rest) else (rest, "", "")
            expires = datetime.fromisoformat(exp).replace(tzinfo=timezone.utc) if exp else None
            return cls(kind="workaround", name=ref, expires=expires)
        return cls(kind=kind, name=rest.lower())  # type: ignore[arg-type]

    def __str__(self) -> str:
        if self.kind == "crate":
            return f"crate:{self.name}@{self.version}" if self.version else f"crate:{self.name}"
        if self.kind == "workaround" and self.expires:
            return f"workaround:{self.name}@{self.expires.date().isoformat()}"
        return f"{self.kind}:{self.name}" if self.name else self.kind


class Intent(BaseModel):
    raw_prompt: str = ""
    extracted: str = ""
    task_type: str = "other"
    domains: list[str] = Field(default_factory=list)
    claim: str | None = None
    falsifiability: float | None = None
    category: str | None = None
    scope: ValidityScope = Field(default_factory=ValidityScope)


class ErrorRecord(BaseModel):
    message: str
    fingerprint: str = ""
    resolved: bool = False
    resolution: str | None = None


class TestRun(BaseModel):
    __test__ = False  # not a pytest class
    command: str
    passed: bool
    summary: str = ""


class Context(BaseModel):
    files_read: list[str] = Field(default_factory=list)
    files_modified: list[str] = Field(default_factory=list)
    symbols_modified: list[str] = Field(default_factory=list)  # the definitions its edits touched (core/symbols.py)
    tools: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    errors: list[ErrorRecord] = Field(default_factory=list)


class Outcome(BaseModel):
    status: str = "unknown"
    tests_before: list[TestRun] = Field(default_factory=list)
    tests_after: list[TestRun] = Field(default_factory=list)
    commit: str | None = None
    verification: VerificationState = VerificationState.UNTESTED
    evidence: list[str] = Field(default_factory=list)

    @field_validator("status")
    @classmethod
    def _status(cls, v: str) -> str:
        v = (v or "unknown").strip().lower()
        if v not in OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
        return v


class UtilityState(BaseModel):
    """Cached view of the evidence rows; `value` is what ranking reads (Beta posterior mean)."""

    value: float = 0.5
    retrieval_count: int = 0
    helpful: float = 0.0  # weighted evidence (explicit feedback counts 1.0 each)
    unhelpful: float = 0.0
    last_useful_at: datetime | None = None


class Link(BaseModel):
    episode_id: str
    relationship: str  # continuation | same_project_window | consolidated | ...


class Source(BaseModel):
    transcript_path: str | None = None
    record_uuids: list[str] = Field(default_factory=list)
    origin: str = "manual"  # manual | transcript | mcp | import
    author: str | None = None  # the teammate (team database role) whose machine captured it; None: this machine


EMBED_CHARS = 800
# Fields we generate ourselves (ids, timestamps, fingerprints, record uuids): never user text, never redacted.
OWN_FIELDS = frozenset(
    {
        "id",
        "created_at",
        "updated_at",
        "project_id",
        "session_id",
        "record_uuids",
        "fingerprint",
        "last_useful_at",
        "utility",
        "verification",
        "status",
        "task_type",
        "origin",
        "author",
    }
)


class Episode(BaseModel):
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    project_id: str
    project_name: str
    project_path: str | None = None
    session_id: str | None = None
    summary: str
    intent: Intent = Field(default_factory=Intent)
    context: Context = Field(default_factory=Context)
    outcome: Outcome = Field(default_factory=Outcome)
    utility: UtilityState = Field(default_factory=UtilityState)
    tags: list[str] = Field(default_factory=list)
    related: list[Link] = Field(default_factory=list)
    alternatives_considered: list[str] = Field(default_factory=list)
    source: Source = Field(default_factory=Source)

    @field_validator("summary")
    @classmethod
    def _summary(cls, v: str) -> str:
        if not v or not v.strip():
            raise ValueError("summary must not be empty")
        return v.strip()

    @property
    def scope(self) -> ValidityScope:
        return self.intent.scope

    def redacted(self) -> "Episode":
        """The same episode with the secrets in every text field replaced: what each way into memory stores."""
        return Episode.model_validate(redact_data(self.model_dump(mode="json"), skip=OWN_FIELDS))

    def search_text(self) -> str:
        """Everything keyword search should find this episode by."""
        parts = [
            self.summary,
            self.intent.raw_prompt,
            self.intent.extracted,
            self.intent.claim or "",
            " ".join(self.intent.domains),
            " ".join(self.tags),
            " ".join(self.context.files_modified),
            " ".join(self.context.files_read[:30]),
            " ".join(self.context.commands[:30]),
            " ".join(e.message[:500] for e in self.context.errors[:20]),
            " ".join(e.resolution or "" for e in self.context.errors[:20]),
            " ".join(self.alternatives_considered),
        ]
        return "\n".join(p for p in parts if p)

    def embed_text(self) -> str:
        """What a later question should match: the intent (unless the summary already opens with it) and what was
        done, then the errors and files, each once. Capped at EMBED_CHARS: the model's cost grows with every token
        (it reads at most 512), while paths and long error text are matched exactly by keyword search anyway."""
        intent = self.intent.extracted or self.intent.raw_prompt[:500]
        parts = [
            intent if intent[:80] not in self.summary else "",
            self.summary,
            " ".join(e.message[:200] for e in self.context.errors[:3]),
            " ".join(self.context.files_modified[:10]),
        ]
        return "\n".join(p for p in parts if p)[:EMBED_CHARS]
