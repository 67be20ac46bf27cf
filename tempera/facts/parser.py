"""EDN forms -> command AST, in minigraf's dialect.

Errors follow minigraf's split: text whose shape is wrong (unknown command, empty bind slot, a query without
:find) is a `DatalogSyntaxError`; well-shaped text that cannot mean anything (a fact with two elements, a bad
UUID, `not` inside `not`) is a plain `DatalogError`. Binding errors (unbound variables) are found by the compiler.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from functools import lru_cache
from typing import Any

from tempera.core.errors import InvalidInput
from tempera.facts import query_ast
from tempera.facts.edn import Atom, Form, Seq, Symbol, Tagged, form_to_edn, read_one
from tempera.facts.errors import DatalogError, DatalogSyntaxError, Pos
from tempera.facts.values import Keyword, parse_time, to_ms

COMMANDS = ("transact", "retract", "query", "rule")
RESERVED = {"not", "not-join", "or", "or-join", "and"}
PLAIN_AGGREGATES = {"count", "count-distinct", "sum", "sum-distinct", "min", "max", "avg"}
WINDOW_ONLY = {"rank", "dense-rank", "row-number"}
NOT_WINDOWED = {"count-distinct", "sum-distinct"}
QUERY_SECTIONS = {":find", ":with", ":in", ":where"}
QUERY_OPTIONS = {":as-of", ":valid-at", ":limit", ":order-by", ":max-results", ":max-derived-facts"}
QUERY_FLAGS = {":any-valid-time"}
VALID_TIME_KEYS = {Keyword(":valid-from"): "valid_from", Keyword(":valid-to"): "valid_to"}
INLINE_VALID_TIME_KEYS = {Keyword(":db/valid-from"): "valid_from", Keyword(":db/valid-to"): "valid_to"}


def parse_command(text: str) -> query_ast.Command:
    """One command: (transact ...), (retract ...), (query [...]) or (rule [...])."""
    return command_from_form(read_one(text))


def command_from_form(form: Form) -> query_ast.Command:
    if not isinstance(form, Seq) or form.kind != "list":
        raise DatalogSyntaxError("expected a command such as (query [...]) or (transact [...])", form.pos)
    if not form.items:
        raise DatalogSyntaxError("empty command: expected transact, retract, query or rule", form.pos)
    head = form.items[0]
    name = head.value if isinstance(head, Atom) and isinstance(head.value, Symbol) else None
    if name not in COMMANDS:
        shown = form_to_edn(head)
        raise DatalogSyntaxError(f"unknown command {shown} (expected transact, retract, query or rule)", head.pos)
    args = form.items[1:]
    if name == "transact":
        return _transact(args, form.pos)
    if name == "retract":
        if len(args) != 1 or not _is_vector(args[0]):
            raise DatalogSyntaxError("retract takes one vector of facts: (retract [[e a v] ...])", form.pos)
        return query_ast.Retract(_facts(args[0], retract=True, defaults={}), form.pos)
    if len(args) != 1 or not _is_vector(args[0]):
        raise DatalogSyntaxError(f"{name} takes one vector: ({name} [...])", form.pos)
    if name == "query":
        return query_ast.QueryCommand(query_from_form(args[0]))
    return query_ast.RuleCommand(rule_from_form(args[0]))


@lru_cache(maxsize=512)
def parse_query(text: str) -> query_ast.Query:
    """A query as `[:find ...]` or as `(query [:find ...])`. Cached: hooks ask the same queries again and again."""
    return _vector_or_command(text, "query")


def parse_facts(
    text: str, *, retract: bool, valid_from: int | None = None, valid_to: int | None = None
) -> tuple[query_ast.FactSpec, ...]:
    """A vector of facts `[[e a v] ...]`, for the Python API's transact and retract."""
    form = read_one(text)
    if not _is_vector(form):
        raise DatalogSyntaxError("expected a vector of facts: [[e a v] ...]", form.pos)
    defaults = {"valid_from": valid_from, "valid_to": valid_to}
    return _facts(form, retract=retract, defaults=defaults)


def parse_value(text: str) -> Any:
    """An EDN value for a query parameter: a literal, or a vector/list of values (nested)."""
    return _value(read_one(text))


