"""Fixtures of the learning tests (helpers live in learnbook.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from learnbook import Book

from tempera.core.memory import Memory


@pytest.fixture
def book(memory: Memory, tmp_path: Path) -> Book:
    root = tmp_path / "webapp"
    root.mkdir()
    return Book(memory, root)
