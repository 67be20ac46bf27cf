"""Datom values: the Python types a fact can hold and how each is stored as a (type tag, SQLite value) pair.

Every value is stored with an explicit type tag so that the string "1", the integer 1, the float 1.0 and the
keyword :a never compare equal by accident, and so that keywords come back as keywords, not strings.
"""

from __future__ import annotations

import math
import uuid
from datetime import date, datetime, timezone
from enum import IntEnum
from typing import Any

from tempera.core.errors import InvalidInput


class Keyword(str):
    """A keyword such as `:alice`. Its text includes the colon; it never equals the plain string ":alice"."""

    __slots__ = ()

    def __new__(cls, text: str) -> Keyword:
        return super().__new__(cls, text if text.startswith(":") else f":{text}")

    @property
    def name(self) -> str:
        return str.__str__(self)[1:]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keyword) and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((Keyword, str.__str__(self)))

    def __repr__(self) -> str:
        return f"Keyword({str.__repr__(self)})"


class VT(IntEnum):
    """Type tags stored in the `vt` column; the numbers are part of the database format."""

    NIL = 0
    BOOL = 1
    INT = 2
    FLOAT = 3
    STRING = 4
    KEYWORD = 5
    UUID = 6
    INSTANT = 7


NUMERIC = frozenset({VT.INT, VT.FLOAT})
REFERENCE = frozenset({VT.KEYWORD, VT.UUID})  # what may stand in entity position
NIL_SQL_VALUE = 0  # nil is stored as (0, 0) so that nil joins with nil like any other value

Value = None | bool | int | float | str | Keyword | uuid.UUID | datetime


def encode(value: Value) -> tuple[int, Any]:
    """Python value -> (type tag, SQLite value)."""
    if value is None:
        return VT.NIL, NIL_SQL_VALUE
    if isinstance(value, bool):
        return VT.BOOL, int(value)
    if isinstance(value, int):
        return VT.INT, value
    if isinstance(value, float):
        if math.isnan(value):
            raise InvalidInput("NaN cannot be stored as a fact value")
        return VT.FLOAT, value
    if isinstance(value, Keyword):
        return VT.KEYWORD, str.__str__(value)
    if isinstance(value, str):
        return VT.STRING, value
    if isinstance(value, uuid.UUID):
        return VT.UUID, str(value)
    if isinstance(value, datetime):
        return VT.INSTANT, format_instant(value)
    raise InvalidInput(f"cannot store a value of type {type(value).__name__}: {value!r}")


def decode(vt: int, v: Any) -> Value:
    """(type tag, SQLite value) -> Python value."""
    if vt == VT.NIL:
        return None
    if vt == VT.BOOL:
        return bool(v)
    if vt == VT.INT:
        return int(v)
    if vt == VT.FLOAT:
        return float(v)
    if vt == VT.STRING:
        return str(v)
    if vt == VT.KEYWORD:
        return Keyword(v)
    if vt == VT.UUID:
        return uuid.UUID(v)
    if vt == VT.INSTANT:
        return datetime.fromisoformat(v)
    raise ValueError(f"unknown value type tag {vt}")


def encode_entity(value: Value) -> str:
    """Entities are keywords or UUIDs, stored as text; a keyword starts with ':' and a UUID never does."""
    if isinstance(value, Keyword):
        return str.__str__(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise InvalidInput(f"an entity must be a keyword or a #uuid, not {value!r}")


def decode_entity(text: str) -> Keyword | uuid.UUID:
    return Keyword(text) if text.startswith(":") else uuid.UUID(text)


def entity_type_sql(expr: str) -> str:
    """SQL giving the type tag of a stored entity text."""
    return f"(CASE WHEN substr({expr}, 1, 1) = ':' THEN {VT.KEYWORD:d} ELSE {VT.UUID:d} END)"


def format_instant(value: datetime) -> str:
    """Fixed-width UTC text, so that instants sort and compare correctly as text."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def parse_time(text: str) -> datetime:
    """ISO date or date-time (Z or offset; naive means UTC) -> aware datetime."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())
        except ValueError:
            raise InvalidInput(f"not an ISO date or date-time: {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def to_ms(moment: datetime) -> int:
    """Aware datetime -> integer milliseconds since the epoch (how valid and transaction times are stored)."""
    return int(moment.timestamp() * 1000)


def ms_to_iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
