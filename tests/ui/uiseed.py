"""A realistic memory for the browser and forgetting tests, built through the real code paths: captured
transcripts (real ones from tests/data, copied), explicit episodes, feedback and derived evidence, the hooks'
injection log, retrievals, links, self-improvement rows, facts produced by an episode, a dream reflection with its
page on disk, and a finished capture job.

One episode carries MARKER in its text; every row derived from it carries MARKER too, so "forgotten" can be checked
as "MARKER is nowhere in the data dir's bytes".
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.forget import link_fact_tx
from tempera.core.learning.evidence import Evidence, replace_evidence
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.core.selfimprove.mistakes import CorrectionInput, log_correction
from tempera.inject import injectlog
from tempera.inject.hits import episode_hit
from tests.conftest import TRANSCRIPTS

MARKER = "zanzibarflux"
MARKER_SUMMARY = f"Fixed the {MARKER} cache stampede by coalescing concurrent requests in cache/stampede.py"
MARKER_SESSION = "11111111-aaaa-4bbb-8ccc-000000000001"
MARKER_FACT = f"Decision (since 2021-06-01): coalesce {MARKER} requests in-process."  # shown with the marker prompt
REAL_TRANSCRIPTS = ("spotter/short.jsonl", "spotter/tool_heavy.jsonl")


@dataclass
class Seeded:
    webshop: Path
    billing: Path
    marker_id: str
    neighbour_id: str
    other_ids: list[str]
    fact_tx: int


def _now(days_ago: float = 0.0) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days_ago)).isoformat()


def _episodes(mem: Memory, webshop: Path, billing: Path) -> tuple[str, str, list[str]]:
    marker = mem.capture(
        CaptureInput(
            summary=MARKER_SUMMARY,
            task_type="bugfix",
            project=str(webshop),
            files_modified=["cache/stampede.py"],
            session_id=MARKER_SESSION,
            errors_resolved=[f"TimeoutError: {MARKER} lock held for 30s"],
            tags=["cache"],
        )
    )
    neighbour = mem.capture(
        CaptureInput(
            summary="Added a cache warmup job so the product page stays fast after deploys",
            task_type="feature",
            project=str(webshop),
            session_id=MARKER_SESSION,
        )
    )
    others = [
        mem.capture(CaptureInput(summary=s, task_type=t, project=str(p), session_id=sid)).id
        for s, t, p, sid in (
            ("Fixed login redirect loop by sanitizing the return URL in the auth middleware", "bugfix", webshop, "s-2"),
            ("Added keyset pagination to the orders API endpoint for large result sets", "feature", webshop, "s-2"),
            ("Refactored invoice rendering into a template per currency", "refactor", billing, "s-3"),
            ("Documented how refunds are reconciled against the payment provider", "docs", billing, "s-3"),
        )
    ]
    return marker.id, neighbour.id, others


def _learning_rows(mem: Memory, marker_id: str, neighbour_id: str, others: list[str]) -> None:
    mem.feedback("helpful", [marker_id], evidence={"note": f"the {MARKER} fix saved a release"})
    mem.feedback("unhelpful", [others[1]])
    replace_evidence(
        mem.db,
        "propagation",
        [Evidence(neighbour_id, "helpful", 0.2, {"origin": marker_id, "hop": 1})],
        origin=marker_id,
    )
    mem.retrieve(
        f"why does the {MARKER} cache stampede",
        project=str(mem.store.get(marker_id).project_path),
        session_id=MARKER_SESSION,
    )
    with mem.db.transaction():
        mem.db.execute(
            "INSERT INTO episode_links(src_id, dst_id, relationship, weight, created_at) "
            "VALUES (?, ?, 'continuation', 1.0, ?)",
            (marker_id, neighbour_id, _now()),
        )


def _injections(mem: Memory, marker_id: str, others: list[str]) -> None:
    ep = mem.store.get(marker_id)
    here = ProjectRef(ep.project_id, ep.project_name, ep.project_path)
    hits = [
        episode_hit(ep, here, score=0.81, relevance=0.9, salience=0.3, similarity=0.62),
        episode_hit(mem.store.get(others[0]), here, score=0.41, relevance=0.4, salience=0.15, similarity=0.35),
    ]
    injectlog.record(
        mem.db.conn,
        session_id=MARKER_SESSION,
        project_id=ep.project_id,
        event="UserPromptSubmit",
        prompt=f"the {MARKER} stampede is back after the deploy, fix it",
        hits=hits,
        facts=[MARKER_FACT],
    )
    with mem.db.transaction():
        mem.db.execute(
            "UPDATE injections SET evaluated_at = ?, used = CASE episode_id WHEN ? THEN 1 ELSE 0 END",
            (_now(), marker_id),
        )


def _selfimprove(mem: Memory, marker_id: str, others: list[str]) -> None:
    log_correction(
        mem.store,
        CorrectionInput(
            category="wrong_layer",
            episode=marker_id,
            files=["cache/stampede.py"],
            description=f"patched {MARKER} in the view instead of the cache",
            correction="coalesce in the cache layer",
        ),
    )
    ep = mem.store.get(marker_id)
    with mem.db.transaction():
        mem.db.execute(
            "INSERT INTO ask_backs(project_id, episode_id, session_id, question, context, drafted_by, "
            "created_at) VALUES (?, ?, ?, ?, ?, 'template', ?)",
            (
                ep.project_id,
                marker_id,
                MARKER_SESSION,
                f"Which {MARKER} endpoint stampedes first?",
                "the request ended partial",
                _now(),
            ),
        )
        mem.db.execute(
            "INSERT INTO reasoning_templates(project_id, task_type, domain, title, steps, evidence, "
            "transferable, extracted_by, created_at, updated_at) VALUES (?, 'bugfix', '', "
            "'Common steps of 2 verified bugfix successes', ?, ?, 0, 'mined', ?, ?)",
            (
                ep.project_id,
                json.dumps(["run the tests (pytest)", "edit cache/stampede.py"]),
                json.dumps([marker_id, others[0]]),
                _now(),
                _now(),
            ),
        )


def _facts(mem: Memory, marker_id: str) -> int:
    from tempera.facts import FactStore

    store = FactStore(mem.db)
    store.transact(
        '[[:decision/cache :decision/text "use redis for the session cache"]]',
        reason="an earlier decision",
        valid_from="2020-01-01",
    )
    result = store.change(
        add=[(":decision/cache", ":decision/text", f"coalesce {MARKER} requests in-process")],
        close=[(":decision/cache", ":decision/text", "use redis for the session cache")],
        at=_now(),
        reason=f"turn: the {MARKER} stampede fix",
    )
    assert result.tx is not None
    with mem.db.transaction():
        link_fact_tx(mem.db, marker_id, result.tx)
    return result.tx


def _dream_and_jobs(mem: Memory, marker_id: str, data_dir: Path) -> None:
    from tempera.core.db import apply_migrations
    from tempera.dream.schema import MIGRATIONS

    apply_migrations(mem.db, MIGRATIONS)  # the dream package's tables, as a cycle would have made them
    ep = mem.store.get(marker_id)
    page = data_dir / paths.REFLECTIONS_DIR / "webshop-today.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"# Today\n\nThe {MARKER} stampede was fixed.\n", encoding="utf-8")
    with mem.db.transaction():
        mem.db.execute(
            "INSERT INTO reflections(project_id, day, title, body, written_by, score, evidence, path, "
            "created_at, updated_at) VALUES (?, ?, 'A stampede fixed', ?, 'extractive', 0.8, ?, ?, ?, ?)",
            (
                ep.project_id,
                _now()[:10],
                f"The {MARKER} stampede was fixed by coalescing requests.",
                json.dumps([marker_id]),
                str(page),
                _now(),
                _now(),
            ),
        )
        mem.db.execute(
            "INSERT INTO jobs(kind, payload, status, attempts, run_after, created_at, updated_at) "
            "VALUES ('capture', ?, 'done', 1, ?, ?, ?)",
            (
                json.dumps(
                    {
                        "session_id": MARKER_SESSION,
                        "transcript_path": "/nowhere.jsonl",
                        "last_assistant_message": f"Done: the {MARKER} stampede is fixed.",
                    }
                ),
                time.time(),
                time.time(),
                time.time(),
            ),
        )


def seed(mem: Memory, root: Path) -> Seeded:
    """Two projects under `root` (webshop with captured transcripts and the MARKER episode, billing)."""
    webshop, billing = root / "webshop", root / "billing"
    for d in (webshop, billing):
        d.mkdir(parents=True, exist_ok=True)
    from tempera.transcripts import capture_transcript

    for name in REAL_TRANSCRIPTS:
        copy = root / "transcripts" / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TRANSCRIPTS / name, copy)
        capture_transcript(mem, copy, project=str(webshop))
    marker_id, neighbour_id, others = _episodes(mem, webshop, billing)
    _learning_rows(mem, marker_id, neighbour_id, others)
    _injections(mem, marker_id, others)
    _selfimprove(mem, marker_id, others)
    tx = _facts(mem, marker_id)
    _dream_and_jobs(mem, marker_id, mem.db.path.parent)
    return Seeded(webshop, billing, marker_id, neighbour_id, others, tx)


def marker_in_data_dir(data_dir: Path, marker: str = MARKER) -> list[str]:
    """The files in the data dir (the database, its WAL and SHM, pages) whose raw bytes contain the marker."""
    return [str(p) for p in data_dir.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()]
