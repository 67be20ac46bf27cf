"""Change a JSON object file member by member and leave every other byte of it as it was.

~/.claude.json holds all of Claude Code's state (account, per-project history, caches). Serialising it again would
change its spacing, escapes and number forms, and those bytes are not ours to change. So `patch` compares the old
and new value of a member, descends into objects, and splices only the members that differ, found with the stdlib
decoder. New text uses the file's own indent, separators and line endings.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from tempera.core.errors import InvalidInput

EMPTY = "{}\n"  # a missing file reads as this; a new file is written in its style (2-space indent)


class Absent:
    """The value of a member that is not there; JSON null is a value, so None cannot say this."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = Absent()
KeyPath = tuple[str, ...]  # keys from the top-level object down to a member

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


@dataclass(frozen=True)
class _Member:
    key: str
    start: int  # the key's opening quote
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class _Style:
    newline: str
    indent: str | None  # one level of indentation; None: the object is written on one line
    member_indent: str  # what stands before each member on its line
    close_indent: str  # what stands before the closing brace on its line
    key_sep: str
    item_sep: str


@dataclass(frozen=True)
class _Object:
    open: int  # the `{`
    close: int  # the `}`
    members: tuple[_Member, ...]
    style: _Style


def json_type(value: object) -> str:
    """A value's JSON type name, for error messages about a file's shape."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def object_copy(value: object, name: str) -> dict[str, Any]:
    """A deep copy of a member's object value to edit ({} when ABSENT); any other JSON type is refused."""
    if value is ABSENT:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"`{name}` must be an object, not {json_type(value)}")
    return copy.deepcopy(value)


def load_object(text: str, where: str) -> dict[str, Any]:
    """Parse text that must hold one JSON object; the error names `where` and says that nothing was written."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "fix it by hand, nothing was changed"
        ) from exc
    if not isinstance(doc, dict):
        raise InvalidInput(f"{where} must hold a JSON object, not {json_type(doc)}; nothing was changed")
    return doc


def patch(text: str, path: KeyPath, old: Any, new: Any) -> str:
    """Text with the member at `path` changed from `old` to `new` (either may be ABSENT). Objects on both sides
    are patched member by member, so unchanged members keep their bytes; anything else is written anew."""
    if new == old:
        return text
    if new is ABSENT:
        return _remove(text, path)
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return _set(text, path, new)
    for key in [k for k in old if k not in new]:
        text = _remove(text, (*path, key))
    for key, value in new.items():
        text = patch(text, (*path, key), old.get(key, ABSENT), value)
    return text


def _set(text: str, path: KeyPath, value: Any) -> str:
    """Set an existing member in place, or add a new one after the object's last member."""
    obj = _object(text, path[:-1])
    style = obj.style
    body = _dump(value, style)
    at = _find(obj, path[-1])
    if at is not None:
        member = obj.members[at]
        return text[: member.value_start] + body + text[member.value_end :]
    new = json.dumps(path[-1], ensure_ascii=False) + style.key_sep + body
    if not obj.members:
        if style.indent is None:
            return text[: obj.open + 1] + new + text[obj.close :]
        return (
            text[: obj.open + 1]
            + style.newline
            + style.member_indent
            + new
            + style.newline
            + style.close_indent
            + text[obj.close :]
        )
    end = obj.members[-1].value_end
    sep = style.item_sep if style.indent is None else "," + style.newline + style.member_indent
    return text[:end] + sep + new + text[end:]


def _remove(text: str, path: KeyPath) -> str:
    """Drop a member: the exact inverse of adding it at the end with `_set`."""
    obj = _object(text, path[:-1])
    at = _find(obj, path[-1])
    members = obj.members
    if at is None:
        return text
    if len(members) == 1:
        return text[: obj.open + 1] + text[obj.close :]
    if at > 0:
        return text[: members[at - 1].value_end] + text[members[at].value_end :]
    return text[: members[0].start] + text[members[1].start :]


def _object(text: str, path: KeyPath) -> _Object:
    """The object at `path`, which must exist (patch only descends into members present on both sides)."""
    obj = _scan(text, _skip_ws(text, 0), None)
    for key in path:
        at = _find(obj, key)
        assert at is not None, path
        obj = _scan(text, obj.members[at].value_start, obj.style)
    return obj


def _scan(text: str, start: int, parent: _Style | None) -> _Object:
    """Member spans of the object whose `{` is at start. Only called on text json.loads accepted: no error paths."""
    i = _skip_ws(text, start + 1)
    members: list[_Member] = []
    while text[i] != "}":
        key, key_end = _DECODER.raw_decode(text, i)
        value_start = _skip_ws(text, _skip_ws(text, key_end) + 1)  # past the colon
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, i, key_end, value_start, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == ",":
            i = _skip_ws(text, i + 1)
    return _Object(start, i, tuple(members), _style(text, start, i, members, parent))


def _style(text: str, start: int, close: int, members: list[_Member], parent: _Style | None) -> _Style:
    """How this object is written; an empty one is written one level deeper than its parent."""
    if not members:
        if parent is None:
            return _Style("\r\n" if "\r\n" in text else "\n", "  ", "  ", "", ": ", ", ")
        if parent.indent is None:
            return parent
        return _Style(
            parent.newline,
            parent.indent,
            parent.member_indent + parent.indent,
            parent.member_indent,
            parent.key_sep,
            parent.item_sep,
        )
    newline = parent.newline if parent else ("\r\n" if "\r\n" in text else "\n")
    first = members[0]
    key_sep = text[first.key_end : first.value_start]
    if len(members) > 1:
        item_sep = text[first.value_end : members[1].start]
    else:
        item_sep = ", " if key_sep.endswith(" ") else ","
    lead = text[start + 1 : first.start]
    if "\n" not in lead:
        return _Style(newline, None, "", "", key_sep, item_sep)
    member_indent = lead.rsplit("\n", 1)[1]
    tail = text[members[-1].value_end : close]
    close_indent = tail.rsplit("\n", 1)[1] if "\n" in tail else ""
    indent = member_indent[len(close_indent) :] if member_indent.startswith(close_indent) else member_indent
    return _Style(newline, indent, member_indent, close_indent, key_sep, item_sep)


def _dump(value: Any, style: _Style) -> str:
    """The value as it sits at this depth (JSON strings never hold a raw newline, so the replace is safe)."""
    if style.indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(style.item_sep, style.key_sep))
    text = json.dumps(value, ensure_ascii=False, indent=style.indent, separators=(",", style.key_sep))
    return text.replace("\n", style.newline + style.member_indent)


def _find(obj: _Object, key: str) -> int | None:
    """Index of the member that holds `key`; with duplicate keys the last one, which JSON parsers honour."""
    hits = [n for n, m in enumerate(obj.members) if m.key == key]
    return hits[-1] if hits else None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i
