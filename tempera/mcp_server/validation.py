"""Tool-error messages for bad arguments that say what to send instead.

The SDK's own message is pydantic's multi-line dump with a documentation link; an agent corrects itself faster
from one line per problem that names the argument, what was wrong, and what the schema accepts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

MAX_PROBLEMS = 5


def _shown(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def accepts(prop: Mapping[str, Any]) -> str:
    """What a JSON-schema property accepts, in words: `an integer from 1 to 200 (default 5)`."""
    if "anyOf" in prop:
        kinds = [accepts(p) for p in prop["anyOf"] if p.get("type") != "null"]
        words = " or ".join(kinds) + (", or null" if len(kinds) < len(prop["anyOf"]) else "")
    elif "enum" in prop:
        words = "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    else:
        words = _typed(prop)
    if "default" in prop:
        words += f" (default {json.dumps(prop['default'])})"
    return words


def _typed(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if kind == "string":
        low, high = prop.get("minLength", 0), prop.get("maxLength")
        size = (
            f" of {low} to {high:,} characters"
            if high and low
            else f" of at most {high:,} characters"
            if high
            else " (not empty)"
            if low
            else ""
        )
        return "a string" + size
    if kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        return "an integer" + (f" from {low} to {high}" if low is not None and high is not None else "")
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        most = f" (at most {prop['maxItems']})" if "maxItems" in prop else ""
        return f"a list of {_plural(accepts(prop.get('items', {})))}{most}"
    if kind == "object":
        return "an object"
    return "a value"


def _plural(words: str) -> str:
    return words.replace("a string", "strings", 1).replace("an integer", "integers", 1)


def _where(loc: tuple[int | str, ...]) -> str:
    head, *rest = loc or ("arguments",)
    return str(head) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest)


def explain(tool: str, exc: ValidationError, schema: Mapping[str, Any]) -> str:
    """One line per problem: the argument, what was wrong with the value sent, and what to send instead."""
    props: Mapping[str, Any] = schema.get("properties", {})
    lines = []
    for err in exc.errors()[:MAX_PROBLEMS]:
        name = str(err["loc"][0]) if err["loc"] else ""
        got = "" if err["type"] == "missing" else f" (got {_shown(err.get('input'))})"
        send = f"; send {accepts(props[name])}" if name in props else ""
        lines.append(f"`{_where(err['loc'])}`: {err['msg']}{got}{send}")
    more = exc.error_count() - MAX_PROBLEMS
    return f"{tool}: bad arguments. " + " | ".join(lines) + (f" | and {more} more" if more > 0 else "")


def signature(tool: str, schema: Mapping[str, Any]) -> str:
    """The tool's arguments in one line: `tempera_feedback(helpful: true or false, episodes: a list of ...)`."""
    required = set(schema.get("required", ()))
    parts = [
        f"{name}{'' if name in required else '?'}: {accepts(prop)}"
        for name, prop in schema.get("properties", {}).items()
    ]
    return f"{tool}({'; '.join(parts)})"
