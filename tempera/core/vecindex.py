"""Episode vectors held in memory by a long-lived process (the daemon), for exact KNN in numpy.

sqlite-vec scans a project's vectors in ~3 ms at 5,000 episodes and needs ~0.1 ms more for every vector it hands
back (MMR needs them), so a prompt's nearest 50 cost ~9 ms of the turn; the same scan over a numpy matrix takes
~0.2 ms and has every vector at hand. The matrix of a project is read once, when first asked for, and kept in
step through the `vector_changes` log (migration core.065): before each search the new rows of the log are
read, and only the episodes they name are fetched again. A reset row, or a reader that fell behind the pruned
log, drops everything to be read again. The same results as the vec0 KNN: exact cosine over the same vectors.

Memory: 1.5 KB per episode (384 float32), held only for the projects asked about.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tempera.core import standing
from tempera.core.db import Database
from tempera.core.episodes import VEC_TABLE

TRANSFERABLE = "\0transferable"  # the partition of every project's transferable vectors
RELOAD_AFTER = 2000  # more changed episodes than this at once (an import): read the partitions again instead


@dataclass
class _Partition:
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    _rowids: np.ndarray | None = None
    _matrix: np.ndarray | None = None
    _background: standing.Background | None = None

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        if self._matrix is None:
            self._rowids = np.fromiter(self.vectors, dtype=np.int64, count=len(self.vectors))
            self._matrix = np.stack(list(self.vectors.values())) if self.vectors else np.zeros((0, 1), dtype=np.float32)
        assert self._rowids is not None
        return self._rowids, self._matrix

    def put(self, rowid: int, vector: np.ndarray) -> None:
        self.vectors[rowid] = vector
        self._matrix = self._background = None

    def drop(self, rowid: int) -> None:
        if self.vectors.pop(rowid, None) is not None:
            self._matrix = self._background = None


class VectorCache:
    """Per-project copies of `episode_vec`, for one database, shared by the daemon's answering threads (each with
    its own connection, passed as `db`): one call at a time holds them, so none reads a partition another is
    refreshing. A call costs ~0.2 ms; the first of a project reads its vectors once."""

    def __init__(self) -> None:
        self._parts: dict[str, _Partition] = {}
        self._seq = 0
        self._lock = threading.Lock()

    def search(self, db: Database, qvec: np.ndarray, partition: str, k: int) -> list[tuple[int, float]]:
        """The k nearest (rowid, cosine) of a project, or of the transferable partition, best first."""
        with self._lock:
            self._refresh(db)
            rowids, matrix = self._part(db, partition).matrix()
        if not len(rowids):
            return []
        sims = matrix @ np.asarray(qvec, dtype=np.float32)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(rowids[i]), float(sims[i])) for i in top]

    def background(self, db: Database, partition: str, reference: Callable[[], np.ndarray]) -> standing.Background:
        """The partition's background of unrelated pairs (core/standing.py), kept until its vectors change: a prompt
        pays a dictionary lookup, not the reference vectors' read."""
        with self._lock:
            self._refresh(db)
            part = self._part(db, partition)
            if part._background is None:
                part._background = standing.background(reference(), part.matrix()[1])
            return part._background

    def vector(self, rowid: int) -> np.ndarray | None:
        """The vector of an episode held in any loaded partition (None when not loaded or not indexed)."""
        with self._lock:
            for part in self._parts.values():
                v = part.vectors.get(rowid)
                if v is not None:
                    return v
        return None

    def _part(self, db: Database, name: str) -> _Partition:
        part = self._parts.get(name)
        if part is None:
            where = "transferable = 1" if name == TRANSFERABLE else "project_id = ?"
            rows = db.query(
                f"SELECT rowid, embedding FROM {VEC_TABLE} WHERE {where}", () if name == TRANSFERABLE else (name,)
            )
            part = self._parts[name] = _Partition({int(r): np.frombuffer(e, dtype=np.float32) for r, e in rows})
        return part

    def _refresh(self, db: Database) -> None:
        row = db.one("SELECT min(seq), max(seq) FROM vector_changes")
        low, high = (row[0] or 0), (row[1] or 0)
        if high == self._seq:
            return
        if not self._parts or low > self._seq + 1:  # nothing held yet, or the log was pruned past us
            self._reset(high)
            return
        changed = [
            r[0]
            for r in db.query("SELECT episode_rowid FROM vector_changes WHERE seq > ? AND seq <= ?", (self._seq, high))
        ]
        if None in changed or len(changed) > RELOAD_AFTER:
            self._reset(high)
            return
        ids = sorted(set(changed))
        for part in self._parts.values():
            for rowid in ids:
                part.drop(rowid)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for rowid, project_id, transferable, emb in db.query(
                f"SELECT rowid, project_id, transferable, embedding FROM {VEC_TABLE} "
                f"WHERE rowid IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                vector = np.frombuffer(emb, dtype=np.float32)
                for name in (project_id, TRANSFERABLE if transferable else None):
                    if name in self._parts:
                        self._parts[name].put(int(rowid), vector)
        self._seq = high

    def _reset(self, seq: int) -> None:
        self._parts.clear()
        self._seq = seq
