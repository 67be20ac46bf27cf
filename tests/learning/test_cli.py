"""The learning commands end to end: JSON on reads, dry runs by default, one-line domain errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from learnbook import Book

from tempera.cli.learning import COMMANDS
from tempera.core import retrievals
from tempera.core.learning.implicit import apply_implicit_feedback
from tests.support.cli import command_path, tempera


def invoke(*args: str) -> Any:
    result = tempera(*args, "--json", check=True)
    return json.loads(result.stdout)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_help(command) -> None:
    assert command.help and len(command.help.split()) >= 6
    result = tempera(*command_path(command), "--help")
    assert result.returncode == 0 and "Usage:" in result.stdout


def test_prune_is_a_dry_run_unless_executed_and_respects_min_retrievals(book: Book) -> None:
    old_bad = book.add("Tried to cache sessions in a global dict", at=-24 * 100)
    old_unjudged = book.add("Old note about logging", at=-24 * 100)
    retrievals.record(book.memory.db, [old_bad.id, old_bad.id], query="q", via="test")
    book.memory.feedback("unhelpful", [old_bad.id])
    dry = invoke("learn", "prune", "--older-than", "90", "--min-utility", "0.4")
    assert [c["id"] for c in dry["candidates"]] == [old_bad.id] and not dry["executed"]
    assert book.memory.store.count() == 2
    done = invoke("learn", "prune", "--older-than", "90", "--min-utility", "0.4", "--execute")
    assert done["executed"] and book.memory.store.count() == 1
    assert book.memory.store.get(old_unjudged.id)


def test_explain_trends_propagate_decay_review(book: Book) -> None:
    memo = book.add(
        "Fixed the login redirect loop by validating return_url with is_safe_redirect()",
        modified=["auth/middleware.py"],
        session="s0",
        at=-2,
    )
    book.inject("s1", memo)
    turn = book.add(
        "Called is_safe_redirect() in the middleware", session="s1", outcome="success", modified=["auth/middleware.py"]
    )
    apply_implicit_feedback(book.memory, "s1", turn)
    data = invoke("learn", "explain", memo.id[:8])
    assert data["utility"] == pytest.approx(1.7 / 2.7, abs=1e-4) and data["evidence"][0]["source"] == "implicit"
    assert data["injections"] == {"total": 1, "judged": 1, "used": 1}
    text = tempera("learn", "explain", memo.id).stdout
    assert "implicit" in text and "rule=used, and the turn succeeded" in text
    trend = invoke("learn", "trends", "--bucket", "monthly", "--project", str(book.root))
    assert trend["periods"][-1]["use_rate"] == 1.0 and trend["periods"][-1]["helpfulness"] == 1.0
    report = invoke("learn", "propagate", "--temporal")
    assert report["temporal_rows"] == 0 and report["skipped"] is None  # the turn is in another session, 2 h later
    assert invoke("learn", "decay", "--dry-run")["checked"] == 2
    assert invoke("learn", "review")["dry_run"] is True


def test_domain_errors_are_one_line(data_dir) -> None:
    for args in (
        ["learn", "explain", "0123456789ab"],
        ["learn", "prune", "--older-than", "1", "--min-utility", "0.2", "--project", "no-such-project"],
        ["learn", "advance-verification", "--all", "--episode", "0123456789ab"],
    ):
        r = tempera(*args, timeout=120)
        assert r.returncode == 1 and r.stderr.startswith("Error:") and "Traceback" not in r.stderr, (args, r.stderr)
