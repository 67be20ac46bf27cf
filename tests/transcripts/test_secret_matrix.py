"""Issue 40: every secret shape of the matrix (tests/support/secrets.py), each its own case, through one storage
path: a transcript captured into a real SQLite file and a retrieval asked with the secret in its query (the query
is stored in `retrievals`); the database file and its WAL (FTS shadow tables included) are then searched for the
secret. test_transcript_redaction.py puts each shape and the look-alikes through `redact` itself."""

from __future__ import annotations

import pytest
from transcript_writer import SessionWriter

from support.secrets import SECRETS
from tempera.core import jobs
from tempera.core.memory import Memory
from tempera.daemon.worker import work_one
from tempera.transcripts import capture_transcript


def test_the_matrix_has_at_least_fifty_distinct_shapes() -> None:
    assert len(SECRETS) >= 50
    assert len({name for name, _, _ in SECRETS}) == len(SECRETS)


@pytest.mark.parametrize("name,text,secret", SECRETS, ids=[s[0] for s in SECRETS])
def test_each_shape_stored_nowhere_in_the_database_file(
    kw_memory: Memory, session: SessionWriter, name: str, text: str, secret: str
) -> None:
    session.prompt(f"the {name} check fails: {text}")
    session.bash(f"echo '{text}' && ./check_{name}.sh", f"checking {text}\nError: rejected {text}", ok=False)
    session.say(f"The {name} check passes now; it was given {text}.")
    assert capture_transcript(kw_memory, session.path).added
    assert kw_memory.retrieve(f"{name} check {text}", cwd=session.cwd, mode="keyword")
    assert kw_memory.db.query("SELECT COUNT(*) FROM retrievals")[0][0] >= 1
    kw_memory.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db_file = kw_memory.db.path
    raw = b"".join(p.read_bytes() for p in (db_file, db_file.with_name(db_file.name + "-wal")) if p.exists())
    assert b"episodes_fts_data" in raw and b"REDACTED" in raw
    assert secret.encode() not in raw


def test_a_failed_jobs_error_keeps_no_secret(kw_memory: Memory) -> None:
    """Whatever a failing job's error quotes (here the job's own kind, which this version does not know), the error
    stored on the job (read by `tempera doctor`, kept in backups) is redacted like everything else."""
    name, text, secret = next(s for s in SECRETS if s[0].startswith("github"))
    jobs.enqueue(kw_memory.db.conn, f"replay API_TOKEN={secret}", {})
    assert work_one(kw_memory)
    (error,) = kw_memory.db.one("SELECT last_error FROM jobs")
    assert error and "REDACTED" in error and secret not in error, error
