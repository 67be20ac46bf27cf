"""Rules -> SQL relations: stratification, specialisation of calls with constant arguments, recursion.

Each rule becomes a relation with columns (t0, v0, t1, v1 ...). A non-recursive rule is a plain CTE; a group of
mutually recursive rules whose clauses each call the group at most once (linear recursion) is one
`WITH RECURSIVE` CTE, so SQLite's own fixpoint evaluation (with UNION de-duplication, hence cycles are fine)
does the work. Non-linear recursion (a clause calling the group twice) falls back to semi-naive iteration
over temporary tables.

Calls whose arguments are known are specialised before compiling, which is what keeps `(reach :a ?x)` over
a long chain linear instead of computing the whole closure. An argument is known when it is a constant, or
when other patterns of the caller bind it: then a "seed" relation of the values they allow is passed along
(sideways information passing, as in magic sets).
- an argument that every recursive clause passes through unchanged is fixed in the rule (a constant is
  substituted, a seed is joined in every clause);
- when the known arguments change along the recursion but the others pass through unchanged (the usual
  right-recursive transitive closure), the rule becomes a "frontier" relation (origin, node) started from
  the known values plus an answer relation that applies the base clauses to the frontier.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from tempera.facts import query_ast
from tempera.facts.compiler import Context, RelationRef, compile_conjunction
from tempera.facts.edn import to_edn
from tempera.facts.errors import DatalogError, Pos
from tempera.facts.normalize import PRIVATE_MARK, conj_bound_vars, expand, mentioned_vars, rule_calls, substitute
from tempera.facts.values import Value, encode


@dataclass(frozen=True)
class RuleClause:
    """One or-free clause of a rule."""

    name: str
    head: tuple[Any, ...]  # query_ast.Var | query_ast.Const
    body: tuple[query_ast.Clause, ...]
    pos: Pos


def calls_to(clause: RuleClause, names: set[str]) -> list[query_ast.RuleCall]:
    return [c for c in clause.body if isinstance(c, query_ast.RuleCall) and c.name in names]


class Program:
    """The stored rules, or-expanded, with their dependency graph checked for stratified negation."""

    def __init__(self, rules: Iterable[query_ast.Rule]) -> None:
        self.clauses: dict[str, list[RuleClause]] = {}
        self.arity: dict[str, int] = {}
        edges: dict[str, list[tuple[str, bool, Pos]]] = {}
        ordered: list[tuple[str, str, bool, Pos]] = []
        fresh = itertools.count(1)
        for rule in rules:
            if self.arity.setdefault(rule.name, len(rule.head)) != len(rule.head):
                raise DatalogError(
                    f"rule {rule.name} is defined with {self.arity[rule.name]} arguments; "
                    f"this clause has {len(rule.head)}",
                    rule.pos,
                )
            for body in expand(rule.body, set(), fresh):
                self.clauses.setdefault(rule.name, []).append(RuleClause(rule.name, rule.head, body, rule.pos))
            for clause in rule.body:
                for call, negative in rule_calls(clause):
                    edges.setdefault(rule.name, []).append((call.name, negative, call.pos))
                    ordered.append((rule.name, call.name, negative, call.pos))
        self.edges = edges
        self.scc_of = _strongly_connected(self.clauses.keys(), edges)
        for name, callee, negative, pos in reversed(ordered):  # blame the most recently added rule
            if negative and callee in self.scc_of.get(name, ()):
                raise DatalogError(
                    f"unstratifiable: rule {name} negates {callee}, which depends on {name} (a negative cycle)", pos
                )

    def recursive(self, name: str) -> bool:
        return len(self.scc_of[name]) > 1 or any(c == name for c, _, _ in self.edges.get(name, ()))


def _strongly_connected(
    nodes: Iterable[str], edges: dict[str, list[tuple[str, bool, Pos]]]
) -> dict[str, frozenset[str]]:
    """Tarjan's algorithm (iterative): node -> its strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: dict[str, frozenset[str]] = {}
    known = set(nodes)
    counter = itertools.count()
    for root in known:
        if root in index:
            continue
        work = [(root, iter(c for c, _, _ in edges.get(root, ()) if c in known))]
        index[root] = low[root] = next(counter)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        members.add(top)
                        if top == node:
                            break
                    for m in members:
                        result[m] = frozenset(members)
            elif child not in index:
                index[child] = low[child] = next(counter)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(c for c, _, _ in edges.get(child, ()) if c in known)))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return result


