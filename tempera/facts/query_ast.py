"""The parsed shape of Datalog commands. The parser builds these; the compiler turns them into SQL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from tempera.facts.errors import Pos


@dataclass(frozen=True)
class Var:
    name: str  # with its leading '?'


@dataclass(frozen=True)
class Wildcard:
    """`_` or a `?_name` variable: matches anything and binds nothing."""


@dataclass(frozen=True)
class Const:
    value: Any  # a fact value (see values.Value)


@dataclass(frozen=True)
class Slot:
    """A bind slot such as `$city`, filled from the query parameters."""

    name: str  # without the '$'


Term = Union[Var, Wildcard, Const, Slot]


@dataclass(frozen=True)
class Call:
    """A function application inside an expression clause, e.g. `(* ?price ?qty)`; args may nest."""

    fn: str
    args: tuple[Expr, ...]
    pos: Pos


Expr = Union[Var, Const, Slot, Call]


@dataclass(frozen=True)
class Pattern:
    e: Term
    a: Term
    v: Term
    pos: Pos


@dataclass(frozen=True)
class Predicate:
    """`[(> ?age 25)]`: keeps the rows where the call is true."""

    call: Call
    pos: Pos


@dataclass(frozen=True)
class Binding:
    """`[(* ?a 2) ?x]`: binds (or checks) ?x to the call's value."""

    call: Call
    out: Var
    pos: Pos


@dataclass(frozen=True)
class RuleCall:
    name: str
    args: tuple[Term, ...]
    pos: Pos


@dataclass(frozen=True)
class Not:
    body: tuple[Clause, ...]
    pos: Pos


@dataclass(frozen=True)
class NotJoin:
    vars: tuple[Var, ...]
    body: tuple[Clause, ...]
    pos: Pos


@dataclass(frozen=True)
class Or:
    branches: tuple[tuple[Clause, ...], ...]  # each branch is a conjunction
    pos: Pos


@dataclass(frozen=True)
class OrJoin:
    vars: tuple[Var, ...]
    branches: tuple[tuple[Clause, ...], ...]
    pos: Pos


Clause = Union[Pattern, Predicate, Binding, RuleCall, Not, NotJoin, Or, OrJoin]


@dataclass(frozen=True)
class Window:
    partition_by: tuple[Var, ...]
    order_by: tuple[tuple[Var, bool], ...]  # (variable, descending)


@dataclass(frozen=True)
class Aggregate:
    fn: str
    arg: Var | None  # None for rank, dense-rank, row-number
    over: Window | None
    text: str  # as written, e.g. "(count ?e)": the column name
    pos: Pos


FindElem = Union[Var, Aggregate]


@dataclass(frozen=True)
class AnyValidTime:
    """`:any-valid-time`: no valid-time filter at all."""


@dataclass(frozen=True)
class InScalar:
    var: Var


@dataclass(frozen=True)
class InCollection:
    """`[?x ...]`: one binding per element of the parameter."""

    var: Var


@dataclass(frozen=True)
class InTuple:
    """`[?a ?b]`: the parameter is one tuple."""

    vars: tuple[Var | Wildcard, ...]


@dataclass(frozen=True)
class InRelation:
    """`[[?a ?b]]`: the parameter is a set of tuples."""

    vars: tuple[Var | Wildcard, ...]


InSpec = Union[InScalar, InCollection, InTuple, InRelation]


@dataclass(frozen=True)
class OrderKey:
    column: int  # index into find
    descending: bool


@dataclass(frozen=True)
class Query:
    find: tuple[FindElem, ...]
    where: tuple[Clause, ...]
    pos: Pos
    with_: tuple[Var, ...] = ()
    inputs: tuple[InSpec, ...] = ()
    as_of: int | str | None = None  # tx number or ISO timestamp
    valid_at: str | AnyValidTime | None = None  # ISO date/time, any, or None = now
    order_by: tuple[OrderKey, ...] = ()
    limit: int | None = None
    max_derived_facts: int | None = None


@dataclass(frozen=True)
class Rule:
    """One clause of a rule: `(name args...)` holds when every clause of the body does."""

    name: str
    head: tuple[Term, ...]  # Var or Const
    body: tuple[Clause, ...]
    text: str  # canonical EDN of `[(head ...) body ...]`
    pos: Pos


@dataclass(frozen=True)
class FactSpec:
    e: Any
    a: Any
    v: Any
    valid_from: int | None  # ms since epoch
    valid_to: int | None
    pos: Pos


@dataclass(frozen=True)
class Transact:
    facts: tuple[FactSpec, ...]
    pos: Pos


@dataclass(frozen=True)
class Retract:
    facts: tuple[FactSpec, ...]
    pos: Pos


@dataclass(frozen=True)
class QueryCommand:
    query: Query


@dataclass(frozen=True)
class RuleCommand:
    rule: Rule


Command = Union[Transact, Retract, QueryCommand, RuleCommand]
