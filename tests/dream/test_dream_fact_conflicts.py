"""Conflicting stances in the fact graph are conflicts within one project: another project's opposite statement is
not one (the same project name at another path is another project), a global stance conflicts with each project's."""

from __future__ import annotations

from datetime import datetime, timezone

from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import ProjectRef, project_for_path
from tempera.dream.contradictions import fact_conflicts
from tempera.facts import FactStore
from tempera.facts.turnfacts import store_turn_facts
from tempera.transcripts.turns import Turn

SHOP, OTHER_SHOP = project_for_path("/srv/a/shop"), project_for_path("/srv/b/shop")  # one name, two projects
CONSTRAINT = f":constraint/mysql.{SHOP.id[:8]}"


def state(memory: Memory, project: ProjectRef, prompt: str, at: datetime) -> None:
    """A turn of the project stating `prompt`, stored as a capture stores it: its episode, then its facts."""
    episode = memory.store.add(
        Episode(
            project_id=project.id, project_name=project.name, project_path=project.path, summary=prompt, created_at=at
        )
    )
    turn = Turn(
        index=0,
        kind="prompt",
        prompt=prompt,
        prompt_uuid=None,
        prompt_line=1,
        session_id=None,
        cwd=project.path,
        started_at=at,
    )
    assert store_turn_facts(memory, turn, episode)


def test_another_projects_opposite_stance_is_no_conflict(memory: Memory) -> None:
    state(memory, SHOP, "Never use MySQL.", datetime(2026, 2, 1, tzinfo=timezone.utc))
    state(memory, OTHER_SHOP, "Use MySQL.", datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert len(FactStore(memory.db).query("[:find ?e :where [?e :polarity _]]").rows) == 2  # both still hold
    assert fact_conflicts(memory.db) == []


def test_opposite_stances_in_one_project_conflict_and_a_global_one_in_each(memory: Memory) -> None:
    state(memory, SHOP, "Never use MySQL.", datetime(2026, 2, 1, tzinfo=timezone.utc))
    state(memory, OTHER_SHOP, "Never use MySQL.", datetime(2026, 2, 2, tzinfo=timezone.utc))
    facts = FactStore(memory.db)
    facts.transact(
        f'[[:decision/reports-db :description "The reports read MySQL"] [:decision/reports-db :subject '
        f'"mysql"] [:decision/reports-db :polarity :for] [:decision/reports-db :project "{SHOP.id}"]]',
        reason="written by hand for the shop",
    )
    [conflict] = fact_conflicts(memory.db)
    assert (conflict["subject"], conflict["project"], conflict["project_id"], {conflict["a"], conflict["b"]}) == (
        "mysql",
        "shop",
        SHOP.id,
        {":decision/reports-db", CONSTRAINT},
    )
    facts.retract(f'[[:decision/reports-db :project "{SHOP.id}"]]', reason="it holds in every project")
    conflicts = fact_conflicts(memory.db)
    other = f":constraint/mysql.{OTHER_SHOP.id[:8]}"
    assert {(c["project_id"], frozenset((c["a"], c["b"]))) for c in conflicts} == {
        (SHOP.id, frozenset((CONSTRAINT, ":decision/reports-db"))),
        (OTHER_SHOP.id, frozenset((other, ":decision/reports-db"))),
    } and len(conflicts) == 2