def _value(form: Form) -> Any:
    return _literal(form) if isinstance(form, Atom) else [_value(item) for item in form.items]


def parse_rule(text: str) -> query_ast.Rule:
    """A rule as `(rule [(head ?a) body ...])` or as the bare vector."""
    return _vector_or_command(text, "rule")


def _vector_or_command(text: str, wanted: str) -> Any:
    form = read_one(text)
    if _is_vector(form):
        return query_from_form(form) if wanted == "query" else rule_from_form(form)
    command = command_from_form(form)
    if wanted == "query" and isinstance(command, query_ast.QueryCommand):
        return command.query
    if wanted == "rule" and isinstance(command, query_ast.RuleCommand):
        return command.rule
    example = "[:find ... :where ...]" if wanted == "query" else "(rule [(name ?a ?b) clause ...])"
    raise DatalogSyntaxError(f"expected a {wanted}: {example}", form.pos)


# -- transact / retract ------------------------------------------------------------------------------------------


def _transact(args: tuple[Form, ...], pos: Pos) -> query_ast.Transact:
    if not args:
        raise DatalogSyntaxError("transact needs a vector of facts: (transact [[e a v] ...])", pos)
    defaults: dict[str, int | None] = {}
    if isinstance(args[0], Seq) and args[0].kind == "map":
        defaults = _valid_time_pairs(args[0].items, VALID_TIME_KEYS)
        args = args[1:]
    if len(args) != 1 or not _is_vector(args[0]):
        raise DatalogSyntaxError(
            "transact takes an optional {:valid-from .. :valid-to ..} map and one vector of facts", pos
        )
    return query_ast.Transact(_facts(args[0], retract=False, defaults=defaults), pos)


def _facts(form: Seq, *, retract: bool, defaults: dict[str, int | None]) -> tuple[query_ast.FactSpec, ...]:
    facts = []
    for item in form.items:
        if not _is_vector(item):
            raise DatalogError("each fact must be a vector [entity attribute value]", item.pos)
        facts.append(_fact(item, retract=retract, defaults=defaults))
    return tuple(facts)


def _fact(form: Seq, *, retract: bool, defaults: dict[str, int | None]) -> query_ast.FactSpec:
    items = form.items
    if len(items) < 3:
        raise DatalogError(f"a fact needs an entity, an attribute and a value; got {len(items)} element(s)", form.pos)
    times = dict(defaults)
    extra = items[3:]
    if retract and extra:
        raise DatalogError(
            f"retract takes facts of exactly 3 elements [entity attribute value]; got {len(items)}", form.pos
        )
    if len(extra) == 1 and isinstance(extra[0], Seq) and extra[0].kind == "map":
        times.update(_valid_time_pairs(extra[0].items, VALID_TIME_KEYS))
    elif extra:
        if len(extra) % 2 or not all(isinstance(k, Atom) and k.value in INLINE_VALID_TIME_KEYS for k in extra[0::2]):
            raise DatalogError(
                f"a fact has 3 elements and an optional {{:valid-from .. :valid-to ..}} map; got {len(items)} elements",
                form.pos,
            )
        times.update(_valid_time_pairs(extra, INLINE_VALID_TIME_KEYS))
    entity = _literal(items[0])
    if not isinstance(entity, (Keyword, uuid.UUID)):
        raise DatalogError("the entity of a fact must be a keyword or a #uuid", items[0].pos)
    attribute = _literal(items[1])
    if not isinstance(attribute, Keyword):
        raise DatalogError("the attribute of a fact must be a keyword", items[1].pos)
    valid_from, valid_to = times.get("valid_from"), times.get("valid_to")
    if valid_from is not None and valid_to is not None and valid_to <= valid_from:
        raise DatalogError("valid-to must be later than valid-from", form.pos)
    return query_ast.FactSpec(entity, attribute, _literal(items[2]), valid_from, valid_to, form.pos)


