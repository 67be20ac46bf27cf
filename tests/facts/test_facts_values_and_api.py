"""Value types round-trip with their types; the Python API (transact/retract/history/query params) works."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from tempera.facts import DatalogError, FactStore, Keyword
from tempera.facts.edn import to_edn
from tempera.facts.parser import parse_value

K = Keyword


def test_every_value_type_round_trips(store: FactStore) -> None:
    u = uuid.UUID("550e8400-e29b-41d4-a716-446655440000")
    moment = datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc)
    values = ["hello world", 42, -7, 3.14, True, False, None, K(":other"), u, moment, ":looks-like-a-keyword", "1"]
    store.transact([(K(":v"), K(f":attr/{i}"), v) for i, v in enumerate(values)], reason="types")
    rows = dict(store.query("[:find ?a ?v :where [:v ?a ?v]]").rows)
    got = [rows[K(f":attr/{i}")] for i in range(len(values))]
    assert got == values
    assert [type(g) for g in got] == [type(v) for v in values]


def test_keyword_is_not_a_string() -> None:
    assert K(":alice") != ":alice" and K("alice") == K(":alice")
    assert str(K(":alice")) == ":alice" and K(":alice").name == "alice"
    assert len({K(":a"), ":a"}) == 2


def test_typed_equality_int_float_string(store: FactStore) -> None:
    store.transact([(K(":i"), K(":v"), 1), (K(":f"), K(":v"), 1.0), (K(":s"), K(":v"), "1")], reason="types")
    assert store.query("[:find ?e :where [?e :v 1]]").rows == [(K(":i"),)]
    assert store.query("[:find ?e :where [?e :v 1.0]]").rows == [(K(":f"),)]
    assert store.query('[:find ?e :where [?e :v "1"]]').rows == [(K(":s"),)]
    assert len(store.query("[:find ?e :where [?e :v ?x] [(< ?x 2)]]").rows) == 2  # numbers compare across types


def test_uuid_entities_and_references(store: FactStore) -> None:
    store.execute(
        '(transact [[#uuid "550e8400-e29b-41d4-a716-446655440000" :name "U"] '
        '[:k :ref #uuid "550e8400-e29b-41d4-a716-446655440000"]])',
        reason="uuids",
    )
    rows = store.query("[:find ?x ?n :where [:k :ref ?x] [?x :name ?n]]").rows
    assert rows == [(uuid.UUID("550e8400-e29b-41d4-a716-446655440000"), "U")]


def test_history_lists_assertions_and_retractions_with_reasons(store: FactStore) -> None:
    store.transact("[[:alice :age 30]]", reason="birth records")
    store.retract("[[:alice :age 30]]", reason="birthday")
    store.transact("[[:alice :age 31]]", reason="birthday")
    ops = [(tx, op, value, reason) for tx, _at, op, _a, value, _vf, _vt, reason in store.history(":alice").rows]
    assert ops == [(1, "assert", 30, "birth records"), (2, "retract", 30, "birthday"), (3, "assert", 31, "birthday")]


def test_python_tuples_and_edn_text_are_both_accepted(store: FactStore) -> None:
    store.transact([(":a", ":likes", K(":b"))], reason="tuples", valid_from="2020-01-01")
    rows = store.query('[:find ?x :valid-at "2021-01-01" :where [:a :likes ?x]]').rows
    assert rows == [(K(":b"),)]


def test_in_parameters_scalar_collection_tuple_relation(store: FactStore) -> None:
    store.transact("[[:a :n 1] [:b :n 2] [:c :n 3]]", reason="data")
    q = "[:find ?e :in ?n :where [?e :n ?n]]"
    assert store.query(q, [2]).rows == [(K(":b"),)]
    assert store.query(q, {"n": 3}).rows == [(K(":c"),)]
    q = "[:find ?e :in $ [?n ...] :where [?e :n ?n]]"
    assert store.query(q, [[1, 3]]).rows == [(K(":a"),), (K(":c"),)]
    q = "[:find ?e ?n :in [?e ?n] :where [?e :n ?n]]"
    assert store.query(q, [(K(":a"), 1)]).rows == [(K(":a"), 1)]
    q = "[:find ?e :in [[?e ?n]] :where [?e :n ?n]]"
    assert store.query(q, [[(K(":a"), 1), (K(":b"), 9)]]).rows == [(K(":a"),)]
    with pytest.raises(DatalogError, match=":in parameter"):
        store.query("[:find ?e :in ?n :where [?e :n ?n]]", [])


def test_limit_and_order_by(store: FactStore) -> None:
    store.transact('[[:a :n 1] [:b :n 3] [:c :n 2] [:a :g "x"] [:b :g "x"] [:c :g "y"]]', reason="data")
    q = "[:find ?e ?n :where [?e :n ?n] :order-by [?n :desc] :limit 2]"
    assert store.query(q).rows == [(K(":b"), 3), (K(":c"), 2)]
    q = "[:find ?g (count ?e) :where [?e :g ?g] :order-by [(count ?e) :desc]]"
    assert store.query(q).rows == [("x", 2), ("y", 1)]
    with pytest.raises(DatalogError, match="not one of the :find elements"):
        store.query("[:find ?e :where [?e :n ?n] :order-by ?n]")


def test_aggregates_avg_udf_and_windows(store: FactStore) -> None:
    store.transact('[[:a :s 10] [:b :s 20] [:c :s 30] [:a :d "x"] [:b :d "x"] [:c :d "y"]]', reason="data")
    assert store.query("[:find (avg ?s) :where [?e :s ?s]]").rows == [(20.0,)]
    store.register_aggregate("median", lambda xs: sorted(xs)[len(xs) // 2])
    assert store.query("[:find (median ?s) :where [?e :s ?s]]").rows == [(20,)]
    q = "[:find ?e (row-number :over (:order-by ?s :desc)) :where [?e :s ?s]]"
    assert store.query(q).rows == [(K(":a"), 3), (K(":b"), 2), (K(":c"), 1)]
    q = "[:find ?e (sum ?s :over (:partition-by ?d :order-by ?s)) :where [?e :s ?s] [?e :d ?d]]"
    assert store.query(q).rows == [(K(":a"), 10), (K(":b"), 30), (K(":c"), 30)]
    with pytest.raises(DatalogError, match="unknown aggregate"):
        store.query("[:find (mode ?s) :where [?e :s ?s]]")
    with pytest.raises(DatalogError, match="cannot mix"):
        store.query("[:find (count ?e) (rank :over (:order-by ?s)) :where [?e :s ?s]]")


def test_count_of_nothing_is_zero_but_sum_of_nothing_is_no_row(store: FactStore) -> None:
    assert store.query("[:find (count ?e) :where [?e :nothing ?v]]").rows == [(0,)]
    assert store.query("[:find (sum ?v) :where [?e :nothing ?v]]").rows == []


def test_errors_name_the_problem_and_position(store: FactStore) -> None:
    with pytest.raises(DatalogError, match=r"unknown rule missing \(at line 2, column 9\)"):
        store.query("[:find ?x\n :where (missing ?x)]")
    with pytest.raises(DatalogError, match="entity position takes a keyword"):
        store.query('[:find ?x :where ["alice" :name ?x]]')


def test_edn_printer_reads_back() -> None:
    values = ['a "quoted"\nline\t\\', K(":k"), None, 2.5, -7, True, uuid.UUID(int=5)]
    assert parse_value("[" + " ".join(to_edn(v) for v in values) + "]") == values
