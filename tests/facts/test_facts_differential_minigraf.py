"""Differential test: the same generated data and 300 generated non-recursive queries in Tempera and in the
minigraf engine (the `minigraf` PyPI package, a dev dependency); the answer sets must be equal once
minigraf's duplicate rows are removed.

The generator stays inside what both engines define the same way: one fact per transaction (minigraf keeps
only the last value of an entity/attribute pair written twice in one transaction), no wildcard `_` under an
aggregate (minigraf counts the extra rows it creates), and aggregates over single-typed attributes
(minigraf raises on mixed types where Tempera skips).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from tempera.facts import FactStore, Keyword
from tempera.facts.edn import to_edn

minigraf = pytest.importorskip("minigraf", reason="the minigraf package is needed for the differential test")

K = Keyword
ENTITIES = [K(f"e{i}") for i in range(12)]
NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "al"]
DEPTS = ["eng", "ops", "hr"]
TAGS = [K("red"), K("blue"), K("green")]
SCORES = [0.5, 1.25, 2.0, 3.75, 4.5]
MISC = ["x", 7, 2.5, True, False, None, K("kw"), "7"]
DATES = ["2019-06-01", "2020-06-01", "2021-06-01", "2023-01-01", "2030-01-01"]
QUERIES = 300


@dataclass
class World:
    store: FactStore
    graph: Any
    last_tx: int

    def both(self, command: str) -> None:
        self.store.execute(command, reason="differential data")
        self.graph.execute(command)


def _facts(rng: random.Random) -> tuple[list[str], list[str]]:
    """Transact commands (one fact each) and, separately, retractions of some of them."""
    commands, retractable = [], []
    for e in ENTITIES:
        facts = [(":name", rng.choice(NAMES)), (":age", rng.randint(18, 40)), (":misc", rng.choice(MISC))]
        if rng.random() < 0.8:
            facts.append((":dept", rng.choice(DEPTS)))
        if rng.random() < 0.7:
            facts.append((":score", rng.choice(SCORES)))
        if rng.random() < 0.7:
            facts.append((":active", rng.random() < 0.5))
        facts += [(":tag", t) for t in rng.sample(TAGS, rng.randint(0, 2))]
        facts += [(":friend", f) for f in rng.sample([x for x in ENTITIES if x != e], rng.randint(0, 3))]
        if rng.random() < 0.6:
            facts.append((":manager", rng.choice(ENTITIES)))
        for attr, value in facts:
            fact = f"[{e} {attr} {to_edn(value)}]"
            if rng.random() < 0.15:
                start = rng.choice(["2019-01-01", "2020-01-01", "2021-01-01"])
                commands.append(f'(transact {{:valid-from "{start}" :valid-to "2022-01-01"}} [{fact}])')
            else:
                commands.append(f"(transact [{fact}])")
                retractable.append(fact)
    rng.shuffle(commands)
    return commands, [f"(retract [{f}])" for f in rng.sample(retractable, 15)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    from tempera.core.migrations import connect

    rng = random.Random(8)
    store = FactStore(connect(tmp_path_factory.mktemp("diff") / "t.db"))
    world = World(store, minigraf.MiniGrafDb.open_in_memory(), 0)
    commands, retractions = _facts(rng)
    for command in commands + retractions:
        world.both(command)
    world.last_tx = store.current_tx()
    assert world.last_tx == len(commands) + len(retractions)
    return world


def _query_bodies(rng: random.Random) -> list[tuple[str, bool]]:
    """(find + where text, aggregate?) pairs from templates with random constants."""
    e, name, dept, tag, age = (
        rng.choice(ENTITIES),
        rng.choice(NAMES),
        rng.choice(DEPTS),
        rng.choice(TAGS),
        rng.randint(18, 40),
    )
    op = rng.choice(["<", ">", "<=", ">=", "=", "!="])
    misc = to_edn(rng.choice(MISC))
    attr = rng.choice([":name", ":age", ":dept", ":score", ":tag", ":friend", ":manager", ":active", ":misc"])
    pred = rng.choice(["string?", "integer?", "float?", "boolean?", "nil?"])
    plain = [
        f"[:find ?e ?v :where [?e {attr} ?v]]",
        f"[:find ?a ?v :where [{e} ?a ?v]]",
        f"[:find ?v :where [{e} {attr} ?v]]",
        f'[:find ?e :where [?e :name "{name}"]]',
        f"[:find ?e :where [?e :tag {tag}]]",
        f"[:find ?e ?v :where [?e :misc ?v] [?e :misc {misc}]]",
        "[:find ?n ?fn :where [?e :friend ?f] [?e :name ?n] [?f :name ?fn]]",
        "[:find ?a ?c :where [?a :friend ?b] [?b :friend ?c]]",
        f'[:find ?a :where [?a :manager ?m] [?m :manager ?b] [?b :dept "{dept}"]]',
        f"[:find ?e ?a :where [?e :age ?a] [({op} ?a {age})]]",
        f"[:find ?e ?s :where [?e :score ?s] [({op} ?s 2.0)]]",
        f"[:find ?e ?v :where [?e :misc ?v] [({op} ?v {misc})]]",
        f"[:find ?e ?v :where [?e :misc ?v] [({pred} ?v)]]",
        f"[:find ?e ?b :where [?e :misc ?v] [({pred} ?v) ?b]]",
        "[:find ?e ?f :where [?e :friend ?f] [?e :age ?a] [?f :age ?b] [(< ?a ?b)]]",
        f'[:find ?n :where [?e :name ?n] [(starts-with? ?n "{name[0]}")]]',
        f'[:find ?n :where [?e :name ?n] [(ends-with? ?n "{name[-1]}")]]',
        f'[:find ?n :where [?e :name ?n] [(contains? ?n "{name[1:2]}")]]',
        f'[:find ?e ?d :where [?e :dept ?d] [(matches? ?d "^{dept[0]}")]]',
        f"[:find ?e ?x :where [?e :age ?a] [(* ?a 2) ?x] [(> ?x {age * 2})]]",
        "[:find ?e ?x :where [?e :age ?a] [?e :score ?s] [(+ ?a ?s) ?x]]",
        f"[:find ?e ?x :where [?e :age ?a] [(- ?a {age}) ?x]]",
        "[:find ?e ?x :where [?e :age ?a] [(/ ?a 3) ?x]]",
        "[:find ?e ?x :where [?e :misc ?v] [(+ ?v 1) ?x]]",
        "[:find ?e :where [?e :name _] (not [?e :active true])]",
        f"[:find ?e :where [?e :name ?n] (not [?e :tag {tag}] [?e :active false])]",
        f'[:find ?n :where [?e :name ?n] (not-join [?e] [?e :friend ?f] [?f :dept "{dept}"])]',
        f"[:find ?e :where [?e :age ?a] (not [(> ?a {age})])]",
        f'[:find ?e :where [?e :name ?n] (or [?e :tag {tag}] [?e :dept "{dept}"])]',
        f"[:find ?e ?t :where [?e :tag ?t] (or-join [?e] [?e :active true] (and [?e :age ?a] [(< ?a {age})]))]",
        "[:find ?n :where [?e :name ?n] (or-join [?e] [?e :friend ?x] [?e :manager ?y])]",
        f'[:find ?e :where [?e :age ?a] (or-join [?e] (and [?e :friend ?f] [?f :dept "{dept}"]) [?e :tag {tag}])]',
    ]
    aggregate = [
        "[:find (count ?e) :where [?e :age ?a]]",
        f'[:find (count ?e) :where [?e :dept "{dept}"]]',
        "[:find ?d (count ?e) :where [?e :dept ?d]]",
        "[:find ?d (sum ?a) :where [?e :dept ?d] [?e :age ?a]]",
        "[:find ?d (sum ?a) :with ?e :where [?e :dept ?d] [?e :age ?a]]",
        "[:find (min ?a) (max ?a) :where [?e :age ?a]]",
        "[:find ?d (min ?n) (max ?n) :where [?e :dept ?d] [?e :name ?n]]",
        "[:find (count-distinct ?d) :where [?e :dept ?d]]",
        "[:find (sum-distinct ?a) :where [?e :age ?a]]",
        "[:find (sum ?s) :where [?e :score ?s]]",
        "[:find ?t (count ?e) :where [?e :tag ?t]]",
        "[:find ?e (count ?f) :where [?e :friend ?f]]",
        f"[:find (count ?e) :where [?e :age ?a] (not [?e :tag {tag}])]",
        f"[:find ?d (max ?a) :where [?e :dept ?d] [?e :age ?a] [(> ?a {age})]]",
    ]
    return [(q, False) for q in plain] + [(q, True) for q in aggregate]


def _with_time(rng: random.Random, body: str, last_tx: int) -> str:
    choice = rng.random()
    extra = ""
    if choice < 0.3:
        extra = f" :as-of {rng.randint(0, last_tx)}"
    if 0.2 < choice < 0.5:
        extra += f' :valid-at "{rng.choice(DATES)}"'
    elif 0.5 <= choice < 0.6:
        extra += " :any-valid-time"
    return body.replace(" :where", f"{extra} :where", 1)


def generated_queries(last_tx: int) -> list[str]:
    rng = random.Random(88)
    out = []
    while len(out) < QUERIES:
        for body, _aggregate in _query_bodies(rng):
            out.append(_with_time(rng, body, last_tx))
    rng.shuffle(out)
    return out[:QUERIES]


MINIGRAF_IDS = {str(uuid.uuid5(uuid.NAMESPACE_OID, str(e))): e for e in ENTITIES}


def _from_minigraf(value: Any) -> Any:
    """minigraf prints entities as UUIDv5 of the keyword and keyword values as ":name" strings."""
    if isinstance(value, str):
        if value in MINIGRAF_IDS:
            return MINIGRAF_IDS[value]
        if value.startswith(":"):
            return K(value)
    return value


def minigraf_answer(graph: Any, query: str) -> set[tuple]:
    import json

    result = json.loads(graph.execute(f"(query {query})"))
    return {tuple(_from_minigraf(v) for v in row) for row in result["results"]}


def test_same_answers_as_minigraf(world: World) -> None:
    queries = generated_queries(world.last_tx)
    assert len(queries) >= 200
    mismatches = []
    non_empty = 0
    for query in queries:
        ours = set(world.store.query(query).rows)
        theirs = minigraf_answer(world.graph, query)
        non_empty += bool(ours)
        if ours != theirs:
            mismatches.append(
                f"{query}\n  tempera:  {sorted(map(repr, ours))}\n  minigraf: {sorted(map(repr, theirs))}"
            )
    assert not mismatches, f"{len(mismatches)} of {len(queries)} differ:\n" + "\n".join(mismatches[:8])
    assert non_empty > len(queries) // 2  # the comparison is not vacuous
