"""Entity types of the memory graph and their attributes: the schema of Temporal Reasoning
(github.com/adityamukho/temporal_reasoning), plus what Tempera records.

An entity's type is the namespace of its keyword: `:decision/use-redis`, or the per-project
`:decision/redis.3f2a9c1b` that turnfacts.py writes, is a decision. Entities in other namespaces are free-form.
Validation looks at an entity's whole current state, so adding one attribute to an existing entity is fine as
long as the entity as a whole is valid. Reference-valued attributes (keywords, UUIDs) are graph edges such as
:depends-on or :motivated-by and are allowed on any entity.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from tempera.facts.values import Keyword, Value


def _string(value: Value) -> bool:
    return isinstance(value, str) and not isinstance(value, Keyword)


def _integer(value: Value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _time(value: Value) -> bool:
    return isinstance(value, datetime) or _string(value)


def _keyword(value: Value) -> bool:
    return isinstance(value, Keyword)


CHECKS = {"string": _string, "integer": _integer, "time": _time, "keyword": _keyword}


@dataclass(frozen=True)
class EntityType:
    name: str
    required: Mapping[str, str]  # attribute -> kind (a key of CHECKS)
    optional: Mapping[str, str] = field(default_factory=dict)

    def kind_of(self, attribute: str) -> str | None:
        return self.required.get(attribute) or self.optional.get(attribute)


STANCES = ("decision", "preference", "constraint", "dependency")  # per project, named as turnfacts.py explains
PROJECT = ":project"  # the id of the project a stance was stated in, as a string
STATED_IN = ":stated-in"  # a stance's edge to the episode (#uuid) of the turn that stated it


def project_key(project_id: str) -> str:
    """The short key of a project in stance entity names: the id's first 8 characters when it is lower-case hex
    (every id Tempera makes is), else the start of its SHA-256."""
    if not re.fullmatch(r"[0-9a-f]{8,}", project_id):
        project_id = hashlib.sha256(project_id.encode("utf-8", "surrogatepass")).hexdigest()
    return project_id[:8]


def slug(text: str) -> str:
    """The entity name of a subject: lower case words joined by '-' ("os.path" -> "os-path", "C++" -> "cpp")."""
    text = text.lower().replace("++", "pp").replace("#", "sharp")
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:60].strip("-")


def stance_entity(kind: str, subject_slug: str, project_id: str) -> Keyword:
    """A project's stance entity, `:constraint/mysql.3f2a9c1b`."""
    return Keyword(f":{kind}/{subject_slug}.{project_key(project_id)}")


def stance_subject(entity: str, *, keyed: bool) -> str:
    """The subject slug in a stance entity's name: `mysql` from `:constraint/mysql.3f2a9c1b` (`keyed`, i.e. it has
    a :project) or from a global `:constraint/mysql`."""
    name = entity.split("/", 1)[1]
    return name.rsplit(".", 1)[0] if keyed else name


_NOTE = {":rationale": "string", ":date": "time", ":alias": "string"}
# e.g. a constraint *against* MySQL, in the project whose id :project holds (none: a global stance)
_STANCE = {**_NOTE, ":subject": "string", ":polarity": "keyword", PROJECT: "string"}
_CODE = {":file": "string", ":line": "integer", ":alias": "string", ":description": "string"}

TYPES: dict[str, EntityType] = {
    t.name: t
    for t in (
        EntityType("decision", {":description": "string"}, _STANCE),
        EntityType("preference", {":description": "string"}, _STANCE),
        EntityType("constraint", {":description": "string"}, _STANCE),
        EntityType("dependency", {":description": "string"}, _STANCE),
        EntityType(
            "module", {":path": "string"}, {":description": "string", ":language": "string", ":alias": "string"}
        ),
        EntityType("file", {":path": "string"}, {":description": "string", ":language": "string", ":alias": "string"}),
        EntityType("function", {":name": "string"}, _CODE),
        EntityType("class", {":name": "string"}, _CODE),
        EntityType("interface", {":name": "string"}, _CODE),  # Go, TypeScript and Java interfaces
        EntityType("type", {":name": "string"}, _CODE),  # structs, enums, traits, type aliases
        EntityType(
            "commit",
            {":hash": "string"},
            {":author": "string", ":date": "time", ":subject": "string", ":message": "string"},
        ),
    )
}


@dataclass(frozen=True)
class Violation:
    entity: Keyword
    kind: str  # missing-required | wrong-type | unknown-attribute
    attribute: str
    detail: str
    values: tuple[Value, ...] = ()  # the offending values (none for a missing attribute)


def entity_type(entity: Keyword | uuid.UUID) -> EntityType | None:
    if not isinstance(entity, Keyword) or "/" not in entity.name:
        return None
    return TYPES.get(entity.name.split("/", 1)[0])


def validate(entity: Keyword, state: Mapping[str, Sequence[Value]]) -> list[Violation]:
    """Violations of an entity's whole current state (attribute -> its current values) against its type."""
    etype = entity_type(entity)
    if etype is None:
        return []
    out = [
        Violation(entity, "missing-required", attr, f"{etype.name} needs {attr}")
        for attr in etype.required
        if not state.get(attr)
    ]
    for attr, values in sorted(state.items()):
        kind = etype.kind_of(attr)
        if kind is None:
            plain = tuple(v for v in values if not isinstance(v, (Keyword, uuid.UUID)))
            if plain:
                out.append(Violation(entity, "unknown-attribute", attr, f"{etype.name} has no attribute {attr}", plain))
            continue
        wrong = tuple(v for v in values if not CHECKS[kind](v))
        if wrong:
            out.append(Violation(entity, "wrong-type", attr, f"{attr} of a {etype.name} must be a {kind}", wrong))
    return out
