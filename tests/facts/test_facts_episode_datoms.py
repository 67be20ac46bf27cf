"""Episodes as datoms: a live read-only view that Datalog joins with stored facts (decisions, git-ingested modules)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest
from test_facts_turns import FEB_1, MAR_5, capture, write_session

from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, Outcome
from tempera.facts import FactStore


def _episode(
    summary: str,
    files: list[str],
    *,
    read: Sequence[str] = (),
    outcome: str = "success",
    session: str = "s1",
    at: datetime = FEB_1,
) -> Episode:
    return Episode(
        project_id="p1",
        project_name="shop",
        project_path="/w/shop",
        session_id=session,
        summary=summary,
        created_at=at,
        context=Context(files_modified=files, files_read=list(read)),
        outcome=Outcome(status=outcome, commit="abc123"),
    )


@pytest.fixture
def episodes(memory: Memory) -> dict[str, Episode]:
    made = {
        "login": _episode("Fixed the login redirect", ["src/auth.py"]),
        "tokens": _episode(
            "Rotated tokens", ["src/tokens.py"], read=["src/auth.py"], outcome="failure", session="s2", at=MAR_5
        ),
        "docs": _episode("Wrote the README", ["README.md"]),
    }
    memory.store.add_many(list(made.values()))
    return made


def test_episodes_are_queryable_by_file(memory: Memory, episodes: dict[str, Episode]) -> None:
    store = FactStore(memory.db)
    rows = store.query('[:find ?e ?summary :where [?e :episode/file "src/auth.py"] [?e :episode/summary ?summary]]')
    assert sorted(rows.rows, key=str) == sorted(
        [
            (uuid.UUID(episodes["login"].id), "Fixed the login redirect"),
            (uuid.UUID(episodes["tokens"].id), "Rotated tokens"),
        ],
        key=str,
    )
    modified = store.query('[:find ?s :where [?e :episode/file-modified "src/auth.py"] [?e :episode/summary ?s]]')
    assert modified.rows == [("Fixed the login redirect",)]


def test_outcomes_sessions_and_projects(memory: Memory, episodes: dict[str, Episode]) -> None:
    store = FactStore(memory.db)
    failed = store.query(
        '[:find ?s ?session :where [?e :episode/outcome "failure"] [?e :episode/summary ?s] '
        "[?e :episode/session ?session]]"
    )
    assert failed.rows == [("Rotated tokens", "s2")]
    per_project = store.query(
        "[:find ?p ?path (count ?e) :where [?e :episode/project ?p] [?e :episode/project-path ?path]]"
    )
    assert per_project.rows == [("shop", "/w/shop", 3)]
    [(when, commit)] = store.query(
        '[:find ?t ?c :where [?e :episode/summary "Rotated tokens"] '
        "[?e :episode/created-at ?t] [?e :episode/commit ?c]]"
    ).rows
    assert (when, commit) == (MAR_5, "abc123")


def test_valid_time_is_the_episode_time_and_the_view_is_live(memory: Memory, episodes: dict[str, Episode]) -> None:
    store = FactStore(memory.db)
    query = '[:find ?s :valid-at "2026-02-15" :where [?e :episode/file "src/auth.py"] [?e :episode/summary ?s]]'
    assert store.query(query).rows == [("Fixed the login redirect",)]
    memory.store.delete(episodes["login"].id)
    assert store.query(query).rows == []
    assert store.query("[:find ?e :where [?e ?a ?v]]").rows == []  # only patterns naming the attribute see it


def test_a_decision_joins_the_episodes_that_touched_the_same_module(memory: Memory, tmp_path: Path) -> None:
    """A decision stated in one turn, the module git ingestion knows for the file that turn edited, and every
    other episode that touched that file: one query."""
    capture(memory, write_session(tmp_path / "s.jsonl", [(FEB_1, "Never use MD5 for password hashes.", "Noted.")]))
    memory.store.add(_episode("Sped up the login check", ["src/auth.py"], at=MAR_5))
    store = FactStore(memory.db)
    store.transact('[[:module/shop.auth :path "src/auth.py"]]', reason="git ingest", valid_from="2026-01-01")
    rows = store.query("""[:find ?why ?module ?summary
                           :where [?d :description ?why] [?d :stated-in ?said]
                                  [?said :episode/file-modified ?path] [?module :path ?path]
                                  [?other :episode/file ?path] [?other :episode/summary ?summary]
                                  [(!= ?other ?said)]]""").rows
    assert [(why, str(module), summary) for why, module, summary in rows] == [
        ("Never use MD5 for password hashes", ":module/shop.auth", "Sped up the login check")
    ]
