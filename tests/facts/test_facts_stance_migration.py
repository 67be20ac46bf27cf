"""The migration of stances stored before they were per project (facts.002_stances_per_project): each global
stance entity stated in one project's episodes becomes that project's, with its history; a closing that another
project's turn made is undone unless its own project spoke since; one stated in several projects stays global."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from test_facts_turns import FEB_1, MAR_5, OTHER_SHOP, SHOP, keyed, turns_of, write_session
from test_facts_prompt import prompt_facts

from tempera.core.forget import Selector, forget, link_fact_tx
from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import ProjectRef
from tempera.dream.contradictions import fact_conflicts
from tempera.facts import FactStore, Keyword
from tempera.facts.audit import audit
from tempera.facts.turnfacts import AGAINST, FOR, store_turn_facts

K = Keyword
FEB_15 = datetime(2026, 2, 15, tzinfo=timezone.utc)
APR_1 = datetime(2026, 4, 1, 9, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
MIGRATION = "facts.002_stances_per_project"


def episode(memory: Memory, project: ProjectRef, at: datetime) -> Episode:
    return memory.store.add(
        Episode(
            id=str(uuid.uuid4()),
            project_id=project.id,
            project_name=project.name,
            project_path=project.path,
            summary="a turn",
            created_at=at,
        )
    )


def legacy_statement(
    memory: Memory,
    ep: Episode,
    entity: str,
    description: str,
    polarity: Keyword,
    subject: str,
    at: datetime,
    close: Sequence[tuple[str, str, Any]] = (),
) -> None:
    """What the turn facts of a version without projects wrote: a global `entity` (what it already held left
    out), closing `close` (the opposite stance on the subject, whichever project stated it), in one transaction
    linked to the episode."""
    e, held = K(entity), set(holding(memory, entity, at))
    facts = [
        (K(":description"), description),
        (K(":polarity"), polarity),
        (K(":subject"), subject),
        (K(":stated-in"), uuid.UUID(ep.id)),
    ]
    result = FactStore(memory.db).change(
        add=[(e, a, v) for a, v in facts if (a, v) not in held], close=close, at=at, reason=f"User: {description}"
    )
    assert result.tx is not None
    link_fact_tx(memory.db, ep.id, result.tx)


def never_mysql(ep: Episode) -> list[tuple[str, str, Any]]:
    """The facts of the global "Never use MySQL" constraint stated in `ep`."""
    return [
        (":constraint/mysql", a, v)
        for a, v in (
            (":description", "Never use MySQL"),
            (":polarity", AGAINST),
            (":subject", "MySQL"),
            (":stated-in", uuid.UUID(ep.id)),
        )
    ]


def holding(memory: Memory, entity: str, at: datetime) -> list[tuple[Any, ...]]:
    return FactStore(memory.db).query(f'[:find ?a ?v :valid-at "{at.isoformat()}" :where [{entity} ?a ?v]]').rows


def migrate(memory: Memory) -> None:
    memory.db.execute("DELETE FROM _tempera_migrations WHERE name = ?", (MIGRATION,))  # as before it existed
    FactStore(memory.db)
    assert memory.db.one("SELECT 1 FROM _tempera_migrations WHERE name = ?", (MIGRATION,))


def test_stances_become_their_projects_and_a_cross_project_closing_is_undone(memory: Memory) -> None:
    a, b = episode(memory, SHOP, FEB_1), episode(memory, OTHER_SHOP, MAR_5)
    legacy_statement(memory, a, ":constraint/mysql", "Never use MySQL", AGAINST, "MySQL", FEB_1)
    legacy_statement(memory, b, ":decision/mysql", "Use MySQL", FOR, "MySQL", MAR_5, close=never_mysql(a))  # the bug
    store = FactStore(memory.db)
    store.transact(
        '[[:decision/replicas :description "MySQL replicas are read-only"] '
        "[:decision/replicas :motivated-by :constraint/mysql]]",
        reason="by hand",
        valid_from="2026-01-10",
    )
    assert holding(memory, ":constraint/mysql", NOW) == []

    migrate(memory)
    constraint, decision = keyed(":constraint/mysql"), keyed(":decision/mysql", OTHER_SHOP.id)
    assert memory.db.one("SELECT count(*) FROM fact_datoms WHERE e IN (':constraint/mysql', ':decision/mysql')") == (0,)
    assert sorted(holding(memory, constraint, NOW)) == sorted(
        [
            (K(":description"), "Never use MySQL"),
            (K(":polarity"), AGAINST),
            (K(":project"), SHOP.id),
            (K(":stated-in"), uuid.UUID(a.id)),
            (K(":subject"), "MySQL"),
        ]
    )
    assert (K(":project"), OTHER_SHOP.id) in holding(memory, decision, NOW)
    assert [r for r in store.history(constraint).rows if r[2] == "retract" or r[6]] == []  # open since 1 February
    assert store.query("[:find ?c :where [:decision/replicas :motivated-by ?c]]").rows == [(constraint,)]
    assert audit(store).violations == [] and fact_conflicts(memory.db) == []
    assert prompt_facts(memory, "mysql replicas?", project_id=SHOP.id, now=NOW) == [
        "Constraint (since 2026-02-01): Never use MySQL."
    ]
    assert prompt_facts(memory, "mysql replicas?", project_id=OTHER_SHOP.id, now=NOW) == [
        "Decision (since 2026-03-05): Use MySQL."
    ]  # the global :decision/replicas: one plain word of its subject is no mention; it holds for both projects:
    replicas = "As of 2026-05-01: Decision (since 2026-01-10): MySQL replicas are read-only."
    asked = "what did we decide on 2026-05-01?"
    assert prompt_facts(memory, asked, project_id=SHOP.id, now=NOW) == [replicas]
    assert prompt_facts(memory, asked, project_id=OTHER_SHOP.id, now=NOW) == [
        "As of 2026-05-01: Decision (since 2026-03-05): Use MySQL.",
        replicas,
    ]

    forget(memory.db, Selector("episode", a.id))  # what the migration added goes with the turn it belongs to
    assert memory.db.one("SELECT count(*) FROM fact_datoms WHERE e = ?", (str(constraint),)) == (0,)
    assert (K(":description"), "Use MySQL") in holding(memory, decision, NOW)


def test_a_stance_restated_in_its_own_project_stays_closed_and_a_shared_one_stays_global(memory: Memory) -> None:
    a1, b, a2 = episode(memory, SHOP, FEB_1), episode(memory, OTHER_SHOP, MAR_5), episode(memory, SHOP, APR_1)
    legacy_statement(memory, a1, ":constraint/mysql", "Never use MySQL", AGAINST, "MySQL", FEB_1)
    legacy_statement(memory, b, ":decision/mysql", "Use MySQL", FOR, "MySQL", MAR_5, close=never_mysql(a1))
    legacy_statement(memory, a2, ":decision/mysql", "Use MySQL", FOR, "MySQL", APR_1)  # the shop itself, later

    migrate(memory)
    constraint = keyed(":constraint/mysql")
    assert (K(":description"), "Never use MySQL") in holding(memory, constraint, FEB_15)
    assert holding(memory, constraint, NOW) == []  # the shop has said "use MySQL" since: the closing stands
    shared = holding(memory, ":decision/mysql", NOW)  # stated in both projects: a global stance, as it was
    assert {v for a, v in shared if a == K(":stated-in")} == {uuid.UUID(b.id), uuid.UUID(a2.id)}
    assert not any(a == K(":project") for a, _ in shared)
    assert prompt_facts(memory, "mysql?", project_id=SHOP.id, now=NOW) == ["Decision (since 2026-03-05): Use MySQL."]


def test_new_turns_go_on_with_the_migrated_stance(memory: Memory, tmp_path: Path) -> None:
    a1 = episode(memory, SHOP, FEB_1)
    legacy_statement(memory, a1, ":constraint/mysql", "Never use MySQL", AGAINST, "MySQL", FEB_1)
    migrate(memory)
    [turn] = turns_of(write_session(tmp_path / "s.jsonl", [(APR_1, "Use MySQL after all.", "OK.")]))
    assert store_turn_facts(memory, turn, episode(memory, SHOP, APR_1))
    assert holding(memory, keyed(":constraint/mysql"), NOW) == []  # closed by the shop's own later statement
    assert prompt_facts(memory, "mysql?", project_id=SHOP.id, now=NOW) == [
        "Decision (since 2026-04-01): Use MySQL after all."
    ]
    assert audit(FactStore(memory.db)).violations == []
