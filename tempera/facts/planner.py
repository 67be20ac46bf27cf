"""A parsed query -> one SQL statement (plus semi-naive fixpoints when a rule needs them), and row decoding.

Answers are sets. Aggregates follow minigraf: they run over the set of bindings of all the query's variables
(so two employees with the same salary both count), grouped by the plain :find variables plus :with.
Rows are ordered by :order-by, then by all columns, so that results are reproducible. The ordering is applied
outside a subquery fenced with `LIMIT -1 OFFSET 0` (SQLite never flattens a subquery with an OFFSET):
otherwise the ORDER BY tempts SQLite, which has no statistics on a fresh database, to read the (a, v) index
in value order instead of looking the entity up in (e, a).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from tempera.facts import query_ast
from tempera.facts.compiler import Context, Scope, Term, compile_conjunction
from tempera.facts.errors import DatalogError
from tempera.facts.normalize import PRIVATE_MARK, expand
from tempera.facts.relations import Fixpoint, Program, QueryRelations
from tempera.facts.values import VT, Keyword, Value, decode

WINDOW_SQL = {"rank": "RANK()", "dense-rank": "DENSE_RANK()", "row-number": "ROW_NUMBER()"}
NON_NIL = f"<> {VT.NIL:d}"


@dataclass
class Plan:
    sql: str
    params: dict[str, Any]
    columns: list[str]
    pairs: list[bool]  # per :find element: True when it is a (type tag, value) pair, False for a plain value
    fixpoints: list[Fixpoint] = field(default_factory=list)

    def answer(self, raw: Sequence[Sequence[Any]]) -> list[tuple[Value, ...]]:
        """SQL rows -> rows of Python values (keywords as Keyword, UUIDs, instants ...)."""
        keywords: dict[str, Keyword] = {}  # one object per distinct keyword: answers repeat them a lot
        positions = []
        i = 0
        for pair in self.pairs:
            positions.append((i, pair))
            i += 2 if pair else 1
        return [
            tuple(_decode(row[i], row[i + 1], keywords) if pair else row[i] for i, pair in positions) for row in raw
        ]


def _decode(tag: int, value: Any, keywords: dict[str, Keyword]) -> Value:
    if tag == VT.STRING or tag == VT.INT:
        return value  # SQLite already returns these as str and int
    if tag == VT.KEYWORD:
        return keywords.get(value) or keywords.setdefault(value, Keyword(value))
    return decode(tag, value)


def plan_query(
    query: query_ast.Query,
    program: Program,
    *,
    as_of: int | None,
    valid_at: int | None,
    inputs: Sequence[Any] = (),
    slots: Mapping[str, Value] | None = None,
    aggregates: Mapping[str, str] | None = None,
    views: Mapping[str, str] | None = None,
) -> Plan:
    """Compile `query` for the given time filters. `aggregates` maps UDF names to their SQL function names;
    `views` maps attributes to the subqueries that serve them (see `Context.views`)."""
    ctx = Context(as_of=as_of, valid_at=valid_at, slots=slots or {}, views=views or {})
    relations = QueryRelations(program, ctx, query.max_derived_facts)
    bindings, froms = _inputs(ctx, query, inputs)
    conjunctions = expand(query.where, set(bindings), count(1))
    scopes = [compile_conjunction(ctx, conj, bindings, froms, sideways=True) for conj in conjunctions]
    aggregate = [f for f in query.find if isinstance(f, query_ast.Aggregate)]
    for scope in scopes:
        _check_bound(query, scope)
    if aggregate:
        sql, order_columns = _aggregate_sql(ctx, query, scopes, aggregates or {})
    else:
        names = _find_vars(query)
        sql, order_columns = _union(ctx, scopes, names), [(f"v{i}", f"t{i}") for i in range(len(names))]
    sql = f"SELECT * FROM ({sql} LIMIT -1 OFFSET 0){_order_limit(query, order_columns)}"
    return Plan(
        relations.with_clause() + sql,
        ctx.params,
        [_column_name(f) for f in query.find],
        [isinstance(f, query_ast.Var) for f in query.find],
        relations.fixpoints,
    )


def _order_limit(query: query_ast.Query, columns: list[tuple[str, str | None]]) -> str:
    """ORDER BY the :order-by keys, then every column (value, then type tag); LIMIT from :limit."""
    keys = [(k.column, k.descending) for k in query.order_by]
    keys += [(i, False) for i in range(len(columns)) if i not in {c for c, _ in keys}]
    parts = [f"{col}{' DESC' if desc else ''}" for i, desc in keys for col in columns[i] if col]
    return f" ORDER BY {', '.join(parts)}" + (f" LIMIT {query.limit:d}" if query.limit is not None else "")


def _column_name(elem: query_ast.FindElem) -> str:
    return elem.name if isinstance(elem, query_ast.Var) else elem.text


def _find_vars(query: query_ast.Query) -> list[str]:
    return [f.name for f in query.find if isinstance(f, query_ast.Var)]


def _needed(query: query_ast.Query) -> list[tuple[str, query_ast.Aggregate | query_ast.Query]]:
    """Every variable the answer reads, with what reads it (for the error message)."""
    needed: list[tuple[str, Any]] = [(f.name, query) for f in query.find if isinstance(f, query_ast.Var)]
    needed += [(v.name, query) for v in query.with_]
    for f in query.find:
        if isinstance(f, query_ast.Aggregate):
            used = [f.arg] if f.arg else []
            if f.over:
                used += list(f.over.partition_by) + [v for v, _ in f.over.order_by]
            needed += [(v.name, f) for v in used]
    return needed


def _check_bound(query: query_ast.Query, scope: Scope) -> None:
    for name, user in _needed(query):
        if name not in scope.bindings:
            where = f"in {user.text}" if isinstance(user, query_ast.Aggregate) else "in :find/:with"
            raise DatalogError(f"variable {name} {where} is not bound by any :where clause", user.pos)


def _inputs(ctx: Context, query: query_ast.Query, inputs: Sequence[Any]) -> tuple[dict[str, Term], list[str]]:
    """:in parameters become constant bindings, or VALUES tables for collections and relations."""
    if len(inputs) != len(query.inputs):
        raise DatalogError(f"the query takes {len(query.inputs)} :in parameter(s), got {len(inputs)}", query.pos)
    bindings: dict[str, Term] = {}
    froms: list[str] = []
    for spec, value in zip(query.inputs, inputs):
        if isinstance(spec, query_ast.InScalar):
            bindings[spec.var.name] = ctx.const(value)
        elif isinstance(spec, query_ast.InTuple):
            _check_width(spec.vars, value, query)
            bindings.update({v.name: ctx.const(x) for v, x in zip(spec.vars, value) if isinstance(v, query_ast.Var)})
        else:
            rows = [(x,) for x in value] if isinstance(spec, query_ast.InCollection) else list(value)
            names = [spec.var] if isinstance(spec, query_ast.InCollection) else list(spec.vars)
            for row in rows:
                _check_width(names, row, query)
            alias = ctx.name("in")
            froms.append(f"({_values(ctx, rows, len(names))}) {alias}")
            bindings.update(
                {
                    v.name: Term(f"{alias}.v{i}", f"{alias}.t{i}")
                    for i, v in enumerate(names)
                    if isinstance(v, query_ast.Var)
                }
            )
    return bindings, froms


def _check_width(names: Sequence[Any], value: Any, query: query_ast.Query) -> None:
    if not isinstance(value, (list, tuple)) or len(value) != len(names):
        raise DatalogError(f"an :in tuple needs {len(names)} values, got {value!r}", query.pos)


def _values(ctx: Context, rows: list[Sequence[Any]], width: int) -> str:
    header = ", ".join(f"NULL AS t{i}, NULL AS v{i}" for i in range(width))
    selects = [f"SELECT {header} WHERE 0"]
    for row in rows:
        terms = [ctx.const(x) for x in row]
        selects.append("SELECT " + ", ".join(f"{t.t}, {t.v}" for t in terms))
    return " UNION ALL ".join(selects)


def _union(ctx: Context, scopes: list[Scope], names: list[str]) -> str:
    """The distinct bindings of `names` over all conjunctions, as columns t0, v0, t1, v1 ..."""
    selects = []
    for scope in scopes:
        cols = []
        for i, name in enumerate(names):
            term = scope.bindings[name]
            cols += [f"{term.t} AS t{i}", f"{term.v} AS v{i}"]
        selects.append(scope.select(cols, distinct=len(scopes) == 1))
    return " UNION ".join(selects)


def _aggregate_sql(
    ctx: Context, query: query_ast.Query, scopes: list[Scope], udfs: Mapping[str, str]
) -> tuple[str, list[tuple[str, str | None]]]:
    names = sorted(set.intersection(*(set(s.bindings) for s in scopes)))
    names = [n for n in names if PRIVATE_MARK not in n]
    index = {name: i for i, name in enumerate(names)}
    inner = _union(ctx, scopes, names)
    windowed = [f for f in query.find if isinstance(f, query_ast.Aggregate) and f.over is not None]
    plain = [f for f in query.find if isinstance(f, query_ast.Aggregate) and f.over is None]
    if windowed and plain:
        raise DatalogError("cannot mix window functions (:over) with plain aggregates in one :find", query.pos)
    out_cols: list[str] = []
    order_columns: list[tuple[str, str | None]] = []
    must_exist: list[str] = []
    for n, elem in enumerate(query.find):
        if isinstance(elem, query_ast.Var):
            k = index[elem.name]
            out_cols += [f"t{k} AS ot{n}", f"v{k} AS ov{n}"]
            order_columns.append((f"ov{n}", f"ot{n}"))
        else:
            out_cols.append(f"{_aggregate_expr(elem, index, udfs)} AS ov{n}")
            order_columns.append((f"ov{n}", None))
            if elem.fn not in ("count", "count-distinct") and elem.over is None:
                must_exist.append(f"ov{n} IS NOT NULL")  # sum/min/max over nothing: no row, as in minigraf
    group = [index[f.name] for f in query.find if isinstance(f, query_ast.Var)] + [index[v.name] for v in query.with_]
    sql = f"SELECT {', '.join(out_cols)} FROM ({inner})"
    if plain and group:
        sql += " GROUP BY " + ", ".join(f"t{k}, v{k}" for k in group)
    if must_exist or query.with_ or windowed:
        where = f" WHERE {' AND '.join(must_exist)}" if must_exist else ""
        sql = f"SELECT DISTINCT * FROM ({sql}){where}"
    return sql, order_columns


def _aggregate_expr(agg: query_ast.Aggregate, index: dict[str, int], udfs: Mapping[str, str]) -> str:
    fn = agg.fn
    if fn in WINDOW_SQL:
        call = WINDOW_SQL[fn]
    else:
        k = index[agg.arg.name]
        t, v = f"t{k}", f"v{k}"
        numbers = f"CASE WHEN {t} IN ({VT.INT:d}, {VT.FLOAT:d}) THEN {v} END"
        if fn == "count":
            call = f"COUNT(CASE WHEN {t} {NON_NIL} THEN 1 END)"
        elif fn == "count-distinct":
            call = f"COUNT(DISTINCT CASE WHEN {t} {NON_NIL} THEN {t} || ':' || {v} END)"
        elif fn in ("sum", "sum-distinct", "avg"):
            sql_fn = {"sum": "SUM", "sum-distinct": "SUM", "avg": "AVG"}[fn]
            call = f"{sql_fn}({'DISTINCT ' if fn == 'sum-distinct' else ''}{numbers})"
        elif fn in ("min", "max"):
            comparable = f"CASE WHEN {t} IN ({VT.INT:d}, {VT.FLOAT:d}, {VT.STRING:d}) THEN {v} END"
            call = f"{fn.upper()}({comparable})"
        elif fn in udfs:
            call = f"{udfs[fn]}(CASE WHEN {t} {NON_NIL} THEN {v} END)"
        else:
            raise DatalogError(f"unknown aggregate {fn}; register it with FactStore.register_aggregate", agg.pos)
    if agg.over is None:
        return call
    parts = []
    if agg.over.partition_by:
        parts.append("PARTITION BY " + ", ".join(f"t{index[v.name]}, v{index[v.name]}" for v in agg.over.partition_by))
    if agg.over.order_by:
        parts.append(
            "ORDER BY " + ", ".join(f"v{index[v.name]}{' DESC' if desc else ''}" for v, desc in agg.over.order_by)
        )
    return f"{call} OVER ({' '.join(parts)})"
