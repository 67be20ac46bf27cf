"""Memory stored under the old path ids moves to the repository's project when memory is opened, vectors, search
index, logs and stances included. Real git, real SQLite with sqlite-vec, the real offline model."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from support.gitrepos import git, path_id, repo, tempera
from tempera.core import pause
from tempera.core.capture_input import CaptureInput
from tempera.core.errors import InvalidInput, NotFound
from tempera.core.memory import Memory
from tempera.core.models import Episode, ValidityScope
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.project_merge import merge_projects
from tempera.core.selfimprove.logs import add_entry, list_entries
from tempera.core.selfimprove.mistakes import MISTAKES
from tempera.facts import FactStore, Keyword
from tempera.facts.entity_types import stance_entity
from tempera.facts.promptfacts import prompt_facts


def legacy(path: Path) -> ProjectRef:
    """A project as it was recorded before repositories were recognised: the id hashes the checkout's path."""
    return ProjectRef(path_id(path), path.name, str(path))


def store(mem: Memory, ref: ProjectRef, summary: str) -> Episode:
    return mem.store.add(CaptureInput(summary=summary).to_episode(ref, max_summary_chars=2000), ref)


def state_a_constraint(mem: Memory, episode: Episode) -> Keyword:
    """The stance a turn saying "never use MySQL" leaves in the graph (see facts/turnfacts.py)."""
    entity = stance_entity("constraint", "mysql", episode.project_id)
    FactStore(mem.db).transact(
        [
            (entity, Keyword(":description"), "Never use MySQL for the reports"),
            (entity, Keyword(":polarity"), Keyword(":against")),
            (entity, Keyword(":subject"), "MySQL"),
            (entity, Keyword(":project"), episode.project_id),
            (entity, Keyword(":stated-in"), uuid.UUID(episode.id)),
        ],
        reason="a turn",
    )
    return entity


def verdict(mem: Memory, project_id: str, day: str, score: float) -> None:
    from tempera.core.db import apply_migrations
    from tempera.dream.schema import MIGRATIONS

    apply_migrations(mem.db, MIGRATIONS)  # the dream package's table, as a cycle would have made it
    mem.db.execute(
        "INSERT INTO dream_verdicts(project_id, day, score, judged_by, evidence, created_at) "
        "VALUES (?, ?, ?, 'heuristic', '[]', '2026-03-01')",
        (project_id, day, score),
    )


def in_fts(mem: Memory, project_id: str) -> int:
    return mem.db.one("SELECT COUNT(*) FROM episodes_fts WHERE episodes_fts MATCH ?", (f'"__project_{project_id}"',))[0]


def in_vectors(mem: Memory, project_id: str) -> int:
    return mem.db.one("SELECT COUNT(*) FROM episode_vec WHERE project_id = ?", (project_id,))[0]


