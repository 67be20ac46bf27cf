"""A stable fingerprint of an error message, so the same failure seen in two sessions (other paths, line numbers,
addresses, timings) is recognised as one. Standard library only."""

from __future__ import annotations

import hashlib
import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I)
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+([\w.-]+)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_QUOTED_NUMBER_UNITS = re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|seconds|kb|mb|gb|bytes)\b", re.I)
_SPACE = re.compile(r"\s+")


def normalize(message: str) -> str:
    """The message with what varies between occurrences replaced: paths by their file name, numbers, ids."""
    text = _ANSI.sub("", message)
    text = _UUID.sub("<uuid>", text)
    text = _HEX.sub("<hex>", text)
    text = _PATH.sub(r"\1", text)
    text = _QUOTED_NUMBER_UNITS.sub("<n>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACE.sub(" ", text).strip().lower()


def fingerprint(message: str) -> str:
    """16 hex characters; equal for messages that differ only in paths, numbers, addresses and spacing."""
    return hashlib.sha256(normalize(message).encode("utf-8", "surrogatepass")).hexdigest()[:16]
