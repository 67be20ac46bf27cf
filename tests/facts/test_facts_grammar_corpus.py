"""minigraf's grammar corpus: valid files parse and run, invalid ones fail with a message that names the place.

Origin: project-minigraf/minigraf @ 5450e945 : tests/grammar/{valid,invalid}/*.edn (tests/data/README.md).
One deliberate difference: plain `(avg ?x)` is an aggregate here (issue 8 asks for it), whereas minigraf only
allows avg as a window function; that file is checked to run, and the rule it stands for (a window-only
function used without :over) is checked with rank instead.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tempera.facts import DatalogError, DatalogSyntaxError, FactStore
from tempera.facts.parser import parse_command
from tests.conftest import DIALECT

VALID = sorted((DIALECT / "valid").glob("*.edn"))
SYNTAX = sorted((DIALECT / "invalid" / "syntax").glob("*.edn"))
SEMANTIC = sorted((DIALECT / "invalid" / "semantic").glob("*.edn"))
AVG_EXTENSION = "window_only_func_without_over.edn"
POSITION = re.compile(r"\(at line \d+, column \d+\)$")

DATA = """(transact [[:alice :person/name "Alice"] [:alice :person/age 30] [:alice :person/city "London"]
                     [:alice :order/price 10] [:alice :order/qty 3] [:alice :metric/a 2] [:alice :metric/b 5]
                     [:alice :metric/value 4] [:alice :person/role :admin]
                     [:bob :person/name "Bob"] [:bob :person/age 20] [:bob :person/banned true]
                     [:bob :metric/value 9] [:bob :person/city "Paris"]
                     [:e1 :emp/salary 100] [:e1 :emp/dept "eng"] [:e1 :emp/hire-date 1]
                     [:e2 :emp/salary 200] [:e2 :emp/dept "eng"] [:e2 :emp/hire-date 2]
                     [:x1 :a :b] [:n1 :connected :n2] [:n2 :connected :n3]])"""


@pytest.fixture
def seeded(store: FactStore) -> FactStore:
    store.execute(DATA, reason="grammar corpus data")
    store.register_aggregate("geomean", lambda xs: math.prod(xs) ** (1 / len(xs)))
    return store


def test_corpus_is_present() -> None:
    assert len(VALID) >= 30 and len(SYNTAX) >= 10 and len(SEMANTIC) >= 13


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_file_parses_and_runs(seeded: FactStore, path: Path) -> None:
    text = path.read_text()
    parse_command(text)
    result = seeded.execute(text, reason=f"corpus {path.stem}", params={"city": "London"})
    if path.stem.startswith("query_"):
        assert result.columns


def test_valid_query_answers(seeded: FactStore) -> None:
    def run(name: str) -> set[tuple[object, ...]]:
        return set(seeded.execute((DIALECT / "valid" / name).read_text(), params={"city": "London"}).rows)

    assert run("query_basic.edn") == {("Alice", 30), ("Bob", 20)}
    assert run("query_expr_binding.edn") == {("Alice", 30)}
    assert run("query_expr_nested.edn") == {("Alice", 9)}
    assert run("query_not.edn") == {("Alice",)}
    assert run("query_or_join.edn") == {("Alice",)}
    assert run("query_prepared_bind_slot.edn") == {("Alice",)}
    assert run("query_with_clause.edn") == {("eng", 100), ("eng", 200)}
    assert run("query_window_sum.edn") == {(100,), (300,)}
    assert run("query_window_rank.edn") == {(1,), (2,)}
    assert run("query_aggregate_udf.edn") == {(6.0,)}
    avg = seeded.execute((DIALECT / "invalid" / "semantic" / AVG_EXTENSION).read_text())
    assert avg.rows == [(150.0,)]


@pytest.mark.parametrize("path", SYNTAX, ids=lambda p: p.stem)
def test_syntax_error_file_fails_to_parse(path: Path) -> None:
    with pytest.raises(DatalogSyntaxError) as err:
        parse_command(path.read_text())
    assert POSITION.search(str(err.value)), str(err.value)


@pytest.mark.parametrize("path", [p for p in SEMANTIC if p.name != AVG_EXTENSION], ids=lambda p: p.stem)
def test_semantic_error_file_is_rejected(store: FactStore, path: Path) -> None:
    with pytest.raises(DatalogError) as err:
        store.execute(path.read_text(), reason="must be rejected")
    assert not isinstance(err.value, DatalogSyntaxError)
    assert POSITION.search(str(err.value)), str(err.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("(query [:find (rank ?salary) :where [?e :emp/salary ?salary]])", "needs :over"),
        ("(query [:find (sum ?salary) :where [?e :person/name ?name]])", "?salary in (sum ?salary) is not bound"),
        ("(query [:find ?name :where [?e :person/name ?name] [(> ?salary 5)]])", "?salary in an expression"),
        ("(query [:find ?name :where [?e :person/name ?name] (not [?x :banned true])])", "?x in (not ...)"),
        (
            "(query [:find ?name :where [?e :person/name ?name] (not-join [?x] [?x :banned true])])",
            "join variable ?x of (not-join",
        ),
        ("(query [:find (count ?e) :with ?u :where [?e :person/name ?name]])", "?u in :find/:with"),
    ],
)
def test_semantic_errors_name_the_problem(store: FactStore, text: str, message: str) -> None:
    with pytest.raises(DatalogError, match=re.escape(message)):
        store.execute(text)
