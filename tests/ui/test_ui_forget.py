"""Forgetting on a real database: what the dry run counts is what goes, derived rows go with it, and the text is
gone from the file's bytes afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from uiseed import MARKER, MARKER_SESSION, Seeded, marker_in_data_dir

from tempera.core import forget as forgetting
from tempera.core.memory import Memory
from tempera.core.retrieve import retrieve


def _count(mem: Memory, sql: str, *params: object) -> int:
    return int(mem.db.one(sql, params)[0])


def test_dry_run_counts_every_derived_row_and_changes_nothing(memory: Memory, seeded: Seeded) -> None:
    sel = forgetting.Selector("episode", seeded.marker_id)
    report = forgetting.plan(memory.db, sel).as_dict()
    counts = report["counts"]
    assert not report["executed"]
    assert counts["episodes"] == 1 and counts["episodes_fts"] == 1 and counts["episode_vec"] == 1
    assert counts["feedback_events"] == 1  # the explicit "helpful"
    assert counts["derived evidence on kept episodes"] == 1  # the propagation row on the neighbour
    assert counts["injections"] == 2  # the whole prompt event: its prompt names what is forgotten
    assert counts["retrievals"] == 2 and counts["episode_links"] == 1
    assert counts["mistakes"] == 1 and counts["selfimprove_files (mistake)"] == 1 and counts["ask_backs"] == 1
    assert counts["reflections"] == 1 and counts["template evidence"] == 1 and counts["jobs (finished)"] == 1
    assert counts["fact transactions"] == 1 and counts["files"] == 1
    assert counts["fact datoms"] == 2  # the new decision and the closed copy of the one it superseded
    assert forgetting.plan(memory.db, sel).as_dict() == report  # counting changed nothing


def test_forgetting_an_episode_removes_it_everywhere_and_from_the_bytes(
    memory: Memory, seeded: Seeded, data_dir: Path
) -> None:
    assert marker_in_data_dir(data_dir), "the seed must put the marker on disk"
    planned = forgetting.plan(memory.db, forgetting.Selector("episode", seeded.marker_id)).as_dict()["counts"]
    report = forgetting.forget(memory.db, forgetting.Selector("episode", seeded.marker_id)).as_dict()
    assert report["executed"] and report["wiped"]
    assert report["counts"] == planned
    assert marker_in_data_dir(data_dir) == []
    webshop = memory.store.get(seeded.neighbour_id).project_id
    hits = retrieve(memory.store, f"{MARKER} cache stampede", project_id=webshop, cfg=memory.config.retrieval, limit=10)
    assert seeded.marker_id not in [h.episode.id for h in hits]
    # derived evidence gone, the neighbour's utility recomputed from what is left
    neighbour = memory.store.get(seeded.neighbour_id)
    assert neighbour.utility.helpful == 0 and neighbour.utility.value == 0.5
    # the template keeps its other evidence; the cursor of the transcript is kept
    assert _count(memory, "SELECT COUNT(*) FROM reasoning_templates") == 1
    assert _count(memory, "SELECT COUNT(*) FROM transcript_cursors") == 2


def test_forgotten_fact_transaction_is_undone(memory: Memory, seeded: Seeded) -> None:
    from tempera.facts import FactStore, Keyword

    forgetting.forget(memory.db, forgetting.Selector("episode", seeded.marker_id))
    store = FactStore(memory.db)
    now = store.query("[:find ?v :in ?e :where [?e :decision/text ?v]]", [Keyword(":decision/cache")])
    assert now.rows == [("use redis for the session cache",)]  # the superseded decision is current again
    assert [row[2] for row in store.history(":decision/cache").rows] == ["assert"]


def test_forgetting_a_session_takes_its_prompts_and_jobs(memory: Memory, seeded: Seeded, data_dir: Path) -> None:
    report = forgetting.forget(memory.db, forgetting.Selector("session", MARKER_SESSION))
    assert report.episodes == 2  # the marker and its neighbour
    assert _count(memory, "SELECT COUNT(*) FROM injections WHERE session_id = ?", MARKER_SESSION) == 0
    assert _count(memory, "SELECT COUNT(*) FROM retrievals WHERE session_id = ?", MARKER_SESSION) == 0
    assert _count(memory, "SELECT COUNT(*) FROM jobs") == 0
    assert marker_in_data_dir(data_dir) == []


def test_forgetting_a_project_leaves_the_other(memory: Memory, seeded: Seeded) -> None:
    webshop = memory.store.projects.resolve(str(seeded.webshop))
    billing = memory.store.projects.resolve(str(seeded.billing))
    before = memory.store.count(billing.id)
    report = forgetting.forget(memory.db, forgetting.Selector("project", webshop.id))
    assert report.counts["projects"] == 1
    assert memory.store.count(webshop.id) == 0 and memory.store.count(billing.id) == before
    assert _count(memory, "SELECT COUNT(*) FROM projects WHERE id = ?", webshop.id) == 0
    assert _count(memory, "SELECT COUNT(*) FROM mistakes") == 0
    assert _count(memory, "SELECT COUNT(*) FROM reasoning_templates") == 0
    assert _count(memory, "SELECT COUNT(*) FROM episodes_fts") == before


def test_forgetting_everything_before_a_date(memory: Memory, seeded: Seeded) -> None:
    with memory.db.transaction():
        memory.db.execute(
            "UPDATE episodes SET created_at = '2020-01-01T00:00:00+00:00' WHERE id = ?", (seeded.other_ids[2],)
        )
    report = forgetting.forget(memory.db, forgetting.Selector("before", "2021-01-01"))
    assert report.episodes == 1
    assert _count(memory, "SELECT COUNT(*) FROM episodes WHERE id = ?", seeded.other_ids[2]) == 0
    total = memory.store.count()
    assert forgetting.plan(memory.db, forgetting.Selector("before", "2021-01-01")).as_dict()["counts"] == {}
    assert memory.store.count() == total


@pytest.mark.parametrize("kind, value", [("when", "x"), ("before", "yesterday"), ("session", " ")])
def test_bad_selectors_are_refused(memory: Memory, kind: str, value: str) -> None:
    from tempera.core.errors import InvalidInput

    with pytest.raises(InvalidInput):
        forgetting.plan(memory.db, forgetting.Selector(kind, value))
