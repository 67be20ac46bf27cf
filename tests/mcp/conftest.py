"""Fixtures of the MCP tests: the asyncio backend and a project directory the server is started in."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A git checkout (a `.git` folder is what makes a project root) with one source folder."""
    root = tmp_path / "webshop"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root
