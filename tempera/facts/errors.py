"""Errors of the Datalog layer: each names the problem and where in the text it is."""

from __future__ import annotations

from dataclasses import dataclass

from tempera.core.errors import InvalidInput


@dataclass(frozen=True)
class Pos:
    """A 1-based line and column in the command text."""

    line: int
    col: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.col}"


class DatalogError(InvalidInput):
    """A command that is well-formed text but cannot be run: unbound variable, bad arity, unknown rule ..."""

    def __init__(self, problem: str, pos: Pos | None = None) -> None:
        self.problem = problem
        self.pos = pos
        super().__init__(f"{problem} (at {pos})" if pos else problem)


class DatalogSyntaxError(DatalogError):
    """Text that does not parse: unclosed bracket, bad keyword, unknown command or tag."""
