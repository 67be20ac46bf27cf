"""The tempera_capture tool stores no secret, as transcripts and `tempera capture` store none (issue 17, finding 4):
the data dir's bytes (db, WAL) are searched after a real client session."""

from __future__ import annotations

from pathlib import Path

import pytest
from stdio_session import connect

from support.datafiles import stored_bytes

SECRET = "p@ss/w0rd"
URL = f"postgres://u:{SECRET}@db:5432/x"
TOKEN = "ghp_" + "Zq8" * 12


@pytest.mark.anyio
async def test_mcp_capture_stores_no_secret(data_dir: Path, project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        captured = await client.ok(
            "tempera_capture",
            {
                "summary": f"Fixed the migration: it connects with {URL} now",
                "tags": ["db", TOKEN],
                "errors_resolved": [f"auth failed for {URL}"],
                "alternatives_considered": [f"DB_PASSWORD={SECRET}"],
            },
        )
        assert SECRET not in captured["summary"] and "[REDACTED:url_password]" in captured["summary"]
    raw = stored_bytes(data_dir)
    assert b"REDACTED" in raw
    for secret in (SECRET, "w0rd", TOKEN):
        assert secret.encode() not in raw, secret
