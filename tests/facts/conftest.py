"""Fixtures for the fact graph: a FactStore over a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tempera.core.migrations import connect
from tempera.facts import FactStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FactStore]:
    db = connect(tmp_path / "t.db")
    yield FactStore(db)
    db.close()
