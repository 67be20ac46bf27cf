"""One handle on a data dir: config, database, embedder and episode store, shared by CLI, MCP and daemon."""

from __future__ import annotations

import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from tempera.core import paths, retrievals, settings
from tempera.core.capture_input import CaptureInput
from tempera.core.config import Config, load_config
from tempera.core.db import Database
from tempera.core.migrations import connect
from tempera.core.embed import Embedder, get_embedder
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput
from tempera.core.models import Episode
from tempera.core.project_merge import reconcile
from tempera.core.retrieve import Hit, retrieve
from tempera.core.utility import record_feedback

log = logging.getLogger("tempera")


class Memory:
    """Open lazily: the model only loads when something needs a vector. Opening re-keys projects whose id changed."""

    def __init__(
        self,
        config: Config | None = None,
        db_path: Path | None = None,
        *,
        use_model: bool = True,
        last_good: Config | None = None,
    ):
        """`last_good` (with no `config`): the config to start from if config.toml does not validate at this moment,
        then follow the file as ever; a daemon thread opens with its process's, so that a file broken in the
        instant the thread starts cannot kill it."""
        self._config_is_the_file = config is None
        self._config_key = settings.config_key(os.environ) if config is None else None  # before the read it keys
        self.config = config or self._read_config(last_good)
        self.db: Database = connect(db_path or paths.db_path())
        self.embedder: Embedder | None = get_embedder(self.config) if use_model else None
        self.store = EpisodeStore(self.db, self.embedder)
        reconcile(self.db)  # ids that predate, or changed since, the project identity rule (project_merge.py)

    @staticmethod
    def _read_config(last_good: Config | None) -> Config:
        """config.toml as it is now; if it does not validate, `last_good` (logged), and without one the error."""
        try:
            return load_config()
        except InvalidInput as exc:
            if last_good is None:
                raise
            log.warning("config.toml not applied, the previous settings stay: %s", exc)
            return last_good

    def current_config(self) -> Config:
        """The config as config.toml (and the TEMPERA_* environment) say now, for what a long-lived process answers
        or runs: the daemon's and MCP server's hook calls, each daemon job, dream cycle and team sync. An edit of
        `inject.budget_chars` applies at the next prompt, as the kill switch does. The validated config is kept
        while the file's stamp and the environment stay (`settings.config_key`), so a call costs a stat and a look
        at the environment (~0.03 ms), not a validation (~0.25 ms). A memory opened with a Config of its own keeps
        it; a file that stops validating keeps the last good one, logged once (the hook answers anyway). The model
        and the database stay as opened."""
        if self._config_is_the_file:
            key = settings.config_key(os.environ)
            if key is None or key != self._config_key:
                self.config = self._read_config(self.config)
                self._config_key = key
        return self.config

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def capture(self, item: CaptureInput, *, cwd: str | None = None) -> Episode:
        return self.capture_many([item], cwd=cwd)[0]

    def capture_many(self, items: list[CaptureInput], *, cwd: str | None = None) -> list[Episode]:
        """Validate every item before storing any, then store them in one batch."""
        refs = [self.store.projects.resolve(i.project, cwd=cwd, create=True) for i in items]
        episodes = [
            i.to_episode(ref, max_summary_chars=self.config.capture.max_summary_chars) for i, ref in zip(items, refs)
        ]
        return self.store.add_many(episodes)

    def retrieve(
        self,
        query: str,
        *,
        project: str | None = None,
        cwd: str | None = None,
        limit: int = 5,
        mode: str | None = None,
        cross_project: bool = False,
        via: str = "cli",
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> list[Hit]:
        """Ranked hits; `now`: when the query is asked (default: the present), for decay and time words."""
        ref = self.store.projects.resolve(project, cwd=cwd)
        hits = retrieve(
            self.store,
            query,
            project_id=ref.id,
            cfg=self.config.retrieval,
            limit=limit,
            mode=mode,
            cross_project=cross_project,
            now=now,
        )
        retrievals.record(self.db, [h.episode.id for h in hits], query=query, via=via, session_id=session_id)
        return hits

    def feedback(
        self, signal: str, episode_ids: list[str], *, source: str = "explicit", evidence: dict[str, Any] | None = None
    ) -> dict[str, float]:
        if not episode_ids:
            raise InvalidInput("name at least one episode id")
        resolved = [self.store.resolve_id(e) for e in episode_ids]  # all resolve before any is written
        return {eid: record_feedback(self.db, eid, signal, source=source, evidence=evidence) for eid in resolved}
