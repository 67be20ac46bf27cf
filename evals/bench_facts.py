"""Fact-graph benchmark: Tempera's SQLite Datalog against minigraf (Temporal Reasoning's engine) on the same data.

Run: python evals/bench_facts.py [--chains 50,200,1000,10000] [--repeat 50]

Measures: loading 10k facts (as 10k one-fact transactions and as one transaction), a point lookup (the same
query text again, and a new text each time, which Tempera must parse), a 2-hop join from one entity, an
:as-of point lookup, and transitive closure over chains of several lengths with a right-recursive rule: from
the head (what one node reaches) and, up to 1,000 nodes, all pairs. minigraf is skipped for chains longer
than 100 nodes: it needs about a minute at 200 (55-112 s measured on these machines). Both engines write to
files in a temp dir.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENTITIES = 2000  # x 5 attributes = 10k facts, each (entity, attribute) once
MINIGRAF_CHAIN_LIMIT = 100
ALL_PAIRS_LIMIT = 1000  # the closure of a 10,000-node chain has 50 million pairs
CLOSURE_RULES = ["(rule [(reach ?x ?y) [?x :next ?y]])", "(rule [(reach ?x ?y) [?x :next ?z] (reach ?z ?y)])"]
POINT = "[:find ?v :where [:n123 :name ?v]]"
TWO_HOP = "[:find ?n :where [:n5 :friend ?f] [?f :friend ?g] [?g :name ?n]]"
AS_OF = "[:find ?v :as-of 5000 :where [:n123 :name ?v]]"


def facts() -> list[str]:
    out = []
    for i in range(ENTITIES):
        out += [
            f'[:n{i} :name "name-{i}"]',
            f"[:n{i} :age {20 + i % 50}]",
            f'[:n{i} :dept "d{i % 10}"]',
            f"[:n{i} :friend :n{(i * 7 + 1) % ENTITIES}]",
            f"[:n{i} :next :n{(i + 1) % ENTITIES}]",
        ]
    return out


def chain(n: int) -> str:
    return "[" + " ".join(f"[:c{i} :next :c{i + 1}]" for i in range(n - 1)) + "]"


def timed(fn: Callable[[], Any], repeat: int = 1) -> float:
    """Median wall time in ms."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


class Tempera:
    name = "tempera"

    def __init__(self, path: Path) -> None:
        from tempera.core.migrations import connect
        from tempera.facts import FactStore

        self.store = FactStore(connect(path))

    def command(self, text: str) -> None:
        self.store.execute(text, reason="benchmark")

    def query(self, text: str) -> int:
        return len(self.store.query(text).rows)


class Minigraf:
    name = "minigraf"

    def __init__(self, path: Path) -> None:
        import minigraf

        self.db = minigraf.MiniGrafDb.open(str(path))

    def command(self, text: str) -> None:
        self.db.execute(text)

    def query(self, text: str) -> int:
        import json

        return len({tuple(r) for r in json.loads(self.db.execute(f"(query {text})"))["results"]})


def engines(tmp: Path, tag: str) -> list[Any]:
    found: list[Any] = [Tempera(tmp / f"tempera-{tag}.db")]
    try:
        found.append(Minigraf(tmp / f"minigraf-{tag}.graph"))
    except ImportError:
        print("minigraf is not installed (pip install minigraf): its column stays empty")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chains", default="50,200,1000,10000", help="chain lengths for transitive closure")
    parser.add_argument("--repeat", type=int, default=50, help="repetitions of each lookup (median reported)")
    args = parser.parse_args()
    rows: list[tuple[str, dict[str, str]]] = []
    data = facts()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        one_by_one = engines(tmp, "single")
        rows.append(
            (
                f"load {len(data)} facts, one transaction each",
                {
                    e.name: f"{timed(lambda e=e: [e.command(f'(transact [{f}])') for f in data]):.0f} ms"
                    for e in one_by_one
                },
            )
        )
        batch = engines(tmp, "batch")
        rows.append(
            (
                f"load {len(data)} facts in one transaction",
                {
                    e.name: f"{timed(lambda e=e: e.command('(transact [' + ' '.join(data) + '])')):.0f} ms"
                    for e in batch
                },
            )
        )
        for label, query, found in (
            ("point lookup", POINT, 1),
            ("2-hop join from one entity", TWO_HOP, 1),
            (":as-of point lookup (tx 5000)", AS_OF, 1),
        ):
            cells = {}
            for e in one_by_one:
                assert e.query(query) == found, (e.name, label)
                cells[e.name] = f"{timed(lambda e=e: e.query(query), args.repeat):.2f} ms"
            rows.append((label, cells))
        fresh = iter(range(ENTITIES))
        rows.append(
            (
                "point lookup, a new query text each time",
                {
                    e.name: f"{timed(lambda e=e: e.query(POINT.replace(':n123', f':n{next(fresh)}')), 500):.2f} ms"
                    for e in one_by_one
                },
            )
        )
        for n in (int(x) for x in args.chains.split(",")):
            cells = {}
            for e in engines(tmp, f"chain{n}"):
                if e.name == "minigraf" and n > MINIGRAF_CHAIN_LIMIT:
                    cells[e.name] = cells["minigraf all"] = f"skipped (> {MINIGRAF_CHAIN_LIMIT} nodes)"
                    continue
                e.command(f"(transact {chain(n)})")
                for rule in CLOSURE_RULES:
                    e.command(rule)
                query = "[:find ?y :where (reach :c0 ?y)]"
                assert e.query(query) == n - 1, (e.name, n)
                cells[e.name] = f"{timed(lambda e=e: e.query(query), 3 if n <= 1000 else 1):.1f} ms"
                if n <= ALL_PAIRS_LIMIT:
                    pairs = "[:find ?x ?y :where (reach ?x ?y)]"
                    assert e.query(pairs) == n * (n - 1) // 2, (e.name, n)
                    cells[f"{e.name} all"] = f"{timed(lambda e=e: e.query(pairs)):.1f} ms"
                else:
                    cells[f"{e.name} all"] = f"skipped (> {ALL_PAIRS_LIMIT} nodes)"
            rows.append((f"transitive closure from the head, {n}-node chain", cells))
            rows.append(
                (
                    f"transitive closure, all pairs, {n}-node chain",
                    {k.split()[0]: v for k, v in cells.items() if k.endswith(" all")},
                )
            )
    from tempera.core.db import driver_info

    info = driver_info()
    print(f"SQLite {info['sqlite_version']} via {info['driver']}; lookups: median of {args.repeat}")
    width = max(len(label) for label, _ in rows)
    print(f"{'operation'.ljust(width)}  {'tempera':>14}  {'minigraf':>26}")
    for label, cells in rows:
        print(f"{label.ljust(width)}  {cells.get('tempera', '-'):>14}  {cells.get('minigraf', '-'):>26}")


if __name__ == "__main__":
    main()
