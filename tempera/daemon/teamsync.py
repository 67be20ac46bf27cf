"""The daemon's team thread: push then pull every `team.sync_seconds` while the data dir is linked to a team.

It has its own local connection (the embedder is shared) and a small connection pool to the team database, so
hooks and capture jobs never wait on the network. A failed run is logged and kept in `team_runs` (shown by
`tempera team status`); the next tick tries again from the cursors.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from tempera.core.config import Config
from tempera.core.memory import Memory

log = logging.getLogger("tempera.daemon")
FIRST_SYNC_SECONDS = 5.0  # soon after the daemon starts, then every team.sync_seconds


class TeamSyncer:
    def __init__(self, last_good: Config) -> None:
        self.last_good = last_good  # the config the thread starts from if config.toml is broken as it opens
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="team", daemon=True)
        self.pool: Any = None
        self.pool_dsn: str | None = None

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(timeout=30)

    def _pool(self, dsn: str) -> Any:
        from psycopg_pool import ConnectionPool

        from tempera.team import pgdb

        if self.pool is None or self.pool_dsn != dsn:
            if self.pool is not None:
                self.pool.close()
            self.pool = ConnectionPool(
                dsn,
                min_size=0,
                max_size=2,
                open=True,
                configure=pgdb.configure,
                kwargs={"autocommit": True, "connect_timeout": pgdb.CONNECT_TIMEOUT},
            )
            self.pool_dsn = dsn
        return self.pool

    def tick(self, mem: Memory) -> None:
        """One push + pull, when linked."""
        from tempera.team.local import TeamState
        from tempera.team.sync import TeamSync

        link = TeamState(mem.db).link()
        if link is None:
            return
        try:
            with self._pool(link.dsn).connection(timeout=30) as conn:
                report = TeamSync(mem, conn).sync()
        except Exception as exc:  # TeamError, psycopg's and the pool's errors alike: the next tick retries
            log.warning("team sync failed: %s", exc)
            return
        if any(report.pushed.values()) or any(report.pulled.values()):
            log.info("team sync: pushed %s, pulled %s", report.pushed, report.pulled)

    def _loop(self) -> None:
        """Ticks with config.toml as it is at each (`Memory.current_config`): an edited `team.sync_seconds` sets the
        next wait; 0 (only by hand) pauses the thread, which looks again every FIRST_SYNC_SECONDS."""
        mem = Memory(last_good=self.last_good)
        wait = min(mem.config.team.sync_seconds, FIRST_SYNC_SECONDS)
        try:
            while not self.stop_event.wait(timeout=wait):
                every = mem.current_config().team.sync_seconds
                if every > 0:
                    self.tick(mem)
                wait = every if every > 0 else FIRST_SYNC_SECONDS
        finally:
            mem.close()
            if self.pool is not None:
                self.pool.close()
