"""`tempera facts ...` through click, on a real database file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import tempera


@pytest.fixture
def run(tmp_path: Path):
    db = tmp_path / "cli.db"

    def invoke(*args: str, input: str | None = None):
        return tempera("facts", "--db", str(db), *args, input=input)

    return invoke


def test_transact_query_retract_history(run) -> None:
    out = run("transact", '[[:project/db :name "PostgreSQL"]]', "--reason", "initial choice")
    assert out.returncode == 0 and out.stdout.startswith("tx 1 at ")
    again = run("transact", '[[:project/db :name "PostgreSQL"]]', "-r", "again")
    assert "no change" in again.stdout
    assert run("retract", '[[:project/db :name "PostgreSQL"]]', "-r", "switching").stdout.startswith("tx 2")
    run("transact", '(transact {:valid-from "2024-01-01"} [[:project/db :name "CockroachDB"]])', "-r", "geo")
    table = run("query", "[:find ?n :as-of 1 :where [:project/db :name ?n]]").stdout
    assert table.splitlines() == ["?n", '"PostgreSQL"', "(1 row)"]
    data = json.loads(run("query", "[:find ?e ?n :where [?e :name ?n]]", "--json").stdout)
    assert data == {"columns": ["?e", "?n"], "rows": [[":project/db", "CockroachDB"]]}
    history = json.loads(run("history", ":project/db", "--json").stdout)
    assert [(r[0], r[2], r[7]) for r in history["rows"]] == [
        (1, "assert", "initial choice"),
        (2, "retract", "switching"),
        (3, "assert", "geo"),
    ]


def test_query_from_stdin_with_parameters(run) -> None:
    run("transact", "[[:a :n 1] [:b :n 2] [:c :n 3]]", "-r", "data")
    out = run("query", "-", "-p", "n=[1 3]", "--json", input="[:find ?e :in [?n ...] :where [?e :n ?n]]")
    assert json.loads(out.stdout)["rows"] == [[":a"], [":c"]]


def test_rules_audit_and_help(run) -> None:
    assert "added" in run("rules", "--add", "(rule [(linked ?a ?b) [?a :calls ?b]])").stdout
    assert run("rules").stdout.strip() == "(rule [(linked ?a ?b) [?a :calls ?b]])"
    assert json.loads(run("rules", "--json").stdout)["rules"][0]["name"] == "linked"
    run("transact", '[[:decision/x :rationale "why"]]', "-r", "incomplete")
    report = run("audit")
    assert "missing-required" in report.stdout and "--fix" in report.stdout
    assert json.loads(run("audit", "--fix", "--json").stdout)["retracted"] == 1
    for command in ("query", "transact", "retract", "history", "audit", "rules"):
        assert run(command, "--help").returncode == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (("query", "[:find ?x :where [?x :a"), "Error: unclosed '['"),
        (("query", "[:find ?x :where [?e :a ?y]]"), "Error: variable ?x in :find/:with is not bound"),
        (("transact", "[[:a :b 1]]", "-r", " "), "Error: a reason is required"),
        (("rules", "--add", "(rule [(p ?x) [?x :v 1] (not (p ?x))])"), "Error: unstratifiable"),
        (("history", "not-an-entity"), "Error: an entity is a keyword"),
    ],
)
def test_errors_are_one_clean_line(run, args: tuple[str, ...], message: str) -> None:
    out = run(*args)
    assert out.returncode == 1
    assert out.stderr.startswith(message) and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
