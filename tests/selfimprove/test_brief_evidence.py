"""What the brief's self-improvement lines rest on, checked on pieces of real entire-cli sessions
(tests/transcripts/data/entire-cli/, origin in its README): a question the agent asked is no should-have-asked, a
user describing their setup is no correction, an imported correction keeps its session's date, and a category is
shown only for recent, repeated corrections, counted up to the project's latest session, never quoting an order."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from selfimprove_support import replay

from tempera.core.brief import session_brief
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef
from tempera.core.selfimprove import asks, mistakes
from tempera.core.selfimprove.mistakes import CorrectionInput, log_correction

ENTIRE = Path(__file__).parents[1] / "transcripts" / "data" / "entire-cli"


def _imported(mem: Memory, tmp_path: Path, name: str) -> None:
    copy = tmp_path / name
    shutil.copy(ENTIRE / name, copy)
    replay(mem, copy)


def test_the_agents_own_question_answered_by_the_user_is_no_should_have_asked(mem: Memory, tmp_path: Path) -> None:
    """'Would you like me to commit these changes?' answered 'yes, commit': the agent asked."""
    _imported(mem, tmp_path, "056d2eda-lines-36-131.jsonl")
    assert mem.db.one("SELECT COUNT(*) FROM episodes")[0] >= 2  # both turns were captured
    assert asks.asks(mem.db) == []


def test_the_user_describing_their_setup_is_no_correction(mem: Memory, tmp_path: Path) -> None:
    """A Grep rejected with 'our session starts with 7a3cf82d-…': the user tells the agent about their session."""
    _imported(mem, tmp_path, "7a3cf82d-lines-224-274.jsonl")
    assert mem.db.one("SELECT COUNT(*) FROM episodes")[0] >= 1
    assert mistakes.mistakes(mem.db) == []


def test_an_imported_correction_carries_its_sessions_date(mem: Memory, tmp_path: Path) -> None:
    _imported(mem, tmp_path, "60b38d1e-lines-6-70.jsonl")
    [row] = mistakes.mistakes(mem.db)
    assert row.values["correction"].startswith("do not stash anything")
    assert row.created_at.startswith("2026-02-03T04:00:20")  # the prompt's timestamp, not the day of the import


def test_a_one_off_correction_category_is_not_in_the_brief(mem: Memory, tmp_path: Path) -> None:
    _imported(mem, tmp_path, "60b38d1e-lines-6-70.jsonl")
    [row] = mistakes.mistakes(mem.db)
    brief = session_brief(mem, row.project_id)
    assert brief.categories == [] and "Correction category" not in brief.render(4000)


def _correct(mem: Memory, project: Path, words: str, session: str, day: str) -> None:
    log_correction(
        mem.store,
        CorrectionInput(
            category="wrong_convention",
            description="Logged with fmt.Printf",
            correction=words,
            files=["cmd/status.go"],
            session_id=session,
            project=str(project),
        ),
        at=datetime.fromisoformat(f"{day}T10:00:00+00:00"),
    )


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "cli"
    (root / ".git").mkdir(parents=True)
    return root


def _latest_session(mem: Memory, root: Path, day: str) -> ProjectRef:
    """An episode of the project's latest session on `day` (what an import of that session stores)."""
    ep = mem.capture(CaptureInput(summary="Checked the status command", project=str(root)))
    stamp = f"{day}T12:00:00+00:00"
    mem.db.execute("UPDATE episodes SET created_at = ? WHERE id = ?", (stamp, ep.id))
    return ProjectRef(ep.project_id, ep.project_name, ep.project_path)


def test_repeated_corrections_count_up_to_the_latest_session_not_to_now(mem: Memory, tmp_path: Path) -> None:
    """Three corrections in two sessions of February, imported in December: shown, since the window ends at the
    project's latest session; one of the year before falls outside it and is not counted."""
    root = _project(tmp_path)
    _correct(mem, root, "the logging framework is slog, not fmt", "s0", "2025-06-01")
    _correct(mem, root, "that is not correct, we log with slog", "s1", "2026-02-01")
    _correct(mem, root, "wrong package, slog is the logger here", "s1", "2026-02-02")
    _correct(mem, root, "no, the status output goes through slog", "s2", "2026-02-03")
    project = _latest_session(mem, root, "2026-02-05")
    assert datetime.now(timezone.utc) > datetime(2026, 4, 6, tzinfo=timezone.utc)  # past the window, by the wall clock
    [line] = session_brief(mem, project.id).categories
    assert (line.category, line.count, line.sessions, line.last_seen) == ("wrong_convention", 3, 2, "2026-02-03")
    assert line.latest == "no, the status output goes through slog"


def test_corrections_of_one_session_are_not_repeated_evidence(mem: Memory, tmp_path: Path) -> None:
    root = _project(tmp_path)
    for day in ("2026-02-01", "2026-02-02", "2026-02-03"):
        _correct(mem, root, "that is not correct, we log with slog", "s1", day)
    project = _latest_session(mem, root, "2026-02-05")
    assert session_brief(mem, project.id).categories == []


def test_the_brief_states_a_correction_but_quotes_no_order(mem: Memory, tmp_path: Path) -> None:
    root = _project(tmp_path)
    _correct(mem, root, "that is not correct, we log with slog", "s1", "2026-02-01")
    _correct(mem, root, "no, the status output goes through slog", "s2", "2026-02-02")
    _correct(mem, root, "don't worry about linting for now, just continue.", "s3", "2026-02-03")
    project = _latest_session(mem, root, "2026-02-05")
    text = session_brief(mem, project.id).render(4000)
    assert text.startswith("- Correction category wrong_convention (3x, 3 sessions, last 2026-02-03) on cmd/status.go")
    assert 'the user said on 2026-02-02: "no, the status output goes through slog"' in text
    assert "linting" not in text and "continue" not in text


def test_a_category_of_orders_alone_is_not_shown(mem: Memory, tmp_path: Path) -> None:
    """Nothing but a count and a name is left when every correction reads as an order: no line."""
    root = _project(tmp_path)
    for n, day in enumerate(("2026-02-01", "2026-02-02", "2026-02-03")):
        _correct(mem, root, "don't worry about linting for now, just continue.", f"s{n}", day)
    project = _latest_session(mem, root, "2026-02-05")
    assert session_brief(mem, project.id).categories == []
