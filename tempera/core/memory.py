"""One handle on a data dir: config, database, embedder and episode store, shared by CLI, MCP and daemon."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tempera.core import paths
from tempera.core.capture import CaptureInput
from tempera.core.config import Config, load_config
from tempera.core.db import Database, connect
from tempera.core.embed import Embedder, get_embedder
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput
from tempera.core.models import Episode
from tempera.core.retrieve import Hit, retrieve
from tempera.core.utility import record_feedback


class Memory:
    """Open lazily: the model only loads when something needs a vector."""

    def __init__(self, config: Config | None = None, db_path: Path | None = None, *, use_model: bool = True):
        self.config = config or load_config()
        self.db: Database = connect(db_path or paths.db_path())
        self.embedder: Embedder | None = get_embedder(self.config) if use_model else None
        self.store = EpisodeStore(self.db, self.embedder)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def capture(self, item: CaptureInput, *, cwd: str | None = None) -> Episode:
        project = self.store.resolve_project(item.project, cwd=cwd, create=True)
        episode = item.to_episode(project, max_summary_chars=self.config.capture.max_summary_chars)
        return self.store.add(episode, project)

    def retrieve(self, query: str, *, project: str | None = None, cwd: str | None = None, limit: int = 5,
                 mode: str | None = None, cross_project: bool = False, via: str = "cli",
                 session_id: str | None = None) -> list[Hit]:
        ref = self.store.resolve_project(project, cwd=cwd)
        hits = retrieve(self.store, query, project_id=ref.id, cfg=self.config.retrieval, limit=limit, mode=mode,
                        cross_project=cross_project)
        self.store.record_retrievals([h.episode.id for h in hits], query=query, via=via, session_id=session_id)
        return hits

    def feedback(self, signal: str, episode_ids: list[str], *, source: str = "explicit",
                 evidence: dict[str, Any] | None = None) -> dict[str, float]:
        if not episode_ids:
            raise InvalidInput("name at least one episode id")
        resolved = [self.store.resolve_id(e) for e in episode_ids]  # all resolve before any is written
        return {eid: record_feedback(self.db, eid, signal, source=source, evidence=evidence) for eid in resolved}
