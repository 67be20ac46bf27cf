"""`import_transcripts` prepares each file while the one before it is stored (its vectors made on the embedder's
thread meanwhile): with the real model on real transcripts, every stored vector is its own episode's, and the
import stores what capturing the files one at a time stores."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from transcript_paths import DATA, TRANSCRIPTS
from transcript_writer import SessionWriter

from tempera.core.memory import Memory
from tempera.core.vecindex import VEC_TABLE
from tempera.transcripts.importer import find_sessions, import_transcripts
from tempera.transcripts.pipeline import capture_and_learn


def _stored(mem: Memory) -> list[tuple[str, str, bytes]]:
    """(summary, embedded text, vector) of every episode, in the order stored."""
    rows = mem.db.query(
        f"SELECT e.id, v.embedding FROM episodes e JOIN {VEC_TABLE} v ON v.rowid = e.rowid ORDER BY e.rowid"
    )
    out = []
    for eid, blob in rows:
        ep = mem.store.get(eid)
        out.append((ep.summary, ep.embed_text(), bytes(blob)))
    return out


def test_each_vector_is_its_episodes_and_matches_one_file_at_a_time(tmp_path: Path) -> None:
    files = [f for f in find_sessions([TRANSCRIPTS, DATA]) if f.stat().st_size < 400_000][:6]
    assert len(files) >= 4
    with Memory(db_path=tmp_path / "pipelined.db") as mem:
        report = import_transcripts(mem, files)
        assert report.added > 8 and not report.failures
        pipelined = _stored(mem)
        assert mem.store.vectors.embedder is not None
        fresh = mem.store.vectors.embedder.embed([text for _, text, _ in pipelined])
    assert len(pipelined) == report.added
    for (_, _, blob), vec in zip(pipelined, fresh):
        assert blob == np.asarray(vec, dtype=np.float32).tobytes()  # this episode's own text, not a neighbour's
    with Memory(db_path=tmp_path / "one-by-one.db") as mem:
        for f in files:
            capture_and_learn(mem, f)
        one_by_one = _stored(mem)
    assert pipelined == one_by_one


def test_a_grown_session_reimported_keeps_its_vector_in_step(tmp_path: Path) -> None:
    """The grown episode is merged with its stored self when it is stored, and embedded then."""
    real = [f for f in find_sessions([TRANSCRIPTS]) if f.stat().st_size < 200_000][:2]
    session = SessionWriter(tmp_path / "projects" / "-work-shop" / "grown.jsonl")
    session.prompt("make the checkout tests pass")
    session.bash("pytest -q tests/test_checkout.py", "1 failed, 4 passed in 0.3s", ok=False)
    copies = [shutil.copy(f, tmp_path / f.name) for f in real]
    with Memory(db_path=tmp_path / "grown.db") as mem:
        import_transcripts(mem, [Path(copies[0]), session.path, Path(copies[1])])
        session.say("Fixed the rounding in checkout.py; all 5 tests pass.")
        again = import_transcripts(mem, [Path(copies[0]), session.path, Path(copies[1])])
        assert (again.added, again.updated) == (0, 1)
        (grown,) = again.results[1].updated
        stored = mem.store.get(grown.id)
        assert "Fixed the rounding" in stored.summary
        blob = mem.db.one(
            f"SELECT v.embedding FROM episodes e JOIN {VEC_TABLE} v ON v.rowid = e.rowid WHERE e.id = ?", (grown.id,)
        )
        assert mem.store.vectors.embedder is not None
        vec = mem.store.vectors.embedder.embed([stored.embed_text()])[0]
    assert blob is not None and bytes(blob[0]) == np.asarray(vec, dtype=np.float32).tobytes()
