"""Episode storage: the row, its FTS text and its vector (core/vecindex.py), kept in step inside one transaction."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core import episode_files, symbols, textsearch
from tempera.core.db import Database
from tempera.core.errors import AmbiguousId, InvalidInput, NotFound
from tempera.core.models import Episode, ValidityScope, iso_utc
from tempera.core.project import ProjectRef
from tempera.core.projects import ProjectRegistry
from tempera.core.vecindex import VectorIndex

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.embed import Embedder

MIN_PREFIX = 8
EPISODE_COLUMNS = (
    "id, created_at, updated_at, project_id, session_id, task_type, outcome, verification, "
    "scope_kind, transferable, summary, utility, helpful, unhelpful, retrieval_count, "
    "last_useful_at, data"
)


class EpisodeStore:
    """Reads and writes episodes, with the projects they belong to (`projects`) and their vectors (`vectors`, in
    keyword-only mode without an embedder)."""

    def __init__(self, db: Database, embedder: "Embedder | None" = None):
        self.db = db
        self.projects = ProjectRegistry(db)
        self.vectors = VectorIndex(db, embedder, self.get_many_by_rowid)

    # -- writes ---------------------------------------------------------------------------------
    def add(self, episode: Episode, project: ProjectRef | None = None) -> Episode:
        return self.add_many([episode], project)[0]

    def add_many(
        self, episodes: Sequence[Episode], project: ProjectRef | None = None, *, vectors: "np.ndarray | None" = None
    ) -> list[Episode]:
        """Insert episodes (embedding them in one batch first, so the write transaction stays short); `vectors`,
        made by the current model, are stored instead of embedding again."""
        vectors = self.vectors.to_write(episodes, vectors)
        with self.db.transaction():
            items = []
            for ep in episodes:
                ref = project or ProjectRef(ep.project_id, ep.project_name, ep.project_path)
                self.projects.ensure(ref)
                cur = self.db.execute(
                    f"INSERT INTO episodes({EPISODE_COLUMNS}) VALUES ({', '.join('?' * 17)})", self._row(ep)
                )
                rowid = cur.lastrowid
                self.db.execute("INSERT INTO episodes_fts(rowid, body) VALUES (?, ?)", (rowid, self._fts_body(ep)))
                episode_files.write(self.db.conn, ep.id, ep.context.files_modified, ep.project_path)
                symbols.write_episode(self.db.conn, ep.id, ep.context.symbols_modified)
                items.append((rowid, ep))
            if vectors is not None:
                self.vectors.write(items, vectors)
        return list(episodes)

    def update(self, episode: Episode, *, reembed: bool = True) -> Episode:
        episode.updated_at = datetime.now(timezone.utc)
        vectors = self.vectors.to_write([episode], None) if reembed else None
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
            symbols.write_episode(self.db.conn, episode.id, episode.context.symbols_modified)
            if vectors is not None:
                self.vectors.write([(rowid, episode)], vectors)
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
            self.vectors.delete(row[0])
            self.db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))

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
