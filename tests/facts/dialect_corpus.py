"""Where the shared minigraf-dialect corpus lives (grammar files and demo scripts)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DIALECT = Path(os.environ.get("TEMPERA_SHARED_DIR", REPO.parent / "shared")) / "data" / "minigraf-dialect"
