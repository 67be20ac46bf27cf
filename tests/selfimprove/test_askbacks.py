"""Ask-backs: drafted only for vague failed/partial turns, retired when the session went on, shown and consumed
once by `tempera lessons session-start`."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, ErrorRecord, Intent, Outcome
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.selfimprove.aftercapture import update_after_capture
from tempera.core.selfimprove.askbacks import ask_backs, draft_ask_back, is_vague, template_question


@pytest.mark.parametrize(
    "text, vague",
    [
        ("fix it", True),
        ("make it work again", True),
        ("still broken, please fix", True),
        ("the tests fail", True),
        ("fix the login redirect in src/auth/login.py", False),
        ("handle E0502 in main.rs", False),
        ("getUserById returns null for admins", False),
        ("add keyset pagination to the orders API endpoint", False),
    ],
)
def test_vague_intent(text: str, vague: bool) -> None:
    assert is_vague(text) is vague


def test_template_question_uses_error_then_files() -> None:
    assert template_question("fix it", ["KeyError: 'user'"], ["a.py"]).startswith("Is `KeyError: 'user'` the problem")
    assert "(a.py, b.py were touched)" in template_question("fix it", [], ["a.py", "b.py"])
    assert template_question("fix it", [], []).startswith('What exactly should "fix it" achieve')


@pytest.fixture
def shop(tmp_path: Path) -> ProjectRef:
    return project_for_path(tmp_path / "shop")


def turn(
    ref: ProjectRef, prompt: str, status: str, session: str | None = "s1", errors: tuple[str, ...] = ()
) -> Episode:
    return Episode(
        project_id=ref.id,
        project_name=ref.name,
        project_path=ref.path,
        session_id=session,
        summary=prompt,
        intent=Intent(raw_prompt=prompt),
        context=Context(errors=[ErrorRecord(message=e) for e in errors]),
        outcome=Outcome(status=status),
    )


def test_only_vague_failed_or_partial_turns_get_one(mem: Memory, shop: ProjectRef) -> None:
    assert draft_ask_back(mem, turn(shop, "fix it", "success")) is None
    assert draft_ask_back(mem, turn(shop, "fix the redirect loop in src/auth/login.py", "failure")) is None
    ep = turn(shop, "make it work", "partial", errors=("TimeoutError: db not ready\n  at connect()",))
    mem.store.add(ep)
    ask = draft_ask_back(mem, ep)
    assert ask is not None and ask.question.startswith('Is `TimeoutError: db not ready` the problem "make it work"')
    assert ask.context == 'the request "make it work" ended partial'
    assert draft_ask_back(mem, ep).id == ask.id  # one per episode


def test_switched_off_by_config(mem: Memory, shop: ProjectRef, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPERA_CAPTURE__ASK_BACK_ON_FAILURE", "false")
    off = Memory(use_model=False)
    try:
        assert draft_ask_back(off, turn(shop, "fix it", "failure")) is None
    finally:
        off.close()


def test_only_the_latest_turn_of_a_session_leaves_a_question(mem: Memory, shop: ProjectRef) -> None:
    first = turn(shop, "fix it", "failure")
    mem.store.add(first)
    [drafted] = update_after_capture(mem, [first])
    later = turn(shop, "now the sidebar", "success")
    later.created_at = first.created_at.replace(year=first.created_at.year + 1)
    mem.store.add(later)
    assert update_after_capture(mem, [later]) == []
    [row] = ask_backs(mem.db, project_id=shop.id)
    assert (row.id, row.status) == (drafted.id, "consumed")  # the session went on: the question is stale
    assert ask_backs(mem.db, pending_only=True) == []


def test_an_imported_sessions_question_keeps_its_sessions_dates(mem: Memory, shop: ProjectRef) -> None:
    """Drafted for the turn it asks about and retired by the turn that went on, each at its own time, also when
    the session is imported long after: the newest pending question is the newest session's, not the last import's."""
    first = turn(shop, "fix it", "failure")
    first.created_at = datetime(2026, 3, 4, 17, 30, tzinfo=timezone.utc)
    mem.store.add(first)
    [drafted] = update_after_capture(mem, [first])
    later = turn(shop, "now the sidebar", "success")
    later.created_at = first.created_at + timedelta(minutes=5)
    mem.store.add(later)
    update_after_capture(mem, [later])
    [row] = ask_backs(mem.db, project_id=shop.id)
    assert (drafted.created_at, row.consumed_at) == ("2026-03-04T17:30:00+00:00", "2026-03-04T17:35:00+00:00")


def test_a_turn_that_grew_into_a_success_retires_its_question(mem: Memory, shop: ProjectRef) -> None:
    ep = turn(shop, "fix it", "partial", session=None)
    mem.store.add(ep)
    assert len(update_after_capture(mem, [ep])) == 1
    ep.outcome.status = "success"
    mem.store.update(ep, reembed=False)
    assert update_after_capture(mem, [ep]) == [] and ask_backs(mem.db, pending_only=True) == []


def test_session_start_shows_and_consumes(tempera: Callable, mem: Memory, tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    ref = project_for_path(repo)
    ep = turn(ref, "fix it", "failure")
    mem.store.add(ep)
    update_after_capture(mem, [ep])
    code, out, _ = tempera("lessons", "ask-backs", "--pending", "--json")
    assert code == 0 and [a["status"] for a in json.loads(out)] == ["pending"]
    code, out, _ = tempera("lessons", "session-start", "--session-id", "next", cwd=repo)
    assert code == 0 and out.startswith(
        "- Pending clarifying question from an earlier session of shop (the request "
        '"fix it" ended failure): What exactly should "fix it" achieve'
    )
    _, out, _ = tempera("lessons", "session-start", cwd=repo)
    assert out.strip() == "Nothing pending for shop."
    _, out, _ = tempera("lessons", "ask-backs", "--project", str(repo))
    assert "consumed (template)" in out
    _, out, _ = tempera("lessons", "ask-backs", "--pending")
    assert out.strip() == "No ask-backs."
