"""Clause analysis shared by the compiler and the rule machinery.

`expand` rewrites a body with `or` / `or-join` into a union of or-free conjunctions (disjunctive normal form):
each conjunction then compiles to one plain SQL SELECT, and the union of them is the answer. Private variables
of an or-join branch are renamed so that they cannot meet a variable of the same name elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from itertools import count
from typing import Any

from tempera.facts import query_ast
from tempera.facts.errors import DatalogError

PRIVATE_MARK = "#"  # cannot occur in a user's variable name, so renamed variables never clash


def expr_vars(expr: query_ast.Expr) -> set[str]:
    if isinstance(expr, query_ast.Var):
        return {expr.name}
    if isinstance(expr, query_ast.Call):
        return set().union(*(expr_vars(a) for a in expr.args)) if expr.args else set()
    return set()


def term_vars(terms: tuple[query_ast.Term, ...]) -> set[str]:
    return {t.name for t in terms if isinstance(t, query_ast.Var)}


def bound_vars(clause: query_ast.Clause) -> set[str]:
    """Variables that the clause can bind by itself (not the ones it only reads)."""
    if isinstance(clause, query_ast.Pattern):
        return term_vars((clause.e, clause.a, clause.v))
    if isinstance(clause, query_ast.RuleCall):
        return term_vars(clause.args)
    if isinstance(clause, query_ast.Binding):
        return {clause.out.name}
    if isinstance(clause, (query_ast.Or, query_ast.OrJoin)):
        per_branch = [conj_bound_vars(b) for b in clause.branches]
        common = set.intersection(*per_branch) if per_branch else set()
        return common if isinstance(clause, query_ast.Or) else common & {v.name for v in clause.vars}
    return set()


def conj_bound_vars(clauses: tuple[query_ast.Clause, ...]) -> set[str]:
    return set().union(*(bound_vars(c) for c in clauses)) if clauses else set()


def mentioned_vars(clause: query_ast.Clause) -> set[str]:
    """Every variable the clause refers to that the surrounding scope can see."""
    if isinstance(clause, (query_ast.Pattern, query_ast.RuleCall)):
        return bound_vars(clause)
    if isinstance(clause, query_ast.Predicate):
        return expr_vars(clause.call)
    if isinstance(clause, query_ast.Binding):
        return expr_vars(clause.call) | {clause.out.name}
    if isinstance(clause, query_ast.Not):
        return set().union(*(mentioned_vars(c) for c in clause.body))
    if isinstance(clause, (query_ast.NotJoin, query_ast.OrJoin)):
        return {v.name for v in clause.vars}
    assert isinstance(clause, query_ast.Or)
    return set().union(*(mentioned_vars(c) for b in clause.branches for c in b))


def not_needs(clause: query_ast.Not) -> set[str]:
    """What a `not` needs from outside: all its variables except those its own expression clauses bind."""
    local = {c.out.name for c in clause.body if isinstance(c, query_ast.Binding)}
    return mentioned_vars(clause) - local


def rule_calls(clause: query_ast.Clause, negative: bool = False) -> Iterator[tuple[query_ast.RuleCall, bool]]:
    """Every rule call inside the clause, with whether it sits under negation."""
    if isinstance(clause, query_ast.RuleCall):
        yield clause, negative
    elif isinstance(clause, (query_ast.Not, query_ast.NotJoin)):
        for c in clause.body:
            yield from rule_calls(c, True)
    elif isinstance(clause, (query_ast.Or, query_ast.OrJoin)):
        for branch in clause.branches:
            for c in branch:
                yield from rule_calls(c, negative)


def expand(
    clauses: tuple[query_ast.Clause, ...], outer: set[str], fresh: Iterator[int] | None = None
) -> list[tuple[query_ast.Clause, ...]]:
    """Distribute or / or-join over the conjunction: a list of or-free conjunctions with the same answers."""
    fresh = fresh or count(1)
    result: list[tuple[query_ast.Clause, ...]] = [()]
    for clause in clauses:
        if isinstance(clause, (query_ast.Or, query_ast.OrJoin)):
            around = outer | conj_bound_vars(tuple(c for c in clauses if c is not clause))
            alternatives = _or_alternatives(clause, around, fresh)
        else:
            alternatives = [(clause,)]
        result = [done + alt for done in result for alt in alternatives]
    return result


def _or_alternatives(
    clause: query_ast.Or | query_ast.OrJoin, around: set[str], fresh: Iterator[int]
) -> list[tuple[query_ast.Clause, ...]]:
    alternatives: list[tuple[query_ast.Clause, ...]] = []
    if isinstance(clause, query_ast.Or):
        introduced = [conj_bound_vars(b) - around for b in clause.branches]
        if any(vars_ != introduced[0] for vars_ in introduced):
            shown = " vs ".join("{" + ", ".join(sorted(v)) + "}" for v in introduced)
            raise DatalogError(
                f"all branches of (or ...) must introduce the same new variables ({shown}); "
                f"use or-join to keep branch variables private",
                clause.pos,
            )
        for branch in clause.branches:
            alternatives.extend(expand(branch, around, fresh))
        return alternatives
    joined = {v.name for v in clause.vars}
    for branch in clause.branches:
        suffix = f"{PRIVATE_MARK}{next(fresh)}"
        private = set().union(*(mentioned_vars(c) for c in branch)) - joined
        renamed = substitute(branch, {name: query_ast.Var(name + suffix) for name in private})
        alternatives.extend(expand(renamed, around | joined, fresh))
    return alternatives


def substitute(
    clauses: tuple[query_ast.Clause, ...], mapping: Mapping[str, query_ast.Var | query_ast.Const]
) -> tuple[query_ast.Clause, ...]:
    """Replace variables by variables or constants throughout the clauses (respecting not-join scopes)."""
    return tuple(_subst_clause(c, mapping) for c in clauses)


def _subst_clause(clause: query_ast.Clause, mapping: Mapping[str, query_ast.Var | query_ast.Const]) -> query_ast.Clause:
    if isinstance(clause, query_ast.Pattern):
        return replace(
            clause, e=_subst_term(clause.e, mapping), a=_subst_term(clause.a, mapping), v=_subst_term(clause.v, mapping)
        )
    if isinstance(clause, query_ast.RuleCall):
        return replace(clause, args=tuple(_subst_term(a, mapping) for a in clause.args))
    if isinstance(clause, query_ast.Predicate):
        return replace(clause, call=_subst_expr(clause.call, mapping))
    if isinstance(clause, query_ast.Binding):
        call = _subst_expr(clause.call, mapping)
        out = mapping.get(clause.out.name, clause.out)
        if isinstance(out, query_ast.Const):  # the result is now known: check it instead of binding it
            return query_ast.Predicate(query_ast.Call("=", (call, out), clause.pos), clause.pos)
        return query_ast.Binding(call, out, clause.pos)
    if isinstance(clause, query_ast.Not):
        return replace(clause, body=substitute(clause.body, mapping))
    if isinstance(clause, query_ast.Or):
        return replace(clause, branches=tuple(substitute(b, mapping) for b in clause.branches))
    assert isinstance(clause, (query_ast.NotJoin, query_ast.OrJoin))
    # only the join variables are shared with the outside; every other variable inside is local
    inner = {v.name: mapping[v.name] for v in clause.vars if v.name in mapping}
    kept = tuple(v for v in (inner.get(v.name, v) for v in clause.vars) if isinstance(v, query_ast.Var))
    if isinstance(clause, query_ast.NotJoin):
        return query_ast.NotJoin(kept, substitute(clause.body, inner), clause.pos)
    return query_ast.OrJoin(kept, tuple(substitute(b, inner) for b in clause.branches), clause.pos)


def _subst_term(term: Any, mapping: Mapping[str, query_ast.Var | query_ast.Const]) -> Any:
    return mapping.get(term.name, term) if isinstance(term, query_ast.Var) else term


def _subst_expr(expr: query_ast.Expr, mapping: Mapping[str, query_ast.Var | query_ast.Const]) -> query_ast.Expr:
    if isinstance(expr, query_ast.Call):
        return replace(expr, args=tuple(_subst_expr(a, mapping) for a in expr.args))
    return _subst_term(expr, mapping)
