"""Tempera: persistent, self-improving memory for Claude Code that needs zero tool calls."""

__version__ = "0.1.0"
