"""Markdown pages under the data dir (reflections/, patterns/). A page replaces its target atomically
(`core/atomic.py`), so a reader (or a cycle killed mid-write) sees the old page or the new one, never
half of one. Pages are written before their database row, so a row always has its page."""

from __future__ import annotations

import re
from pathlib import Path

from tempera.core.atomic import write_atomic


def slug(text: str, limit: int = 48) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "untitled"


def project_dir(data_dir: Path, kind: str, project_name: str, project_id: str) -> Path:
    """One folder per project; the id prefix keeps two checkouts with the same folder name apart."""
    return data_dir / kind / f"{slug(project_name, 32)}-{project_id[:8]}"


def write_page(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, text.encode("utf-8"), 0o600)


def remove_page(path: str | Path) -> None:
    Path(path).unlink(missing_ok=True)
