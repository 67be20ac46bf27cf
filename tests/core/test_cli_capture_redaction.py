"""`tempera capture` stores no secret: the summary and every list field are redacted as transcripts are, whether
they come from flags or from JSON on stdin (issue 17, finding 4). The data dir's bytes (db, WAL) are searched."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.datafiles import stored_bytes
from tests.support.cli import tempera

SECRET = "p@ss/w0rd"
URL = f"postgres://u:{SECRET}@db:5432/x"
TOKEN = "ghp_" + "Zq8" * 12


def _capture(*args: str, data_dir: Path, stdin: str | None = None) -> list[dict[str, str]]:
    done = tempera(
        "capture", "--json", *args, timeout=120, input=stdin, env={**os.environ, "TEMPERA_DATA_DIR": str(data_dir)}
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_capture_flags_and_stdin_store_no_secret(data_dir: Path, tmp_path: Path) -> None:
    [flags] = _capture(
        "-s",
        f"Fixed the migration: it connects with {URL} now",
        "--tags",
        f"db,{TOKEN}",
        "--errors-resolved",
        f"auth failed for {URL}",
        "--project",
        str(tmp_path),
        data_dir=data_dir,
    )
    assert SECRET not in flags["summary"] and "[REDACTED:url_password]" in flags["summary"]
    _capture(
        stdin=json.dumps(
            {
                "summary": f"Deploy used token {TOKEN} and {URL}",
                "files_modified": ["x.py"],
                "alternatives_considered": [f"export DB_PASSWORD={SECRET}"],
                "project": str(tmp_path),
            }
        ),
        data_dir=data_dir,
    )
    raw = stored_bytes(data_dir)
    assert b"REDACTED" in raw
    for secret in (SECRET, "w0rd", TOKEN):
        assert secret.encode() not in raw, secret