@dataclass
class Fixpoint:
    """Semi-naive evaluation of a non-linear recursive group in temp tables, run before the main query."""

    setup: list[str]
    step: str  # inserts the new rows of one round into `new`
    table: str
    delta: str
    new: str

    def run(self, conn: Any, params: dict[str, Any]) -> None:
        for sql in self.setup:
            conn.execute(sql, params)
        while True:
            conn.execute(f"DELETE FROM {self.new}")
            conn.execute(self.step, params)
            if conn.execute(f"SELECT 1 FROM {self.new} LIMIT 1").fetchone() is None:
                return
            conn.execute(f"INSERT INTO {self.table} SELECT * FROM {self.new}")
            conn.execute(f"DELETE FROM {self.delta}")
            conn.execute(f"INSERT INTO {self.delta} SELECT * FROM {self.new}")

    @property
    def tables(self) -> tuple[str, str, str]:
        return self.table, self.delta, self.new


class QueryRelations:
    """The rule relations one query needs, as CTEs (and fixpoints), created on demand by rule calls."""

    def __init__(
        self, program: Program, ctx: Context, max_derived_facts: int | None = None, *, lenient: bool = False
    ) -> None:
        self.program = program
        self.ctx = ctx
        self.max_derived_facts = max_derived_facts
        self.lenient = lenient  # unknown rules are empty (a rule may be registered before the ones it calls)
        self.ctes: list[str] = []
        self.fixpoints: list[Fixpoint] = []
        self.generated: dict[str, list[RuleClause]] = {}
        self.arity: dict[str, int] = dict(program.arity)
        self.building: dict[str, RelationRef] = {}
        self.done: dict[str, RelationRef] = {}
        self.memo: dict[tuple[Any, ...], RelationRef] = {}
        ctx.relations = self

    # -- the compiler's entry point ----------------------------------------------------------------------------

    def relation(
        self, name: str, consts: dict[int, Value], arity: int, pos: Pos, seeds: dict[int, str] | None = None
    ) -> RelationRef:
        """The relation for a call. `consts` are constant arguments; `seeds` are SELECTs (t0, v0) of the values
        that other clauses of the caller allow for an argument (sideways information passing)."""
        if name in self.building:
            return self.building[name]
        if name not in self.arity:
            if self.lenient:
                return RelationRef(f"({_empty_select(arity, False)})")
            raise DatalogError(f"unknown rule {name}", pos)
        if self.arity[name] != arity:
            raise DatalogError(f"rule {name} takes {self.arity[name]} arguments, called with {arity}", pos)
        if name not in self.program.clauses:
            return self._materialize(name)
        starts: dict[int, Value | Seed] = dict(consts)
        if seeds and not self.building:  # a seed inside a recursive step would read the CTE being defined
            for i, sql in seeds.items():
                seed = Seed(self.ctx.name("seed"))
                self.ctes.append(f"{seed.relation}(t0, v0) AS ({sql})")
                self.done[seed.relation] = RelationRef(seed.relation)
                self.arity[seed.relation] = 1
                starts[i] = seed
        key = (name, _describe(starts))
        if key not in self.memo:
            self.memo[key] = self._materialize(self._specialize(name, starts))
        return self.memo[key]

    def with_clause(self) -> str:
        return f"WITH RECURSIVE {', '.join(self.ctes)} " if self.ctes else ""

    # -- specialisation ----------------------------------------------------------------------------------------

    def _specialize(self, name: str, starts: dict[int, Value | Seed]) -> str:
        """A rule rewritten for arguments that are constants or seeded; the call site still checks them."""
        if not starts:
            return name
        clauses = self.program.clauses[name]
        if not self.program.recursive(name):
            return self._restrict(name, starts)
        group = {name}
        recursive = [c for c in clauses if calls_to(c, group)]
        if len(self.program.scc_of[name]) > 1 or any(len(calls_to(c, group)) > 1 for c in recursive):
            return name
        fixed = {i: s for i, s in starts.items() if all(_passes_through(c, i, name) for c in recursive)}
        moving = {i: s for i, s in starts.items() if i not in fixed}
        target = self._restrict(name, fixed) if fixed else name
        return (self._frontier(target, moving) or target) if moving else target

    def _generate(self, name: str, arity: int, clauses: list[RuleClause]) -> str:
        self.generated[name] = clauses
        self.arity[name] = arity
        return name

    def _restrict(self, name: str, starts: dict[int, Value | Seed]) -> str:
        """Head positions fixed to a constant (substituted) or limited to a seed (joined), in every clause.
        Sound for a recursive rule only at positions its recursive calls pass through unchanged."""
        new = f"{name}|{_describe(starts)}"
        consts = {i: v for i, v in starts.items() if not isinstance(v, Seed)}
        clauses = []
        for clause in self._clauses(name):
            bound = _bind_head(clause, consts, name, new)
            if bound is not None:
                limits = tuple(
                    query_ast.RuleCall(s.relation, (bound.head[i],), clause.pos)
                    for i, s in starts.items()
                    if isinstance(s, Seed)
                )
                clauses.append(replace(bound, body=limits + bound.body))
        return self._generate(new, self.arity[name], clauses)

    def _frontier(self, name: str, starts: dict[int, Value | Seed]) -> str | None:
        """p(start, ?y) for a right-recursive p, as frontier(origin, x) and answer(origin, ?y).

        The frontier holds the nodes reachable from each start through the recursive clauses; the answer
        applies the base clauses to the frontier. Linear in what is reachable, instead of the whole closure.
        """
        clauses = self._clauses(name)
        if not clauses:
            return None
        recursive = [c for c in clauses if calls_to(c, {name})]
        base = [c for c in clauses if not calls_to(c, {name})]
        bound = sorted(starts)
        origin = tuple(query_ast.Var(f"?{PRIVATE_MARK}origin{i}") for i in bound)
        frontier = f"{name}|frontier|{_describe(starts)}"
        answer = f"{name}|answer|{_describe(starts)}"
        steps = []
        for clause in recursive:
            call = calls_to(clause, {name})[0]
            rest = tuple(c for c in clause.body if c is not call)
            if not _frontier_shape(clause, call, rest, set(bound)):
                return None
            head_bound = tuple(clause.head[i] for i in bound)
            steps.append(
                RuleClause(
                    frontier,
                    origin + tuple(call.args[i] for i in bound),
                    (query_ast.RuleCall(frontier, origin + head_bound, clause.pos),) + rest,
                    clause.pos,
                )
            )
        pos = clauses[0].pos
        first = tuple(o if isinstance(starts[i], Seed) else query_ast.Const(starts[i]) for i, o in zip(bound, origin))
        seeding = tuple(
            query_ast.RuleCall(s.relation, (o,), pos)
            for o, s in zip(origin, (starts[i] for i in bound))
            if isinstance(s, Seed)
        )
        self._generate(frontier, 2 * len(bound), [RuleClause(frontier, first + first, seeding, pos), *steps])
        by_position = dict(zip(bound, origin))
        answers = [
            RuleClause(
                answer,
                tuple(by_position.get(i, h) for i, h in enumerate(b.head)),
                (query_ast.RuleCall(frontier, origin + tuple(b.head[i] for i in bound), b.pos),) + b.body,
                b.pos,
            )
            for b in base
        ]
        return self._generate(answer, self.arity[name], answers)

    # -- SQL -------------------------------------------------------------------------------------------------

    def _clauses(self, name: str) -> list[RuleClause]:
        return self.generated[name] if name in self.generated else self.program.clauses[name]

    def _materialize(self, name: str) -> RelationRef:
        if name in self.done:
            return self.done[name]
        if name in self.generated:
            group = [name]
            recursive = any(calls_to(c, {name}) for c in self.generated[name])
        else:
            group = sorted(self.program.scc_of[name])
            recursive = self.program.recursive(name)
        refs = self._emit(group, recursive)
        self.done.update(refs)
        return refs[name]

    def _emit(self, group: list[str], recursive: bool) -> dict[str, RelationRef]:
        members = set(group)
        arity = max(self.arity[p] for p in group)
        tagged = len(group) > 1
        table = self.ctx.name("rel")
        refs = {p: RelationRef(table, p if tagged else None) for p in group}
        clauses = [c for p in group for c in self._clauses(p)]
        columns = (["p"] if tagged else []) + [f"t{i}, v{i}" for i in range(arity)]
        if recursive and any(len(calls_to(c, members)) > 1 for c in clauses):
            return self._fixpoint(group, clauses, arity, tagged, columns)
        distinct = not recursive and len(clauses) == 1  # one SELECT: de-duplicate it; UNION does the rest
        if recursive:
            self.building.update(refs)
        try:
            base = [self._select(c, arity, tagged, distinct=distinct) for c in clauses if not calls_to(c, members)]
            step = [
                self._select(c, arity, tagged, distinct=False, driver=calls_to(c, members)[0])
                for c in clauses
                if calls_to(c, members)
            ]
        finally:
            for p in group:
                self.building.pop(p, None)
        body = " UNION ".join((base or [_empty_select(arity, tagged)]) + step)
        if recursive and self.max_derived_facts:
            body += f" LIMIT {self.max_derived_facts:d}"
        self.ctes.append(f"{table}({', '.join(columns)}) AS ({body})")
        return refs

    def _select(
        self, clause: RuleClause, arity: int, tagged: bool, *, distinct: bool, driver: query_ast.RuleCall | None = None
    ) -> str:
        """SELECT of the clause's head; `driver`, the recursive call of a step, becomes the outer loop."""
        body = clause.body if driver is None else (driver, *(c for c in clause.body if c is not driver))
        scope = compile_conjunction(self.ctx, body, {}, drive_first=driver is not None, sideways=True)
        out = [self.ctx.param(clause.name)] if tagged else []
        for arg in clause.head:
            if isinstance(arg, query_ast.Const):
                term = self.ctx.const(arg.value)
            elif arg.name in scope.bindings:
                term = scope.bindings[arg.name]
            else:
                raise DatalogError(
                    f"variable {arg.name} in the head of rule {_base_name(clause.name)} is not bound by its body",
                    clause.pos,
                )
            out += [term.t, term.v]
        out += ["NULL"] * (2 * (arity - len(clause.head)))
        return scope.select(out, distinct=distinct)

    def _fixpoint(
        self, group: list[str], clauses: list[RuleClause], arity: int, tagged: bool, columns: list[str]
    ) -> dict[str, RelationRef]:
        members = set(group)
        table = f"temp.{self.ctx.name('tempera_fix')}_{secrets.token_hex(4)}"
        delta, new = f"{table}_delta", f"{table}_new"
        refs = {p: RelationRef(table, p if tagged else None) for p in group}
        base = [self._select(c, arity, tagged, distinct=False) for c in clauses if not calls_to(c, members)]
        variants = []
        for clause in clauses:
            for call in calls_to(clause, members):
                # semi-naive: this recursive call reads the last round's new rows, the others read everything
                driver = replace(call, name=f"{call.name}@delta")
                renamed = tuple(driver if c is call else c for c in clause.body)
                scoped = {**refs, **{f"{p}@delta": RelationRef(delta, refs[p].tag) for p in group}}
                self.building.update(scoped)
                try:
                    variants.append(
                        self._select(replace(clause, body=renamed), arity, tagged, distinct=False, driver=driver)
                    )
                finally:
                    for key in scoped:
                        self.building.pop(key, None)
        prefix = self.with_clause()  # after compiling: the bodies may have added the CTEs they read
        cols = ", ".join(columns)
        setup = [f"DROP TABLE IF EXISTS {t}" for t in (table, delta, new)] + [
            f"CREATE TABLE {table}({cols})",
            f"CREATE TABLE {delta}({cols})",
            f"CREATE TABLE {new}({cols})",
            f"INSERT INTO {table} {prefix}{' UNION '.join(base or [_empty_select(arity, tagged)])}",
            f"INSERT INTO {delta} SELECT * FROM {table}",
        ]
        step = f"INSERT INTO {new} {prefix}SELECT * FROM ({' UNION '.join(variants)}) EXCEPT SELECT * FROM {table}"
        self.fixpoints.append(Fixpoint(setup, step, table, delta, new))
        return refs


