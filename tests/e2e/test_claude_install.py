"""The suite's Claude Code install fails loudly, naming the reason, instead of skipping: a missing npm and a failed
`npm install` each come back as `ClaudeUnavailable` with what went wrong (the fixture turns it into a failure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_cli import PINNED_VERSION, ClaudeUnavailable, ensure_claude


def test_without_npm_the_install_says_npm_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ClaudeUnavailable, match=f"npm is not on PATH, so Claude Code {PINNED_VERSION} cannot"):
        ensure_claude(root=tmp_path / "cache")


def test_a_failed_npm_install_reports_npms_own_error(tmp_path: Path) -> None:
    with pytest.raises(ClaudeUnavailable, match=r"failed with exit code \d+:\n(?s:.*)npm error"):
        ensure_claude("0.0.0-no-such-version", root=tmp_path / "cache")
