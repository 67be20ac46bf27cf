"""Rules: persisted, recursive (cycles, mutual, non-linear), stratified negation, constant specialisation."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from tempera.core.migrations import connect
from tempera.facts import DatalogError, FactStore, Keyword

K = Keyword
DEPENDS = [
    "(rule [(depends ?a ?b) [?a :depends-on ?b]])",
    "(rule [(depends ?a ?b) [?a :depends-on ?m] (depends ?m ?b)])",
]


def add_rules(store: FactStore, *rules: str) -> None:
    for rule in rules:
        store.execute(rule)


def test_transitive_dependencies_with_a_cycle(store: FactStore) -> None:
    store.transact(
        "[[:a :depends-on :b] [:b :depends-on :c] [:c :depends-on :a] [:c :depends-on :d]]",
        reason="a cycle a->b->c->a and an exit to d",
    )
    add_rules(store, *DEPENDS)
    reach = {r[0] for r in store.query("[:find ?x :where (depends :a ?x)]").rows}
    assert reach == {K(":a"), K(":b"), K(":c"), K(":d")}
    assert store.query("[:find ?x :where (depends ?x :d)]").rows == [(K(":a"),), (K(":b"),), (K(":c"),)]
    assert store.query("[:find (count ?x) :where (depends ?x ?y)]").rows == [(12,)]  # a, b, c each reach 4
    assert store.query("[:find ?x :where (depends ?x ?x)]").rows == [(K(":a"),), (K(":b"),), (K(":c"),)]


def test_recursion_respects_transaction_and_valid_time(store: FactStore) -> None:
    add_rules(store, *DEPENDS)
    store.transact("[[:a :depends-on :b]]", reason="tx 1")
    store.execute('(transact {:valid-from "2020-01-01" :valid-to "2021-01-01"} [[:b :depends-on :c]])', reason="tx 2")
    assert store.query("[:find ?x :where (depends :a ?x)]").rows == [(K(":b"),)]
    rows = store.query("[:find ?x :valid-at :any-valid-time :where (depends :a ?x)]").rows
    assert rows == [(K(":b"),), (K(":c"),)]
    assert store.query("[:find ?x :as-of 1 :any-valid-time :where (depends :a ?x)]").rows == [(K(":b"),)]


def test_stratified_negation_in_rules(store: FactStore) -> None:
    store.transact(
        """[[:svc-a :depends-on :lib-old] [:svc-b :depends-on :lib-new] [:svc-c :depends-on :svc-a]
                       [:lib-old :deprecated true]
                       [:svc-a :kind :service] [:svc-b :kind :service] [:svc-c :kind :service]]""",
        reason="graph",
    )
    add_rules(
        store,
        *DEPENDS,
        "(rule [(tainted ?s) (depends ?s ?l) [?l :deprecated true]])",
        "(rule [(clean ?s) [?s :kind :service] (not (tainted ?s))])",
    )
    assert store.query("[:find ?s :where (clean ?s)]").rows == [(K(":svc-b"),)]


def test_negative_cycles_are_rejected_when_registered(store: FactStore) -> None:
    store.execute("(rule [(p ?x) [?x :v 1] (not (q ?x))])")
    with pytest.raises(DatalogError, match="unstratifiable: rule q negates p"):
        store.execute("(rule [(q ?x) [?x :v 1] (not (p ?x))])")
    assert [r.name for r in store.rules()] == ["p"]


def test_rules_persist_and_are_set_like(store: FactStore, tmp_path: Path) -> None:
    first = store.execute(DEPENDS[0])
    again = store.execute(DEPENDS[0].replace("]]", "]  ]"))
    assert first.added and not again.added
    store.execute(DEPENDS[1])
    reopened = FactStore(connect(tmp_path / "t.db"))
    assert [r.text for r in reopened.rules()] == [
        "[(depends ?a ?b) [?a :depends-on ?b]]",
        "[(depends ?a ?b) [?a :depends-on ?m] (depends ?m ?b)]",
    ]
    assert reopened.drop_rule("depends") == 2 and store.rules() == []


def test_rule_errors_are_reported_at_registration(store: FactStore) -> None:
    with pytest.raises(DatalogError, match=r"\?y in the head of rule r is not bound"):
        store.execute("(rule [(r ?x ?y) [?x :a 1]])")
    store.execute("(rule [(r ?x) [?x :a 1]])")
    with pytest.raises(DatalogError, match="defined with 1 arguments"):
        store.execute("(rule [(r ?x ?y) [?x :a ?y]])")
    with pytest.raises(DatalogError, match="takes 1 arguments, called with 2"):
        store.query("[:find ?x :where (r ?x ?y)]")


def test_mutual_and_non_linear_recursion(store: FactStore) -> None:
    store.transact([(K(f":n{i}"), K(":next"), K(f":n{i + 1}")) for i in range(6)], reason="chain")
    add_rules(
        store,
        "(rule [(even ?x ?y) [?x :next ?m] [?m :next ?y]])",
        "(rule [(even ?x ?y) (odd ?x ?m) [?m :next ?y]])",
        "(rule [(odd ?x ?y) [?x :next ?y]])",
        "(rule [(odd ?x ?y) (even ?x ?m) [?m :next ?y]])",
        "(rule [(tc ?x ?y) [?x :next ?y]])",
        "(rule [(tc ?x ?y) (tc ?x ?z) (tc ?z ?y)])",
    )
    assert store.query("[:find ?y :where (even :n0 ?y)]").rows == [(K(f":n{i}"),) for i in (2, 4, 6)]
    assert store.query("[:find ?y :where (odd :n0 ?y)]").rows == [(K(f":n{i}"),) for i in (1, 3, 5)]
    assert store.query("[:find (count ?y) :where (tc ?x ?y)]").rows == [(21,)]
    assert store.query("[:find ?x :where (tc ?x :n2)]").rows == [(K(":n0"),), (K(":n1"),)]


def test_constants_in_rule_heads_and_nested_calls(store: FactStore) -> None:
    store.transact("[[:a :v 1] [:b :v 2] [:a :link :b]]", reason="data")
    add_rules(
        store,
        "(rule [(level ?x :low) [?x :v 1]])",
        "(rule [(level ?x :high) [?x :v 2]])",
        "(rule [(low-neighbour ?x ?y) [?x :link ?y] (level ?x :low)])",
    )
    assert store.query("[:find ?x :where (level ?x :high)]").rows == [(K(":b"),)]
    assert store.query("[:find ?x ?l :where (level ?x ?l)]").rows == [(K(":a"), K(":low")), (K(":b"), K(":high"))]
    assert store.query("[:find ?y :where (low-neighbour :a ?y)]").rows == [(K(":b"),)]


def test_max_derived_facts_caps_recursion(store: FactStore) -> None:
    store.transact([(K(f":n{i}"), K(":next"), K(f":n{i + 1}")) for i in range(50)], reason="chain")
    add_rules(store, "(rule [(r ?x ?y) [?x :next ?y]])", "(rule [(r ?x ?y) (r ?x ?m) [?m :next ?y]])")
    assert len(store.query("[:find ?x ?y :where (r ?x ?y) :max-derived-facts 100]").rows) == 100


@pytest.mark.parametrize("seed", range(6))
def test_specialised_calls_agree_with_the_full_relation(store: FactStore, seed: int) -> None:
    """Calls with constant or pattern-bound arguments give what filtering the unspecialised relation gives."""
    rng = random.Random(seed)
    nodes = [K(f":n{i}") for i in range(12)]
    marked = set(rng.sample(nodes, 3))
    store.transact(
        {(rng.choice(nodes), K(":e"), rng.choice(nodes)) for _ in range(20)} | {(n, K(":mark"), True) for n in marked},
        reason="random graph",
    )
    add_rules(
        store,
        "(rule [(right ?x ?y) [?x :e ?y]])",
        "(rule [(right ?x ?y) [?x :e ?z] (right ?z ?y)])",
        "(rule [(left ?x ?y) [?x :e ?y]])",
        "(rule [(left ?x ?y) (left ?x ?z) [?z :e ?y]])",
    )
    for rule, other in (("right", "left"), ("left", "right")):
        full = set(store.query(f"[:find ?x ?y :where ({rule} ?x ?y)]").rows)
        assert full == set(store.query(f"[:find ?x ?y :where ({other} ?x ?y)]").rows)
        for n in nodes[:4]:
            assert {r[0] for r in store.query(f"[:find ?y :where ({rule} {n} ?y)]").rows} == {
                y for x, y in full if x == n
            }
            assert {r[0] for r in store.query(f"[:find ?x :where ({rule} ?x {n})]").rows} == {
                x for x, y in full if y == n
            }
            both = store.query(f"[:find ?x :in ?x :where ({rule} ?x {nodes[5]})]", [n]).rows
            assert bool(both) == ((n, nodes[5]) in full)
        from_marked = set(store.query(f"[:find ?x ?y :where [?x :mark true] ({rule} ?x ?y)]").rows)
        assert from_marked == {(x, y) for x, y in full if x in marked}
        to_marked = set(store.query(f"[:find ?x ?y :where ({rule} ?x ?y) [?y :mark true]]").rows)
        assert to_marked == {(x, y) for x, y in full if y in marked}


def test_closure_over_a_10000_node_chain_is_fast(store: FactStore) -> None:
    store.transact([(K(f":n{i}"), K(":next"), K(f":n{i + 1}")) for i in range(9999)], reason="long chain")
    add_rules(store, "(rule [(reach ?x ?y) [?x :next ?y]])", "(rule [(reach ?x ?y) [?x :next ?z] (reach ?z ?y)])")
    store.transact([(K(":n0"), K(":name"), "head")], reason="a name to start from")
    start = time.perf_counter()
    assert store.query("[:find (count ?y) :where (reach :n0 ?y)]").rows == [(9999,)]
    assert store.query("[:find (count ?x) :where (reach ?x :n9999)]").rows == [(9999,)]
    assert store.query('[:find (count ?y) :where [?s :name "head"] (reach ?s ?y)]').rows == [(9999,)]
    assert time.perf_counter() - start < 5
