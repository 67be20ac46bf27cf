"""Rows derived from an imported session carry the session's time, not the day of the import: corrections,
should-have-asked rows, session links, temporal credit, outcome links, ask-backs and calibration are dated by the
transcript's turns, so the brief's newest correction and every recency signal read the session's time. Real
pieces of real sessions (tests/learning/data/, origin in each folder's README) through `import_transcripts`, the
path of `tempera import`; a recorded-at column (calibration's `updated_at`, a fact's transaction) keeps now."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tempera.core.brief import session_brief
from tempera.core.memory import Memory
from tempera.core.selfimprove import asks, mistakes
from tempera.transcripts.importer import import_transcripts

DATA = Path(__file__).parent / "data"
CIPHER = DATA / "cipher-box" / "14255944-lines-348-359.jsonl"  # corrected 2026-02-22T03:13:33.670Z
NEWER = DATA / "entire-cli" / "5dd7775c-lines-62-93.jsonl"  # corrected 2026-01-26
OLDER = DATA / "entire-cli" / "c26d2153-lines-110-142.jsonl"  # corrected 2026-01-20, same checkout as NEWER
SESSION_DAYS = {"2026-01-20", "2026-01-26", "2026-02-22"}
DERIVED = [
    ("mistakes", "created_at"),
    ("should_have_asked", "created_at"),
    ("episode_links", "created_at"),
    ("feedback_events", "created_at"),
    ("outcome_links", "created_at"),
    ("ask_backs", "created_at"),
    ("calibration_events", "created_at"),
]


@pytest.fixture
def imported(one_row_suffices: None, tmp_path: Path) -> Iterator[Memory]:
    """The three pieces imported one at a time, newest session first (as a user imports a folder found later):
    rows dated by the import would make the oldest session's correction the newest."""
    with Memory(db_path=tmp_path / "memory.db", use_model=False) as mem:
        for source in (CIPHER, NEWER, OLDER):
            copy = tmp_path / source.name
            shutil.copy(source, copy)
            report = import_transcripts(mem, [copy])
            assert report.added >= 1 and not report.failures
        yield mem


def _episode_times(mem: Memory) -> dict[str, str]:
    return dict(mem.db.query("SELECT id, created_at FROM episodes"))


def test_corrections_and_asks_carry_the_moment_the_user_spoke(imported: Memory) -> None:
    [asked] = asks.asks(imported.db)
    assert asked.values["answer"] == "i meant the comment on pr 188"
    assert asked.created_at == "2026-02-22T03:13:33.670000+00:00"
    said = {r.values["correction"][:30]: r.created_at for r in mistakes.mistakes(imported.db)}
    assert said == {
        "i meant the comment on pr 188": "2026-02-22T03:13:33.670000+00:00",
        "The function should use the ex": "2026-01-26T20:03:17.081000+00:00",
        "again, this is not correct: 29": "2026-01-20T18:41:10.662000+00:00",
    }


def test_links_and_credit_carry_the_time_of_the_episodes_they_come_from(imported: Memory) -> None:
    times = _episode_times(imported)
    links = imported.db.query("SELECT dst_id, created_at FROM episode_links")
    assert links and all(at == times[dst] for dst, at in links)  # when the linked turn began
    credit = imported.db.query("SELECT evidence, created_at FROM feedback_events WHERE source = 'temporal'")
    assert credit and all(at == times[json.loads(evidence)["origin"]] for evidence, at in credit)  # the success


def test_no_derived_row_is_dated_on_the_import_day(imported: Memory) -> None:
    today = datetime.now(timezone.utc).date().isoformat()
    days = {
        f"{table}.{column}": {r[0][:10] for r in imported.db.query(f"SELECT {column} FROM {table}")}
        for table, column in DERIVED
    }
    assert all(found <= SESSION_DAYS for found in days.values()), days
    assert all(today not in found for found in days.values())


def test_the_briefs_newest_correction_is_the_newest_sessions(imported: Memory) -> None:
    """Imported newest first, oldest last: the category quotes the newer session's words, dated by it."""
    project = imported.db.one("SELECT project_id FROM mistakes WHERE correction LIKE 'again, this is not%'")[0]
    [category] = session_brief(imported, project).categories
    assert (category.category, category.count, category.sessions) == ("wrong_assumption", 2, 2)
    assert category.latest.startswith("The function should use the existing GetGitDir() helper")
    assert (category.said_on, category.last_seen) == ("2026-01-26", "2026-01-26")