def _valid_time_pairs(items: tuple[Form, ...], keys: dict[Keyword, str]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for key, value in zip(items[0::2], items[1::2]):
        name = keys.get(key.value) if isinstance(key, Atom) else None
        if name is None:
            allowed = " or ".join(str(k) for k in keys)
            raise DatalogError(f"unknown option {form_to_edn(key)} (expected {allowed})", key.pos)
        out[name] = _time_ms(value)
    return out


def _time_ms(form: Form) -> int:
    value = _literal(form)
    if isinstance(value, str) and not isinstance(value, Keyword):
        try:
            return to_ms(parse_time(value))
        except InvalidInput as exc:
            raise DatalogError(str(exc), form.pos) from None
    if isinstance(value, datetime):
        return to_ms(value)
    raise DatalogError("a time must be an ISO date/time string or an #inst", form.pos)


def _literal(form: Form) -> Any:
    """A constant: an atom that is not a symbol, with tagged literals checked and converted."""
    if not isinstance(form, Atom):
        raise DatalogError("expected a single value, not a collection", form.pos)
    value = form.value
    if isinstance(value, Symbol):
        raise DatalogError(f"expected a value, found the symbol {value}", form.pos)
    if isinstance(value, Tagged):
        return _tagged(value, form.pos)
    return value


def _tagged(value: Tagged, pos: Pos) -> Any:
    if value.tag == "uuid":
        try:
            return uuid.UUID(value.text)
        except ValueError:
            raise DatalogError(f'invalid UUID in #uuid "{value.text}"', pos) from None
    try:
        return parse_time(value.text)
    except InvalidInput:
        raise DatalogError(f'invalid instant in #inst "{value.text}"', pos) from None


# -- queries -----------------------------------------------------------------------------------------------------


def query_from_form(form: Seq) -> query_ast.Query:
    sections: dict[str, list[Form]] = {}
    options: dict[str, Form] = {}
    flags: set[str] = set()
    current: list[Form] | None = None
    items = form.items
    i = 0
    while i < len(items):
        item = items[i]
        key = str.__str__(item.value) if isinstance(item, Atom) and isinstance(item.value, Keyword) else None
        if key is None:
            if current is None:
                raise DatalogSyntaxError("a query starts with :find", item.pos)
            current.append(item)
            i += 1
            continue
        if key in sections or key in options or key in flags:
            raise DatalogSyntaxError(f"{key} appears twice in the query", item.pos)
        if key in QUERY_SECTIONS:
            current = sections[key] = []
        elif key in QUERY_FLAGS:
            flags.add(key)
            current = None
        elif key in QUERY_OPTIONS:
            if i + 1 >= len(items):
                raise DatalogSyntaxError(f"{key} needs a value", item.pos)
            options[key] = items[i + 1]
            current = None
            i += 1
        else:
            raise DatalogSyntaxError(f"unknown query clause {key}", item.pos)
        i += 1
    if not sections.get(":find"):
        raise DatalogSyntaxError("a query needs :find and at least one variable or aggregate", form.pos)
    find = tuple(_find_elem(f) for f in sections[":find"])
    with_ = tuple(_var(f, "a :with variable") for f in sections.get(":with", []))
    if with_ and not any(isinstance(f, query_ast.Aggregate) for f in find):
        raise DatalogError(":with only makes sense with an aggregate in :find", form.pos)
    valid_at: str | query_ast.AnyValidTime | None = query_ast.AnyValidTime() if ":any-valid-time" in flags else None
    if ":valid-at" in options:
        if valid_at is not None:
            raise DatalogSyntaxError("use either :valid-at or :any-valid-time", options[":valid-at"].pos)
        valid_at = _valid_at(options[":valid-at"])
    return query_ast.Query(
        find=find,
        where=_clauses(sections.get(":where", []), in_not=False),
        pos=form.pos,
        with_=with_,
        inputs=tuple(spec for f in sections.get(":in", []) if (spec := _input(f)) is not None),
        as_of=_as_of(options[":as-of"]) if ":as-of" in options else None,
        valid_at=valid_at,
        order_by=_order_by(options[":order-by"], find) if ":order-by" in options else (),
        limit=_limit(options),
        max_derived_facts=_count(options[":max-derived-facts"], ":max-derived-facts", minimum=1)
        if ":max-derived-facts" in options
        else None,
    )


def _limit(options: dict[str, Form]) -> int | None:
    """:limit and :max-results both cap the rows returned; the smaller wins."""
    caps = [_count(options[key], key, minimum=0) for key in (":limit", ":max-results") if key in options]
    return min(caps) if caps else None


def _count(form: Form, what: str, *, minimum: int) -> int:
    value = form.value if isinstance(form, Atom) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise DatalogError(f"{what} needs an integer >= {minimum}", form.pos)
    return value


def _as_of(form: Form) -> int | str:
    value = form.value if isinstance(form, Atom) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and not isinstance(value, (Keyword, Symbol)):
        _time_ms(form)
        return value
    raise DatalogError(":as-of takes a transaction number or an ISO timestamp", form.pos)


def _valid_at(form: Form) -> str | query_ast.AnyValidTime:
    value = form.value if isinstance(form, Atom) else None
    if value == Keyword(":any-valid-time"):
        return query_ast.AnyValidTime()
    if isinstance(value, str) and not isinstance(value, (Keyword, Symbol)):
        _time_ms(form)
        return value
    raise DatalogError(":valid-at takes an ISO date/time string or :any-valid-time", form.pos)


def _find_elem(form: Form) -> query_ast.FindElem:
    if isinstance(form, Seq) and form.kind == "list":
        return _aggregate(form)
    return _var(form, "a :find element")


def _aggregate(form: Seq) -> query_ast.Aggregate:
    items = list(form.items)
    fn = _symbol(items[0]) if items else None
    if fn is None:
        raise DatalogError("an aggregate looks like (count ?x) or (sum ?x :over (...))", form.pos)
    arg: query_ast.Var | None = None
    over: query_ast.Window | None = None
    rest = items[1:]
    if rest and not (isinstance(rest[0], Atom) and rest[0].value == Keyword(":over")):
        arg = _var(rest[0], f"the argument of {fn}")
        rest = rest[1:]
    if rest:
        if len(rest) != 2 or not (isinstance(rest[0], Atom) and rest[0].value == Keyword(":over")):
            raise DatalogError(f"unexpected arguments in ({fn} ...)", form.pos)
        over = _window(rest[1])
    if fn in WINDOW_ONLY:
        if over is None:
            raise DatalogError(f"{fn} is a window function and needs :over (...)", form.pos)
        if arg is not None:
            raise DatalogError(f"{fn} takes no argument, only :over (...)", form.pos)
    elif arg is None:
        raise DatalogError(f"({fn} ...) needs a variable to aggregate", form.pos)
    if over is not None and (fn in NOT_WINDOWED or fn not in PLAIN_AGGREGATES | WINDOW_ONLY):
        raise DatalogError(f"{fn} cannot be used as a window function (with :over)", form.pos)
    return query_ast.Aggregate(fn, arg, over, form_to_edn(form), form.pos)


def _window(form: Form) -> query_ast.Window:
    if not (isinstance(form, Seq) and form.kind == "list"):
        raise DatalogError(":over takes a list such as (:partition-by ?d :order-by ?x :desc)", form.pos)
    partition: list[query_ast.Var] = []
    order: list[tuple[query_ast.Var, bool]] = []
    mode = None
    for item in form.items:
        value = item.value if isinstance(item, Atom) else None
        if value in (Keyword(":partition-by"), Keyword(":order-by")):
            mode = value
        elif value in (Keyword(":desc"), Keyword(":asc")) and mode == Keyword(":order-by") and order:
            order[-1] = (order[-1][0], value == Keyword(":desc"))
        elif mode == Keyword(":partition-by"):
            partition.append(_var(item, "a :partition-by variable"))
        elif mode == Keyword(":order-by"):
            order.append((_var(item, "an :order-by variable"), False))
        else:
            raise DatalogError("expected :partition-by or :order-by", item.pos)
    return query_ast.Window(tuple(partition), tuple(order))


def _order_by(form: Form, find: tuple[query_ast.FindElem, ...]) -> tuple[query_ast.OrderKey, ...]:
    items = form.items if isinstance(form, Seq) and form.kind == "vector" else (form,)
    keys: list[query_ast.OrderKey] = []
    for item in items:
        value = item.value if isinstance(item, Atom) else None
        if value in (Keyword(":asc"), Keyword(":desc")):
            if not keys:
                raise DatalogError(f"{value} must follow a :find element", item.pos)
            keys[-1] = query_ast.OrderKey(keys[-1].column, value == Keyword(":desc"))
            continue
        target = _find_elem(item)
        for column, elem in enumerate(find):
            same = (
                elem == target
                if isinstance(elem, query_ast.Var)
                else (isinstance(target, query_ast.Aggregate) and elem.text == target.text)
            )
            if same:
                keys.append(query_ast.OrderKey(column, False))
                break
        else:
            raise DatalogError(f":order-by {form_to_edn(item)} is not one of the :find elements", item.pos)
    return tuple(keys)


def _input(form: Form) -> query_ast.InSpec | None:
    if isinstance(form, Atom) and form.value == "$":
        return None  # the database itself, as in Datomic's `:in $ ?x`
    if isinstance(form, Seq) and form.kind == "vector":
        items = form.items
        if len(items) == 2 and isinstance(items[1], Atom) and items[1].value == "...":
            return query_ast.InCollection(_var(items[0], "an :in collection variable"))
        if len(items) == 1 and _is_vector(items[0]):
            return query_ast.InRelation(tuple(_in_term(i) for i in items[0].items))
        return query_ast.InTuple(tuple(_in_term(i) for i in items))
    return query_ast.InScalar(_var(form, "an :in variable"))


def _in_term(form: Form) -> query_ast.Var | query_ast.Wildcard:
    term = _term(form)
    if not isinstance(term, (query_ast.Var, query_ast.Wildcard)):
        raise DatalogError("an :in binding holds variables only", form.pos)
    return term


# -- where clauses -----------------------------------------------------------------------------------------------


def _clauses(forms: list[Form] | tuple[Form, ...], *, in_not: bool) -> tuple[query_ast.Clause, ...]:
    out: list[query_ast.Clause] = []
    for form in forms:
        out.extend(_clause(form, in_not=in_not))
    return tuple(out)


def _clause(form: Form, *, in_not: bool) -> list[query_ast.Clause]:
    if isinstance(form, Seq) and form.kind == "vector":
        return [_vector_clause(form)]
    if not (isinstance(form, Seq) and form.kind == "list" and form.items and _symbol(form.items[0])):
        raise DatalogError("expected a pattern [e a v], an expression [(f ...)] or a call (name ...)", form.pos)
    name = _symbol(form.items[0])
    args = form.items[1:]
    if name in ("not", "not-join"):
        if in_not:
            raise DatalogError(f"({name} ...) cannot be nested inside not", form.pos)
        join = _join_vars(args[0] if args else None, name, form.pos) if name == "not-join" else None
        body = _clauses(args[1:] if join is not None else args, in_not=True)
        if not body:
            raise DatalogError(f"({name} ...) needs at least one clause", form.pos)
        return [query_ast.NotJoin(join, body, form.pos) if join is not None else query_ast.Not(body, form.pos)]
    if name in ("or", "or-join"):
        if in_not:
            raise DatalogError(f"({name} ...) cannot appear inside not", form.pos)
        join = _join_vars(args[0] if args else None, name, form.pos) if name == "or-join" else None
        branches = tuple(_branch(b) for b in (args[1:] if join is not None else args))
        if not branches:
            raise DatalogError(f"({name} ...) needs at least one branch", form.pos)
        return [query_ast.OrJoin(join, branches, form.pos) if join is not None else query_ast.Or(branches, form.pos)]
    if name == "and":
        return list(_clauses(args, in_not=in_not))
    return [query_ast.RuleCall(name, tuple(_term(a) for a in args), form.pos)]


def _branch(form: Form) -> tuple[query_ast.Clause, ...]:
    if isinstance(form, Seq) and form.kind == "list" and form.items and _symbol(form.items[0]) == "and":
        return _clauses(form.items[1:], in_not=False)
    return tuple(_clause(form, in_not=False))


def _join_vars(form: Form | None, name: str, pos: Pos) -> tuple[query_ast.Var, ...]:
    if not _is_vector(form):
        raise DatalogError(f"({name} [?vars] ...) needs a vector of join variables", pos)
    return tuple(_var(v, f"a {name} variable") for v in form.items)


def _vector_clause(form: Seq) -> query_ast.Clause:
    items = form.items
    if items and isinstance(items[0], Seq) and items[0].kind == "list":
        call = _call(items[0])
        if len(items) == 1:
            return query_ast.Predicate(call, form.pos)
        if len(items) == 2:
            return query_ast.Binding(call, _var(items[1], "the result of an expression"), form.pos)
        raise DatalogError("an expression clause is [(f args)] or [(f args) ?result]", form.pos)
    if len(items) != 3:
        raise DatalogError(f"a pattern needs [entity attribute value]; got {len(items)} element(s)", form.pos)
    e, a, v = (_term(i) for i in items)
    return query_ast.Pattern(e, a, v, form.pos)


def _call(form: Seq) -> query_ast.Call:
    fn = _symbol(form.items[0]) if form.items else None
    if fn is None:
        raise DatalogError("an expression starts with a function name, as in (> ?x 1)", form.pos)
    args: list[query_ast.Expr] = []
    for item in form.items[1:]:
        if isinstance(item, Seq) and item.kind == "list":
            args.append(_call(item))
            continue
        term = _term(item, anonymous_is_var=True)
        if isinstance(term, query_ast.Wildcard):
            raise DatalogError("_ cannot be used inside an expression", item.pos)
        args.append(term)
    if fn == "matches?" and len(args) == 2 and isinstance(args[1], query_ast.Const) and isinstance(args[1].value, str):
        try:
            re.compile(args[1].value)
        except re.error as exc:
            raise DatalogError(f"invalid regular expression {args[1].value!r}: {exc}", form.pos) from None
    return query_ast.Call(fn, tuple(args), form.pos)


def _term(form: Form, *, anonymous_is_var: bool = False) -> query_ast.Term:
    if isinstance(form, Atom) and isinstance(form.value, Symbol):
        name = str(form.value)
        if name == "_":
            return query_ast.Wildcard()
        if name.startswith("?") and len(name) > 1:
            if name.startswith("?_") and not anonymous_is_var:
                return query_ast.Wildcard()
            return query_ast.Var(name)
        if name.startswith("$"):
            if len(name) == 1:
                raise DatalogSyntaxError("empty bind slot: $ needs a name, as in $city", form.pos)
            return query_ast.Slot(name[1:])
        raise DatalogError(f"unexpected symbol {name}: variables start with ?", form.pos)
    return query_ast.Const(_literal(form))


def _var(form: Form, what: str) -> query_ast.Var:
    term = _term(form, anonymous_is_var=True)
    if not isinstance(term, query_ast.Var):
        raise DatalogError(f"{what} must be a variable such as ?x", form.pos)
    return term


# -- rules -------------------------------------------------------------------------------------------------------


def rule_from_form(form: Seq) -> query_ast.Rule:
    items = form.items
    head = items[0] if items else None
    if not (isinstance(head, Seq) and head.kind == "list" and head.items and _symbol(head.items[0])):
        raise DatalogSyntaxError("a rule looks like (rule [(name ?a ?b) clause ...])", form.pos)
    name = _symbol(head.items[0])
    if name in RESERVED:
        raise DatalogError(f"{name} is reserved and cannot name a rule", head.pos)
    args = tuple(_term(a, anonymous_is_var=True) for a in head.items[1:])
    for arg, arg_form in zip(args, head.items[1:]):
        if not isinstance(arg, (query_ast.Var, query_ast.Const)):
            raise DatalogError("a rule head holds variables and constants only", arg_form.pos)
    body = _clauses(items[1:], in_not=False)
    if not body:
        raise DatalogError(f"rule {name} has an empty body", form.pos)
    return query_ast.Rule(name, args, body, form_to_edn(form), form.pos)


def _symbol(form: Form) -> str | None:
    return str(form.value) if isinstance(form, Atom) and isinstance(form.value, Symbol) else None


def _is_vector(form: Form | None) -> bool:
    return isinstance(form, Seq) and form.kind == "vector"
