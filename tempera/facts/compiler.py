"""Or-free conjunctions of clauses -> one SQL SELECT over `fact_datoms`.

Every variable is bound to a `Term`: a pair of SQL expressions for its type tag and its value. Patterns add a
`fact_datoms` alias (so SQLite's (e,a) and (a,v) indexes do the joins; a constant attribute that a view serves,
such as :episode/file, reads that view instead), rule calls add a rule relation (a CTE
built by `relations.py`), expression clauses add conditions or computed terms, and `not` / `not-join` become
NOT EXISTS subqueries. Clauses are applied once their inputs are bound, so the order they are written in
does not matter; what can never be bound is reported with the clause's position.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from tempera.facts import query_ast
from tempera.facts.errors import DatalogError, Pos
from tempera.facts.normalize import expr_vars, not_needs
from tempera.facts.values import NUMERIC, REFERENCE, VT, Keyword, Value, encode, entity_type_sql

NO_CONST = object()
ARITHMETIC = {"+", "-", "*", "/"}
ORDERING = {"<": "<", ">": ">", "<=": "<=", ">=": ">="}
TYPE_TESTS = {
    "string?": {VT.STRING},
    "integer?": {VT.INT},
    "float?": {VT.FLOAT},
    "boolean?": {VT.BOOL},
    "nil?": {VT.NIL},
    "keyword?": {VT.KEYWORD},
    "uuid?": {VT.UUID},
    "instant?": {VT.INSTANT},
    "number?": set(NUMERIC),
}
STRING_TESTS = {"starts-with?", "ends-with?", "contains?", "matches?"}
COMPARABLE = (NUMERIC, frozenset({VT.STRING}), frozenset({VT.INSTANT}))  # what <, > ... may compare


@dataclass(frozen=True)
class Term:
    """A bound value in SQL: its type tag expression, its value expression, and what is known statically."""

    v: str
    t: str
    types: frozenset[int] | None = None  # the possible type tags, when known at compile time
    const: Any = NO_CONST  # the Python value, when the term is a constant


@dataclass(frozen=True)
class RelationRef:
    """A rule relation to join with: a CTE or temp table with columns t0, v0, t1, v1 ... (and p = tag)."""

    table: str
    tag: str | None = None


class Relations(Protocol):
    def relation(
        self, name: str, consts: dict[int, Value], arity: int, pos: Pos, seeds: dict[int, str] | None = None
    ) -> RelationRef: ...


@dataclass
class Context:
    """What one query compilation shares: parameters, alias numbering, time filters, rule relations."""

    as_of: int | None  # transaction number; None = current state
    valid_at: int | None  # ms since epoch; None = any valid time
    slots: Mapping[str, Value]
    relations: Relations | None = None
    params: dict[str, Any] = field(default_factory=dict)
    counter: itertools.count = field(default_factory=itertools.count)
    views: Mapping[str, str] = field(default_factory=dict)  # attribute -> subquery read instead of fact_datoms

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    def param(self, value: Any) -> str:
        key = self.name("p")
        self.params[key] = value
        return f":{key}"

    def const(self, value: Value) -> Term:
        tag, stored = encode(value)
        return Term(self.param(stored), str(int(tag)), frozenset({int(tag)}), value)

    def slot(self, slot: query_ast.Slot, pos: Pos) -> Value:
        if slot.name not in self.slots:
            raise DatalogError(f"bind slot ${slot.name} has no value; pass it in the query parameters", pos)
        return self.slots[slot.name]

    def visible(self, alias: str) -> list[str]:
        """The datoms of `alias` that the query may see, in transaction time and in valid time."""
        if self.as_of is None:
            conds = [f"{alias}.retracted_tx IS NULL"]
        else:
            conds = [
                f"{alias}.tx <= {self.as_of:d}",
                f"({alias}.retracted_tx IS NULL OR {alias}.retracted_tx > {self.as_of:d})",
            ]
        if self.valid_at is not None:
            conds += [
                f"{alias}.valid_from <= {self.valid_at:d}",
                f"({alias}.valid_to IS NULL OR {alias}.valid_to > {self.valid_at:d})",
            ]
        return conds


@dataclass
class Scope:
    """A conjunction being compiled: its FROM items, WHERE conditions and variable bindings."""

    bindings: dict[str, Term]
    froms: list[str] = field(default_factory=list)
    conds: list[str] = field(default_factory=list)
    drive_first: bool = False  # keep froms[0] as the outermost loop (the delta of a recursive step)

    def select(self, columns: list[str], *, distinct: bool = False) -> str:
        sql = f"SELECT {'DISTINCT ' if distinct else ''}{', '.join(columns) or '1'}"
        if self.froms:
            first, rest = self.froms[0], ", ".join(self.froms[1:])
            joined = f"{first} CROSS JOIN {rest}" if self.drive_first and rest else ", ".join(self.froms)
            sql += " FROM " + joined
        if self.conds:
            sql += " WHERE " + " AND ".join(self.conds)
        return sql


def compile_conjunction(
    ctx: Context,
    clauses: tuple[query_ast.Clause, ...],
    bindings: Mapping[str, Term],
    froms: list[str] | None = None,
    *,
    drive_first: bool = False,
    sideways: bool = False,
) -> Scope:
    """One or-free conjunction -> a Scope; `bindings` are the variables already bound outside.

    With `drive_first`, the first clause's table is forced to be the outer loop: SQLite cannot estimate the
    size of a recursive CTE's queue (one row per step) and otherwise scans a whole index once per step.
    With `sideways` (only for a self-contained scope, not a correlated subquery), a rule call whose argument
    is bound by a pattern gets the values that pattern allows as a seed, so a recursive rule starts from
    them instead of computing its whole relation.
    """
    scope = Scope(dict(bindings), list(froms or []), drive_first=drive_first)
    if drive_first:  # the driving rule call takes the first FROM place
        assert isinstance(clauses[0], query_ast.RuleCall)
        _rule_call(ctx, scope, clauses[0], sideways=False)
        clauses = clauses[1:]
    pending: list[query_ast.Clause] = []
    calls: list[query_ast.RuleCall] = []
    for clause in clauses:  # patterns first, so that rule calls can be seeded with what they allow
        if isinstance(clause, query_ast.Pattern):
            _pattern(ctx, scope, clause)
        elif isinstance(clause, query_ast.RuleCall):
            calls.append(clause)
        else:
            pending.append(clause)
    for call in calls:
        _rule_call(ctx, scope, call, sideways=sideways)
    while pending:
        ready = [c for c in pending if not _missing(c, scope)]
        if not ready:
            _report_unbound(pending[0], scope)
        for clause in ready:
            _apply(ctx, scope, clause)
            pending.remove(clause)
    return scope


def _missing(clause: query_ast.Clause, scope: Scope) -> set[str]:
    if isinstance(clause, (query_ast.Predicate, query_ast.Binding)):
        needed = expr_vars(clause.call)
    elif isinstance(clause, query_ast.Not):
        needed = not_needs(clause)
    elif isinstance(clause, query_ast.NotJoin):
        needed = {v.name for v in clause.vars}
    else:
        raise AssertionError(f"or must be expanded before compiling: {clause}")
    return needed - scope.bindings.keys()


def _report_unbound(clause: query_ast.Clause, scope: Scope) -> None:
    name = sorted(_missing(clause, scope))[0]
    if isinstance(clause, query_ast.Not):
        raise DatalogError(
            f"variable {name} in (not ...) is not bound by any other clause; "
            f"use (not-join [...] ...) for variables local to the negation",
            clause.pos,
        )
    if isinstance(clause, query_ast.NotJoin):
        raise DatalogError(f"join variable {name} of (not-join ...) is not bound by any other clause", clause.pos)
    raise DatalogError(f"variable {name} in an expression clause is not bound by any pattern", clause.pos)


def _apply(ctx: Context, scope: Scope, clause: query_ast.Clause) -> None:
    if isinstance(clause, query_ast.Predicate):
        scope.conds.append(condition(ctx, scope, clause.call))
    elif isinstance(clause, query_ast.Binding):
        term = expression(ctx, scope, clause.call, clause.pos)
        if clause.out.name in scope.bindings:
            scope.conds.append(equal(term, scope.bindings[clause.out.name]))
        else:
            scope.bindings[clause.out.name] = term
            if term.const is NO_CONST:
                scope.conds.append(f"{term.v} IS NOT NULL")  # a type mismatch or division by zero drops the row
    elif isinstance(clause, query_ast.Not):
        inner = compile_conjunction(ctx, clause.body, scope.bindings)
        scope.conds.append(f"NOT EXISTS ({inner.select([])})")
    else:
        assert isinstance(clause, query_ast.NotJoin)
        shared = {v.name: scope.bindings[v.name] for v in clause.vars}
        inner = compile_conjunction(ctx, clause.body, shared)
        scope.conds.append(f"NOT EXISTS ({inner.select([])})")


# -- patterns and rule calls -------------------------------------------------------------------------------------


def _pattern(ctx: Context, scope: Scope, pattern: query_ast.Pattern) -> None:
    d = ctx.name("d")
    scope.froms.append(f"{_source(ctx, pattern)} {d}")
    scope.conds.extend(ctx.visible(d))
    columns = (
        (pattern.e, Term(f"{d}.e", entity_type_sql(f"{d}.e"), REFERENCE), "entity"),
        (pattern.a, Term(f"{d}.a", str(int(VT.KEYWORD)), frozenset({VT.KEYWORD})), "attribute"),
        (pattern.v, Term(f"{d}.v", f"{d}.vt"), "value"),
    )
    for term, column, position in columns:
        if isinstance(term, (query_ast.Const, query_ast.Slot)) and position != "value":
            value = term.value if isinstance(term, query_ast.Const) else ctx.slot(term, pattern.pos)
            _check_position(value, position, pattern.pos)
        _unify(ctx, scope, term, column, pattern.pos)


def _source(ctx: Context, pattern: query_ast.Pattern) -> str:
    """What a pattern reads: `fact_datoms`, or the read-only view (a subquery with fact_datoms' columns) that
    serves its constant attribute, such as the episode attributes of `episode_datoms.py`."""
    if isinstance(pattern.a, (query_ast.Const, query_ast.Slot)):
        value = pattern.a.value if isinstance(pattern.a, query_ast.Const) else ctx.slot(pattern.a, pattern.pos)
        if isinstance(value, Keyword):
            return ctx.views.get(str.__str__(value), "fact_datoms")
    return "fact_datoms"


def _check_position(value: Value, position: str, pos: Pos) -> None:
    if position == "entity":
        if not isinstance(value, (Keyword, uuid.UUID)):
            raise DatalogError(f"the entity position takes a keyword, a #uuid or a variable, not {value!r}", pos)
    elif not isinstance(value, Keyword):
        raise DatalogError(f"the attribute position takes a keyword or a variable, not {value!r}", pos)


def _unify(ctx: Context, scope: Scope, term: query_ast.Term, column: Term, pos: Pos) -> None:
    """Make `column` agree with the pattern term: bind a new variable, or add an equality condition."""
    if isinstance(term, query_ast.Wildcard):
        return
    if isinstance(term, query_ast.Var):
        bound = scope.bindings.get(term.name)
        if bound is None:
            scope.bindings[term.name] = column
        else:
            scope.conds.append(equal(column, bound))
        return
    value = term.value if isinstance(term, query_ast.Const) else ctx.slot(term, pos)
    scope.conds.append(equal(column, ctx.const(value)))


def _rule_call(ctx: Context, scope: Scope, call: query_ast.RuleCall, *, sideways: bool) -> None:
    consts: dict[int, Value] = {}
    seeds: dict[int, str] = {}
    for i, arg in enumerate(call.args):
        if isinstance(arg, query_ast.Const):
            consts[i] = arg.value
        elif isinstance(arg, query_ast.Slot):
            consts[i] = ctx.slot(arg, call.pos)
        elif isinstance(arg, query_ast.Var) and arg.name in scope.bindings:
            term = scope.bindings[arg.name]
            if term.const is not NO_CONST:
                consts[i] = term.const
            elif sideways:
                seeds[i] = scope.select([f"{term.t} AS t0", f"{term.v} AS v0"], distinct=True)
    assert ctx.relations is not None
    ref = ctx.relations.relation(call.name, consts, len(call.args), call.pos, seeds)
    r = ctx.name("r")
    scope.froms.append(f"{ref.table} {r}")
    if ref.tag is not None:
        scope.conds.append(f"{r}.p = {ctx.param(ref.tag)}")
    for i, arg in enumerate(call.args):
        _unify(ctx, scope, arg, Term(f"{r}.v{i}", f"{r}.t{i}"), call.pos)


# -- equality and expressions ------------------------------------------------------------------------------------


def equal(a: Term, b: Term) -> str:
    """Typed equality: the integer 1, the float 1.0 and the string "1" are three different values."""
    if a.types is not None and b.types is not None:
        if not a.types & b.types:
            return "0"
        if (a.types | b.types) <= REFERENCE or (len(a.types) == 1 and a.types == b.types):
            return f"{a.v} = {b.v}"  # keyword and UUID texts never collide: a keyword starts with ':'
    for known, other in ((a, b), (b, a)):
        if known.types is not None and known.types <= REFERENCE and other.types is None:
            return f"({known.v} = {other.v} AND {_type_in(other, known.types)})"
    return f"({a.v} = {b.v} AND {a.t} = {b.t})"


def _type_in(term: Term, types: frozenset[int] | set[int]) -> str:
    tags = sorted(int(t) for t in types)
    return f"{term.t} = {tags[0]}" if len(tags) == 1 else f"{term.t} IN ({', '.join(map(str, tags))})"


def _guard(term: Term, types: frozenset[int]) -> str | None:
    """A condition that the term has one of `types`, or None when that is already known."""
    if term.types is not None and term.types <= types:
        return None
    if term.types is not None and not term.types & types:
        return "0"
    return _type_in(term, types)


def _guarded(guards: list[str | None], sql: str) -> str:
    real = [g for g in guards if g is not None]
    return f"({' AND '.join(real + [sql])})" if real else f"({sql})"


def expression(ctx: Context, scope: Scope, expr: query_ast.Expr, pos: Pos) -> Term:
    """An expression's value as a Term; an invalid operation (type mismatch, x/0) gives SQL NULL."""
    if isinstance(expr, query_ast.Var):
        return scope.bindings[expr.name]
    if isinstance(expr, query_ast.Const):
        return ctx.const(expr.value)
    if isinstance(expr, query_ast.Slot):
        return ctx.const(ctx.slot(expr, pos))
    if expr.fn in ARITHMETIC:
        return _arithmetic(ctx, scope, expr)
    cond = condition(ctx, scope, expr)
    v = f"(CASE WHEN {cond} THEN 1 ELSE 0 END)"
    return Term(v, str(int(VT.BOOL)), frozenset({VT.BOOL}))


def _arithmetic(ctx: Context, scope: Scope, call: query_ast.Call) -> Term:
    args = [expression(ctx, scope, a, call.pos) for a in call.args]
    if not args or (len(args) == 1 and call.fn != "-"):
        raise DatalogError(f"({call.fn} ...) needs at least two arguments", call.pos)
    if len(args) == 1:
        args = [ctx.const(0), args[0]]
    result = args[0]
    for operand in args[1:]:
        guards = [_guard(result, NUMERIC), _guard(operand, NUMERIC)]
        real = [g for g in guards if g is not None]
        v = f"({result.v} {call.fn} {operand.v})"
        if real:
            v = f"(CASE WHEN {' AND '.join(real)} THEN {v[1:-1]} END)"
        # SQLite keeps integer arithmetic integer (truncating division) and promotes to REAL when a float is
        # involved, exactly the dialect's rule; the storage class then tells the type.
        result = Term(v, f"(CASE typeof({v}) WHEN 'integer' THEN {VT.INT:d} ELSE {VT.FLOAT:d} END)", NUMERIC)
    return result


def condition(ctx: Context, scope: Scope, call: query_ast.Call) -> str:
    """A predicate call -> SQL that is true only when the arguments have fitting types and the test holds."""
    fn = call.fn
    if fn in ARITHMETIC:
        raise DatalogError(f"({fn} ...) computes a value; bind it as [({fn} ...) ?result]", call.pos)
    args = [expression(ctx, scope, a, call.pos) for a in call.args]
    if fn in TYPE_TESTS:
        _arity(call, args, 1)
        return f"({_type_in(args[0], TYPE_TESTS[fn])})"
    if fn in ("=", "!="):
        _arity(call, args, 2)
        eq = equal(args[0], args[1])
        return eq if fn == "=" else f"(NOT {eq})"
    if fn in ORDERING:
        _arity(call, args, 2)
        a, b = args
        parts = [
            _guarded([_guard(a, kind), _guard(b, kind)], f"{a.v} {ORDERING[fn]} {b.v}")
            for kind in COMPARABLE
            if _guard(a, kind) != "0" and _guard(b, kind) != "0"
        ]
        return "(" + " OR ".join(parts) + ")" if parts else "0"
    if fn in STRING_TESTS:
        _arity(call, args, 2)
        s, pattern = args
        test = {
            "starts-with?": f"instr({s.v}, {pattern.v}) = 1",
            "ends-with?": f"length({pattern.v}) <= length({s.v}) AND "
            f"substr({s.v}, length({s.v}) - length({pattern.v}) + 1) = {pattern.v}",
            "contains?": f"instr({s.v}, {pattern.v}) > 0",
            "matches?": f"tempera_regexp({pattern.v}, {s.v})",
        }[fn]
        strings = frozenset({VT.STRING})
        return _guarded([_guard(s, strings), _guard(pattern, strings)], test)
    raise DatalogError(f"unknown function {fn}", call.pos)


def _arity(call: query_ast.Call, args: list[Term], n: int) -> None:
    if len(args) != n:
        raise DatalogError(f"({call.fn} ...) takes {n} argument{'s' if n > 1 else ''}, got {len(args)}", call.pos)