def _empty_select(arity: int, tagged: bool) -> str:
    columns = (["NULL AS p"] if tagged else []) + [f"NULL AS t{i}, NULL AS v{i}" for i in range(arity)]
    return f"SELECT {', '.join(columns) or 'NULL'} WHERE 0"


@dataclass(frozen=True)
class Seed:
    """A relation (t0, v0) holding the values a rule argument may take, computed from the caller's clauses."""

    relation: str


def _describe(starts: dict[int, Value | Seed]) -> str:
    return ",".join(
        f"{i}~{v.relation}" if isinstance(v, Seed) else f"{i}={to_edn(v)}" for i, v in sorted(starts.items())
    )


def _base_name(name: str) -> str:
    return name.split("|", 1)[0]


def _same(a: Value, b: Value) -> bool:
    return encode(a) == encode(b)


def _passes_through(clause: RuleClause, i: int, name: str) -> bool:
    call = calls_to(clause, {name})[0]
    head, arg = clause.head[i], call.args[i]
    return isinstance(head, query_ast.Var) and isinstance(arg, query_ast.Var) and head.name == arg.name


def _bind_head(clause: RuleClause, consts: dict[int, Value], old: str, new: str) -> RuleClause | None:
    """The clause with head arguments fixed to constants; None when a head constant contradicts them."""
    mapping: dict[str, query_ast.Const] = {}
    for i, value in consts.items():
        head = clause.head[i]
        if isinstance(head, query_ast.Const):
            if not _same(head.value, value):
                return None
        elif head.name in mapping and not _same(mapping[head.name].value, value):
            return None
        else:
            mapping[head.name] = query_ast.Const(value)
    body = tuple(
        replace(c, name=new) if isinstance(c, query_ast.RuleCall) and c.name == old else c
        for c in substitute(clause.body, mapping)
    )
    head = tuple(mapping.get(h.name, h) if isinstance(h, query_ast.Var) else h for h in clause.head)
    return RuleClause(new, head, body, clause.pos)


def _frontier_shape(
    clause: RuleClause, call: query_ast.RuleCall, rest: tuple[query_ast.Clause, ...], bound: set[int]
) -> bool:
    """True when the free arguments pass through the recursion untouched and the bound ones are computable."""
    head_bound = [clause.head[i] for i in sorted(bound)]
    if not all(isinstance(h, query_ast.Var) for h in head_bound) or len({h.name for h in head_bound}) != len(bound):
        return False
    used = set().union(*(mentioned_vars(c) for c in rest)) if rest else set()
    for j, head in enumerate(clause.head):
        if j in bound:
            continue
        arg = call.args[j]
        if isinstance(head, query_ast.Const):
            if not (isinstance(arg, query_ast.Const) and _same(arg.value, head.value)):
                return False
            continue
        others = {h.name for k, h in enumerate(clause.head) if k != j and isinstance(h, query_ast.Var)}
        if not (isinstance(arg, query_ast.Var) and arg.name == head.name) or head.name in used | others:
            return False
    available = {h.name for h in head_bound} | conj_bound_vars(rest)
    return all(
        isinstance(call.args[i], query_ast.Const)
        or (isinstance(call.args[i], query_ast.Var) and call.args[i].name in available)
        for i in bound
    )
