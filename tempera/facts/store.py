"""FactStore: the bi-temporal fact graph in the shared SQLite file, driven by minigraf-dialect Datalog.

Transaction time: every write that changes something gets the next transaction number, a wall-clock time
(never earlier than the previous transaction's) and a required reason. Valid time: [valid-from, valid-to),
defaulting to [transaction time, open). Set semantics: asserting a fact that is already current is a no-op,
and a command that changes nothing records no transaction.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Any, Union

from tempera.core.db import Database, apply_migrations, sqlite3
from tempera.core.errors import InvalidInput
from tempera.core.redact import redact
from tempera.facts import query_ast
from tempera.facts.compiler import Context
from tempera.facts.entity_types import PROJECT, project_key
from tempera.facts.episode_datoms import EPISODE_VIEWS
from tempera.facts.errors import DatalogError, Pos
from tempera.facts.parser import parse_command, parse_facts, parse_query, parse_rule
from tempera.facts.planner import plan_query
from tempera.facts.relations import Program, QueryRelations
from tempera.facts.schema import MIGRATIONS, has_fact_graph, rename_entity
from tempera.facts.values import (
    VT,
    Keyword,
    Value,
    decode,
    decode_entity,
    encode,
    encode_entity,
    ms_to_iso,
    parse_time,
    to_ms,
)

FactInput = Union[str, Iterable[Sequence[Any]]]
BUILTIN_AGGREGATES = {
    "count",
    "count-distinct",
    "sum",
    "sum-distinct",
    "min",
    "max",
    "avg",
    "rank",
    "dense-rank",
    "row-number",
}
_OF_PROJECT = f"a = '{PROJECT}' AND vt = {VT.STRING:d} AND v = ?"  # a stance's project, as turnfacts.py writes it


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Value, ...]]

    def to_json(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": [[json_value(v) for v in row] for row in self.rows]}


class _Plain:
    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass
class TxResult(_Plain):
    tx: int | None  # None when nothing changed
    at: str | None
    added: int = 0
    retracted: int = 0
    unchanged: int = 0


@dataclass
class RuleResult(_Plain):
    name: str
    arity: int
    added: bool  # False when the same clause was already stored


@dataclass
class RuleInfo(_Plain):
    name: str
    arity: int
    text: str


Result = Union[QueryResult, TxResult, RuleResult]


def json_value(value: Value) -> Any:
    """Values as JSON: keywords as ":name" strings, UUIDs and instants as strings."""
    if isinstance(value, (uuid.UUID, datetime)):
        return str(value) if isinstance(value, uuid.UUID) else value.isoformat()
    return str(value) if isinstance(value, Keyword) else value


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _regexp(pattern: Any, value: Any) -> int | None:
    if not isinstance(pattern, str) or not isinstance(value, str):
        return None
    try:
        return 1 if _compiled(pattern).search(value) else 0
    except re.error:
        return 0


def _require_reason(reason: str | None) -> str:
    if reason is None or not reason.strip():
        raise InvalidInput("a reason is required for every transact and retract")
    return reason.strip()


def _time_arg(value: datetime | str | None) -> int | None:
    if value is None:
        return None
    return to_ms(parse_time(value) if isinstance(value, str) else value)


class FactStore:
    """The fact graph inside a Tempera database. Opening it applies the facts migrations."""

    def __init__(self, db: Database) -> None:
        self.db = db
        apply_migrations(db, MIGRATIONS)
        db.conn.create_function("tempera_regexp", 2, _regexp, deterministic=True)
        self._aggregates: dict[str, str] = {}
        self._program: tuple[tuple[Any, ...], Program] | None = None

    # -- commands ------------------------------------------------------------------------------------------------

    def execute(
        self, text: str, *, reason: str | None = None, params: Mapping[str, Any] | Sequence[Any] | None = None
    ) -> Result:
        """Run one command: (transact ...), (retract ...), (query [...]) or (rule [...])."""
        command = parse_command(text)
        if isinstance(command, query_ast.Transact):
            return self._write(reason, add=command.facts)
        if isinstance(command, query_ast.Retract):
            return self._write(reason, retract=command.facts)
        if isinstance(command, query_ast.QueryCommand):
            return self._query(command.query, params)
        return self._add_rule(command.rule)

    def query(self, text: str, params: Mapping[str, Any] | Sequence[Any] | None = None) -> QueryResult:
        """A query written as `[:find ...]` or `(query [:find ...])`.

        `params` fills :in variables (a sequence in :in order, or a mapping by name) and $slots (by name).
        """
        return self._query(parse_query(text), params)

    def transact(
        self,
        facts: FactInput,
        *,
        reason: str,
        valid_from: datetime | str | None = None,
        valid_to: datetime | str | None = None,
    ) -> TxResult:
        """Assert facts given as EDN text `[[e a v] ...]` or as Python (entity, attribute, value) tuples."""
        return self._write(
            reason,
            add=self._facts(facts, retract=False, valid_from=_time_arg(valid_from), valid_to=_time_arg(valid_to)),
        )

    def retract(self, facts: FactInput, *, reason: str) -> TxResult:
        """Close facts in transaction time; they stay queryable with :as-of an earlier transaction."""
        return self._write(reason, retract=self._facts(facts, retract=True))

    def change(self, *, add: FactInput = (), close: FactInput = (), at: datetime | str, reason: str) -> TxResult:
        """One transaction at valid time `at`: `add` facts become valid from `at`; current `close` facts stop
        being valid at `at`.

        This is how a newer statement supersedes an older one, or a commit removes a dependency: the open-ended
        version is retracted (still visible with :as-of an earlier transaction) and a copy ending at `at` is
        asserted, so both "what was true then" and "what did we believe then" stay answerable.
        """
        moment = _time_arg(at)
        return self._write(
            reason,
            add=self._facts(add, retract=False, valid_from=moment),
            close=self._facts(close, retract=True),
            close_at=moment,
        )

    def add_rule(self, text: str) -> RuleResult:
        return self._add_rule(parse_rule(text))

    def drop_rule(self, name: str) -> int:
        """Remove every clause of a rule; returns how many were removed."""
        return self.db.execute("DELETE FROM fact_rules WHERE name = ?", (name,)).rowcount

    def rules(self) -> list[RuleInfo]:
        return [RuleInfo(*row) for row in self.db.query("SELECT name, arity, text FROM fact_rules ORDER BY id")]

    def register_aggregate(self, name: str, fn: Callable[[list[Value]], Value]) -> None:
        """Make `(name ?x)` usable in :find; `fn` gets the non-nil values of one group."""
        if name in BUILTIN_AGGREGATES:
            raise InvalidInput(f"{name} is a built-in aggregate")

        class Collector:
            def __init__(self) -> None:
                self.values: list[Value] = []

            def step(self, value: Value) -> None:
                if value is not None:
                    self.values.append(value)

            def finalize(self) -> Value:
                return fn(self.values) if self.values else None

        sql_name = f"tempera_udf_{len(self._aggregates)}"
        self.db.conn.create_aggregate(sql_name, 1, Collector)
        self._aggregates[name] = sql_name

    def history(self, entity: Keyword | uuid.UUID | str) -> QueryResult:
        """Every assertion and retraction about an entity, in transaction order, with reasons and valid times."""
        key = encode_entity(_entity_arg(entity))
        rows = self.db.query(
            "SELECT d.a, d.vt, d.v, d.valid_from, d.valid_to, d.tx, t.at, t.reason, d.retracted_tx, r.at, r.reason "
            "FROM fact_datoms d JOIN fact_tx t ON t.tx = d.tx LEFT JOIN fact_tx r ON r.tx = d.retracted_tx "
            "WHERE d.e = ? ORDER BY d.tx, d.id",
            (key,),
        )
        events = []
        for a, vt, v, vfrom, vto, tx, at, reason, rtx, rat, rreason in rows:
            fact = (Keyword(a), decode(vt, v), ms_to_iso(vfrom), ms_to_iso(vto))
            events.append((tx, ms_to_iso(at), "assert", *fact, reason))
            if rtx is not None:
                events.append((rtx, ms_to_iso(rat), "retract", *fact, rreason))
        events.sort(key=lambda e: (e[0], e[2] != "retract"))
        return QueryResult(["tx", "at", "op", "attribute", "value", "valid-from", "valid-to", "reason"], events)

    def current_tx(self) -> int:
        return self.db.one("SELECT coalesce(max(tx), 0) FROM fact_tx")[0]

    # -- writes --------------------------------------------------------------------------------------------------

    def _facts(
        self, facts: FactInput, *, retract: bool, valid_from: int | None = None, valid_to: int | None = None
    ) -> tuple[query_ast.FactSpec, ...]:
        if isinstance(facts, str):
            return parse_facts(facts, retract=retract, valid_from=valid_from, valid_to=valid_to)
        specs = []
        for fact in facts:
            if len(fact) != 3:
                raise InvalidInput(f"a fact is (entity, attribute, value), got {fact!r}")
            entity, attribute, value = fact
            if not isinstance(attribute, Keyword):
                attribute = Keyword(str(attribute))
            specs.append(query_ast.FactSpec(_entity_arg(entity), attribute, value, valid_from, valid_to, Pos(1, 1)))
        return tuple(specs)

    def _next_time(self) -> int:
        """Wall-clock ms, but never before the last transaction, so transaction times are monotonic."""
        last = self.db.one("SELECT max(at) FROM fact_tx")[0]
        now = int(time.time() * 1000)
        return max(now, last or 0)

    def _write(
        self,
        reason: str | None,
        *,
        add: Sequence[query_ast.FactSpec] = (),
        retract: Sequence[query_ast.FactSpec] = (),
        close: Sequence[query_ast.FactSpec] = (),
        close_at: int | None = None,
    ) -> TxResult:
        """One transaction, recorded only if something changes: new datoms, retractions, valid-time closes. Text
        values and the reason are redacted, as every way into memory is (a value is matched in its stored form)."""
        reason = redact(_require_reason(reason))
        add, retract, close = _redacted(add), _redacted(retract), _redacted(close)
        with self.db.transaction():
            now = self._next_time()
            inserts = self._new_datoms(add, now)
            added = len(inserts)
            ended: dict[int, None] = {}  # datom ids to retract, in order, each once
            unchanged = len(add) - added
            for fact in retract:
                found = [i for i, _, _ in self._current(fact) if i not in ended]
                ended.update(dict.fromkeys(found))
                unchanged += not found
            for fact in close:
                assert close_at is not None
                found = [
                    (i, vf) for i, vf, vto in self._current(fact) if (vto is None or vto > close_at) and i not in ended
                ]
                ended.update(dict.fromkeys(i for i, _ in found))
                e, a, (vt, v) = encode_entity(fact.e), str.__str__(fact.a), encode(fact.v)
                inserts += [(e, a, vt, v, vf, close_at) for _, vf in found if vf < close_at]
                unchanged += not found
            if not inserts and not ended:
                return TxResult(None, None, unchanged=unchanged)
            tx = self.db.execute("INSERT INTO fact_tx(at, reason) VALUES (?, ?)", (now, reason)).lastrowid
            self.db.conn.executemany(
                "INSERT INTO fact_datoms(e, a, vt, v, valid_from, valid_to, tx) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(*row, tx) for row in inserts],
            )
            self.db.conn.executemany("UPDATE fact_datoms SET retracted_tx = ? WHERE id = ?", [(tx, i) for i in ended])
        return TxResult(tx, ms_to_iso(now), added=added, retracted=len(ended), unchanged=unchanged)

    def record(
        self,
        reason: str,
        datoms: Sequence[tuple[str, str, int, Any, int, int | None]] = (),
        retract: Sequence[int] = (),
    ) -> tuple[int, list[int]]:
        """One transaction made of what another store did (team sync): `datoms` (encoded e, a, vt, v, valid-from,
        valid-to) inserted as given, without set semantics, so each keeps its own identity for its retraction to
        follow; datoms retracted by id. Transaction time is this store's (when this copy learned it); valid time
        stays as given. Returns the transaction and the new datom ids, in order."""
        with self.db.transaction():
            tx = self.db.execute(
                "INSERT INTO fact_tx(at, reason) VALUES (?, ?)", (self._next_time(), redact(_require_reason(reason)))
            ).lastrowid
            ids = [
                self.db.execute(
                    "INSERT INTO fact_datoms(e, a, vt, v, valid_from, valid_to, tx) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (*row, tx),
                ).lastrowid
                for row in datoms
            ]
            self.db.conn.executemany(
                "UPDATE fact_datoms SET retracted_tx = ? WHERE id = ? AND retracted_tx IS NULL",
                [(tx, i) for i in retract],
            )
        assert tx is not None
        return tx, [int(i) for i in ids if i is not None]

    def project_stances(self, project_id: str) -> list[str]:
        """The stance entities that a `:project` datom gives to the project (retracted ones included)."""
        return [e for (e,) in self.db.query(f"SELECT DISTINCT e FROM fact_datoms WHERE {_OF_PROJECT}", (project_id,))]

    def move_project(self, source_id: str, target_id: str) -> int:
        """Give one project's stances to another (`core.project_merge`): `:project` becomes the target's id and
        `:<kind>/<subject>.<source key>` takes the target's key, in every transaction, retracted datoms too (a
        stance that any datom ties to another project is not shown in this one). Where the target holds a stance on
        the subject already, the two become one entity keeping both statements with their valid times; the next
        statement about the subject closes whichever still holds. The move is a rename, not new facts, but it is
        recorded as a transaction of its own, so readers that cache by the last transaction (promptfacts.py) see
        it. Returns the number of stances moved."""
        entities = self.project_stances(source_id)
        if not entities:
            return 0
        old_key, new_key = project_key(source_id), project_key(target_id)
        with self.db.transaction():
            for entity in entities:
                if entity.endswith("." + old_key):
                    rename_entity(self.db.conn, entity, entity[: -len(old_key)] + new_key)
            self.db.execute(f"UPDATE fact_datoms SET v = ? WHERE {_OF_PROJECT}", (target_id, source_id))
            self.db.execute(
                "INSERT INTO fact_tx(at, reason) VALUES (?, ?)",
                (self._next_time(), f"project {source_id} merged into {target_id}"),
            )
        return len(entities)

    def _new_datoms(self, facts: Sequence[query_ast.FactSpec], now: int) -> list[tuple[Any, ...]]:
        """Rows for the facts that are not already current (set semantics), without duplicates."""
        rows: list[tuple[Any, ...]] = []
        seen: set[tuple[Any, ...]] = set()
        for fact in facts:
            e, a, (vt, v) = encode_entity(fact.e), str.__str__(fact.a), encode(fact.v)
            if fact.valid_to is not None and fact.valid_to <= (fact.valid_from or now):
                raise DatalogError("valid-to must be later than valid-from (which defaults to now)", fact.pos)
            key = (e, a, vt, v, fact.valid_from, fact.valid_to)
            if key in seen or self._is_current(e, a, vt, v, fact, now):
                continue
            seen.add(key)
            rows.append((e, a, vt, v, now if fact.valid_from is None else fact.valid_from, fact.valid_to))
        return rows

    def _is_current(self, e: str, a: str, vt: int, v: Any, fact: query_ast.FactSpec, now: int) -> bool:
        """Is the same fact already asserted (not retracted) with the same valid time, or valid now if none?"""
        sql = (
            "SELECT 1 FROM fact_datoms WHERE e = ? AND a = ? AND vt = ? AND v = ? AND retracted_tx IS NULL "
            "AND valid_to IS ? "
        )
        params: list[Any] = [e, a, vt, v, fact.valid_to]
        if fact.valid_from is None:
            sql += "AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
            params += [now, now]
        else:
            sql += "AND valid_from = ?"
            params.append(fact.valid_from)
        return self.db.one(sql + " LIMIT 1", params) is not None

    def _current(self, fact: query_ast.FactSpec) -> list[tuple[int, int, int | None]]:
        """(id, valid_from, valid_to) of the datoms of this fact that are not retracted."""
        vt, v = encode(fact.v)
        return self.db.query(
            "SELECT id, valid_from, valid_to FROM fact_datoms WHERE e = ? AND a = ? AND vt = ? "
            "AND v = ? AND retracted_tx IS NULL",
            (encode_entity(fact.e), str.__str__(fact.a), vt, v),
        )

    # -- queries and rules ---------------------------------------------------------------------------------------

    def _query(self, query: query_ast.Query, params: Mapping[str, Any] | Sequence[Any] | None) -> QueryResult:
        inputs, slots = _split_params(query, params)
        plan = plan_query(
            query,
            self._rules_program(),
            as_of=self._as_of(query),
            valid_at=_valid_at(query),
            inputs=inputs,
            slots=slots,
            aggregates=self._aggregates,
            views=EPISODE_VIEWS,
        )
        try:
            for fixpoint in plan.fixpoints:
                fixpoint.run(self.db.conn, plan.params)
            rows = self.db.query(plan.sql, plan.params)
        except sqlite3.Error as exc:
            raise DatalogError(f"the query could not run: {exc}", query.pos) from exc
        finally:
            for fixpoint in plan.fixpoints:
                for table in fixpoint.tables:
                    self.db.execute(f"DROP TABLE IF EXISTS {table}")
        return QueryResult(plan.columns, plan.answer(rows))

    def _as_of(self, query: query_ast.Query) -> int | None:
        if query.as_of is None or isinstance(query.as_of, int):
            return query.as_of
        moment = to_ms(parse_time(query.as_of))
        return self.db.one("SELECT coalesce(max(tx), 0) FROM fact_tx WHERE at <= ?", (moment,))[0]

    def _rules_program(self) -> Program:
        version = tuple(self.db.one("SELECT count(*), coalesce(max(id), 0), coalesce(sum(id), 0) FROM fact_rules"))
        if self._program is None or self._program[0] != version:
            stored = [parse_rule(text) for (text,) in self.db.query("SELECT text FROM fact_rules ORDER BY id")]
            self._program = (version, Program(stored))
        return self._program[1]

    def _add_rule(self, rule: query_ast.Rule) -> RuleResult:
        program = Program([*(parse_rule(r.text) for r in self.rules()), rule])
        dry_run = QueryRelations(program, Context(as_of=None, valid_at=None, slots={}), lenient=True)
        dry_run.relation(rule.name, {}, len(rule.head), rule.pos)  # reports unbound variables and the like now
        cursor = self.db.execute(
            "INSERT INTO fact_rules(name, arity, text, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(text) DO NOTHING",
            (rule.name, len(rule.head), rule.text, int(time.time() * 1000)),
        )
        return RuleResult(rule.name, len(rule.head), cursor.rowcount == 1)


def _redacted(facts: Sequence[query_ast.FactSpec]) -> tuple[query_ast.FactSpec, ...]:
    """The facts with secrets in their text values replaced (keywords and other types are no text)."""
    return tuple(replace(f, v=redact(f.v)) if type(f.v) is str else f for f in facts)


def _entity_arg(entity: Any) -> Keyword | uuid.UUID:
    """An entity from Python: a Keyword, a UUID, or text such as ":alice" or a UUID string."""
    if isinstance(entity, (Keyword, uuid.UUID)):
        return entity
    if isinstance(entity, str):
        try:
            return decode_entity(entity)
        except ValueError:
            raise InvalidInput(f"an entity is a keyword such as :alice or a UUID, not {entity!r}") from None
    raise InvalidInput(f"an entity is a keyword or a UUID, not {entity!r}")


def _valid_at(query: query_ast.Query) -> int | None:
    if isinstance(query.valid_at, query_ast.AnyValidTime):
        return None
    if query.valid_at is None:
        return int(time.time() * 1000)
    return to_ms(parse_time(query.valid_at))


def _split_params(
    query: query_ast.Query, params: Mapping[str, Any] | Sequence[Any] | None
) -> tuple[list[Any], dict[str, Value]]:
    """Query parameters -> (:in values in order, $slot values by name)."""
    if params is None:
        return [], {}
    if not isinstance(params, Mapping):
        return list(params), {}
    named = {str(k).lstrip("?$"): v for k, v in params.items()}
    inputs = []
    for spec in query.inputs:
        if not isinstance(spec, (query_ast.InScalar, query_ast.InCollection)):
            raise InvalidInput("tuple and relation :in parameters must be passed as a sequence, in :in order")
        name = spec.var.name[1:]
        if name not in named:
            raise InvalidInput(f"missing value for :in parameter {spec.var.name}")
        inputs.append(named[name])
    return inputs, named


class StanceMover:
    """The fact graph's part of a project merge (core/project_movers.py; `tempera/__init__.py` registers it): a
    stance names its project in its entity and its `:project` value, where core's re-keying of `project_id`
    columns cannot see it. A database without the fact tables is left without them."""

    def count(self, db: Database, source_id: str) -> int:
        return len(FactStore(db).project_stances(source_id)) if has_fact_graph(db) else 0

    def move(self, db: Database, source_id: str, target_id: str) -> None:
        if has_fact_graph(db):
            FactStore(db).move_project(source_id, target_id)
