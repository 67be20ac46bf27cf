"""`tempera import` runs the same pipeline as the Stop hook's job: a transcript with user corrections, imported by
the real CLI into one data dir and captured by the daemon's job handler (through the job queue) in another, leaves
the same mistakes log, should-have-asked rows, ask-backs, calibration, facts and session links."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from selfimprove_support import DATA

from tempera.core import jobs
from tempera.core.memory import Memory
from tempera.core.paths import DB_NAME
from tempera.core.selfimprove import asks, mistakes
from tempera.daemon.worker import work_one
from tests.support.cli import tempera


def _learned(mem: Memory) -> dict[str, Any]:
    """What the steps after capture left, without the ids and times that differ between two data dirs."""

    def rows(entries: list) -> list[tuple]:
        return sorted(
            (
                e.values.get("category", ""),
                e.values.get("correction", e.values.get("question", "")),
                tuple(e.files),
                e.source,
                e.session_id,
            )
            for e in entries
        )

    def count(sql: str) -> list[tuple]:
        return sorted(mem.db.query(sql))

    return {
        "mistakes": rows(mistakes.mistakes(mem.db)),
        "asks": rows(asks.asks(mem.db)),
        "episodes": count("SELECT summary, outcome FROM episodes"),
        "links": count("SELECT relationship, COUNT(*) FROM episode_links GROUP BY relationship"),
        "facts": count("SELECT a, COUNT(*) FROM fact_datoms GROUP BY a"),
        "evidence": count("SELECT source, signal, COUNT(*) FROM feedback_events GROUP BY source, signal"),
    }


def test_import_fills_the_logs_exactly_as_the_stop_path_does(tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-home-dev-webshop" / "corrections.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copy(DATA / "corrections.jsonl", transcript)

    with Memory(use_model=False, db_path=tmp_path / "stop" / DB_NAME) as mem:
        jobs.enqueue(
            mem.db.conn,
            "capture",
            {"transcript_path": str(transcript), "source": "stop"},
            dedupe_key=f"capture:{transcript}",
        )
        assert work_one(mem)
        stop = _learned(mem)

    env = {**os.environ, "TEMPERA_DATA_DIR": str(tmp_path / "import")}
    done = tempera("import", str(transcript), "--no-embed", "--quiet", timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    with Memory(use_model=False, db_path=tmp_path / "import" / DB_NAME) as mem:
        imported = _learned(mem)

    assert len(stop["mistakes"]) == 3 and stop["asks"] and stop["links"] and stop["facts"]
    assert imported == stop


def test_findings_of_a_transcript_from_another_checkout_name_files_as_its_episodes_do(tmp_path: Path) -> None:
    """Imported into a project at another path (`--project`), the corrections' files are relative to the session's
    own checkout, like its episodes' files, not that machine's absolute paths."""
    from tempera.transcripts.pipeline import capture_and_learn

    project = tmp_path / "webshop-here"
    project.mkdir()
    with Memory(use_model=False) as mem:
        result = capture_and_learn(mem, DATA / "corrections.jsonl", project=str(project))
        files = {f for m in mistakes.mistakes(mem.db) for f in m.files}
        episode_files = {f for ep in result.added for f in ep.context.files_modified}
    assert files and files <= episode_files and not any(f.startswith("/") for f in files)