def test_old_path_ids_move_to_the_repository_when_memory_opens(tmp_path: Path) -> None:
    main = repo(tmp_path / "webshop")
    git(main, "worktree", "add", "-q", str(tmp_path / "webshop-fix"))
    worktree, gone = tmp_path / "webshop-fix", tmp_path / "deleted-checkout"
    old_main, old_wt, old_gone = legacy(main), legacy(worktree), legacy(gone)
    new = project_for_path(main)
    with Memory() as mem:
        rounding = store(mem, old_main, "Fixed the checkout total rounding by storing cents as Decimal")
        webhook = store(mem, old_wt, "Retried the payment webhook with exponential backoff and jitter")
        elsewhere = store(mem, old_gone, "Tuned the payment webhook timeout on the old laptop")
        add_entry(
            mem.db,
            MISTAKES,
            old_wt,
            {"category": "tests", "description": "ran only unit tests", "correction": "run the integration suite"},
            files=["tests/test_pay.py"],
            scope=ValidityScope(),
        )
        constraint = state_a_constraint(mem, rounding)
        verdict(mem, old_main.id, "2026-02-27", 0.9)
        verdict(mem, old_wt.id, "2026-02-27", 0.2)  # the same day: one slot, the first merged keeps it
        pause.pause(old_wt.id, old_wt.name, old_wt.path)
        assert prompt_facts(mem, "Should the reports use MySQL?", project_id=new.id) == []
        assert in_vectors(mem, old_main.id) == 1 and in_fts(mem, old_wt.id) == 1

    with Memory() as mem:  # the upgrade: opening memory re-keys what it finds
        projects = dict(mem.db.query("SELECT id, name FROM projects"))
        assert projects == {new.id: "webshop", old_gone.id: old_gone.name}  # a path not here is left alone
        for query, mode, wanted in (
            ("payment webhook backoff", "keyword", webhook),
            ("storing cents as Decimal", "keyword", rounding),
            ("rounding money amounts in the cart total", "vector", rounding),
            ("retry a failed callback from the payment provider", "vector", webhook),
        ):
            for cwd in (main, worktree):
                hits = mem.retrieve(query, cwd=str(cwd), mode=mode)
                assert [h.episode.id for h in hits][:1] == [wanted.id], (query, cwd)
                assert elsewhere.id not in [h.episode.id for h in hits]
        assert (in_fts(mem, new.id), in_fts(mem, old_main.id), in_fts(mem, old_wt.id)) == (2, 0, 0)
        assert (in_vectors(mem, new.id), in_vectors(mem, old_main.id), in_vectors(mem, old_wt.id)) == (2, 0, 0)
        assert {mem.store.get(e.id).project_id for e in (rounding, webhook)} == {new.id}
        assert [m.values["category"] for m in list_entries(mem.db, MISTAKES, project_id=new.id)] == ["tests"]
        assert pause.paused_for_cwd(str(worktree)) and pause.paused_for_cwd(str(main))
        assert mem.db.query("SELECT project_id, score FROM dream_verdicts") == [(new.id, 0.9)]

        moved = stance_entity("constraint", "mysql", new.id)
        assert moved != constraint
        assert FactStore(mem.db).query(f"[:find ?pid :where [{moved} :project ?pid]]").rows == [(new.id,)]
        assert FactStore(mem.db).query(f"[:find ?d :where [{constraint} :description ?d]]").rows == []
        assert any(
            "Never use MySQL" in f.text for f in prompt_facts(mem, "Should the reports use MySQL?", project_id=new.id)
        )

        again = merge_projects(mem.db, old_main.id, new.id)  # idempotent: nothing is left to move
        assert not any(again.counts.values()) and not any(again.dropped.values())
    with Memory() as mem:
        assert mem.store.count(new.id) == 2 and mem.store.count(old_gone.id) == 1


def test_a_process_that_never_loaded_facts_moves_the_stances_too(tmp_path: Path) -> None:
    """Core imports no facts code: the fact graph's mover comes from `tempera/__init__.py`, so `tempera projects`
    (a process whose first opening of memory has loaded nothing of facts) moves the stances with the episodes."""
    main = repo(tmp_path / "webshop")
    old, new = legacy(main), project_for_path(main)
    with Memory(use_model=False) as mem:
        constraint = state_a_constraint(mem, store(mem, old, "Kept the reports on PostgreSQL"))
    listed = tempera("projects", "--json", check=True)
    assert [p["id"] for p in json.loads(listed.stdout)] == [new.id]  # the episodes moved
    with Memory(use_model=False) as mem:
        moved = stance_entity("constraint", "mysql", new.id)
        assert FactStore(mem.db).query(f"[:find ?pid :where [{moved} :project ?pid]]").rows == [(new.id,)]
        assert FactStore(mem.db).query(f"[:find ?d :where [{constraint} :description ?d]]").rows == []


def test_a_merge_refuses_what_it_cannot_do(memory: Memory, tmp_path: Path) -> None:
    ref = legacy(tmp_path)
    store(memory, ref, "Something to keep")
    with pytest.raises(InvalidInput, match="same project"):
        merge_projects(memory.db, ref.id, ref.id)
    with pytest.raises(NotFound, match="no project"):
        merge_projects(memory.db, ref.id, "0" * 16)
    assert memory.store.count(ref.id) == 1
