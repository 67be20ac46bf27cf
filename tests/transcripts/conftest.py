"""Keyword-only memory (no model load) for transcript tests; the embedding path has its own test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from transcript_writer import SessionWriter

from tempera.core.memory import Memory


@pytest.fixture
def kw_memory() -> Iterator[Memory]:
    with Memory(use_model=False) as mem:
        yield mem


@pytest.fixture
def session(tmp_path: Path) -> SessionWriter:
    return SessionWriter(tmp_path / "projects" / "-work-shop" / "0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4a10.jsonl")
