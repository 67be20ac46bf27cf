"""What a data dir holds on disk, for tests that look for text which must never be stored (secrets)."""

from __future__ import annotations

from pathlib import Path


def stored_bytes(data_dir: Path) -> bytes:
    """Every byte of every file in the data dir: the database, its WAL and shared memory, logs, exports."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file() and not p.is_socket())
