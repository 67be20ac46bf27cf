"""Where the transcript tests find their inputs (this folder's conftest shadows the root one's names)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared"))
TRANSCRIPTS = SHARED / "data" / "transcripts"
LOCOMO = SHARED / "data" / "locomo" / "locomo-dev5.json"
DATA = Path(__file__).parent / "data"
REAL = DATA / "cc-2.1.197" / "a614ea48-ced2-49e7-a543-d3cc93c549be.jsonl"
