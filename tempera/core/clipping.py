"""Text cut to a length for a line a person or the agent reads: one home for the ellipsis rule (transcripts' quotes,
the brief, ask-backs, outcomes). Standard library only."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """The text cut to `limit` characters, an ellipsis marking the cut (no space left before it)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def squeezed(text: str, limit: int) -> str:
    """`shorten` of the text with its whitespace collapsed to single spaces: a quote on one line."""
    return shorten(" ".join(text.split()), limit)
