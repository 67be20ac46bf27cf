"""Where the transcript tests find their inputs: the suite's fixtures (named in tests/conftest.py, imported from
here because this folder's conftest shadows the root one's names) and this folder's own data."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LOCOMO, REPO, TRANSCRIPTS

__all__ = ["DATA", "LOCOMO", "REAL", "REPO", "TRANSCRIPTS"]

DATA = Path(__file__).parent / "data"
REAL = DATA / "cc-2.1.197" / "a614ea48-ced2-49e7-a543-d3cc93c549be.jsonl"
