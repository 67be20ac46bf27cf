"""Fixtures of the e2e suite: the pinned Claude Code CLI (installed once per machine), a Messages API stub per test,
and a sandboxed HOME per test whose Tempera daemon is stopped at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_cli import ClaudeUnavailable, ensure_claude
from messages_stub import MessagesStub
from sandbox import Sandbox

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder carries the `e2e` marker, so `-m e2e` / `-m "not e2e"` select the suite."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned CLI; when it cannot be had, every e2e test fails with the reason (never a skip)."""
    try:
        return ensure_claude()
    except ClaudeUnavailable as exc:
        reason = str(exc)
    pytest.fail(f"Claude Code for the e2e suite: {reason}", pytrace=False)  # outside `except`: one clear message


@pytest.fixture
def stub(tmp_path: Path) -> Iterator[MessagesStub]:
    server = MessagesStub(tmp_path / "requests.jsonl").start()
    yield server
    server.stop()


@pytest.fixture
def sandbox(tmp_path: Path, claude_bin: Path, stub: MessagesStub) -> Iterator[Sandbox]:
    """A fresh HOME without Tempera; the daemon its hooks start is killed afterwards (pid from daemon.lock)."""
    box = Sandbox(root=tmp_path, claude_bin=claude_bin, stub=stub)
    box.home.mkdir()
    yield box
    box.stop_daemon()


@pytest.fixture
def installed(sandbox: Sandbox) -> Sandbox:
    """The sandbox after `tempera install --scope user`, run as a user runs it."""
    sandbox.install()
    return sandbox
