"""Tempera's small state files (pause list, dream pages, git-ingestion status, the MCP warm-start cache) are all
replaced through one helper: a reader sees the old file or the new one, and no temp name can be planted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tempera.core import paths
from tempera.core import pause as pausing
from tempera.core.atomic import write_atomic
from tempera.dream.pages import write_page
from tempera.facts.ingest_git import read_status, status_path, write_status


def test_each_writer_leaves_only_its_file_owner_only(data_dir: Path) -> None:
    pausing.pause("p1", "webshop", "/src/webshop", data_dir)
    page = data_dir / paths.REFLECTIONS_DIR / "webshop" / "today.md"
    write_page(page, "# Today\n")
    assert sorted(p.name for p in data_dir.rglob("*") if p.is_file()) == [paths.PAUSE_NAME, "today.md"]
    assert {oct(p.stat().st_mode & 0o777) for p in (pausing.pause_path(data_dir), page)} == {"0o600"}
    assert pausing.paused_projects(data_dir)["p1"]["name"] == "webshop" and page.read_text() == "# Today\n"


def test_a_planted_temp_file_is_neither_followed_nor_reused(tmp_path: Path) -> None:
    """The status file's old temp name was fixed (`<name>.tmp`) and opened without O_EXCL: a symlink left there
    redirected the write. The helper's temp names are unique and created exclusively."""
    status = status_path(tmp_path / paths.DB_NAME)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    os.symlink(victim, status.with_suffix(".tmp"))
    write_status(status, state="done", processed=3)
    assert victim.read_text() == "keep me"
    assert read_status(status)["processed"] == 3


def test_a_failed_replace_leaves_no_temp_file(tmp_path: Path) -> None:
    taken = tmp_path / "state"
    (taken / "inside").mkdir(parents=True)  # a directory where the file should go: the rename must fail
    with pytest.raises(OSError):
        write_atomic(taken, b"new", 0o600)
    assert [p.name for p in tmp_path.iterdir()] == ["state"] and [p.name for p in taken.iterdir()] == ["inside"]
