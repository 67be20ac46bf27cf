"""The daemon's dream thread: runs the cycle by itself when memory has new work and nobody is using it.

Watchdog events on the data dir (the database and its WAL change whenever something is captured, retrieved or
corrected) and, through `mark_pending` called by the daemon's transcript watcher (one observer of that tree, not
two), changes in Claude Code's transcripts folder mark work as *maybe* pending; the memory signature (see
cycle.memory_signature) then decides whether anything really changed since the last whole cycle, so the cycle's own
writes never schedule another one. A cycle starts once the daemon has been idle for `dream.idle_minutes` (no hook
request, no capture job) and there is pending work, or once a day after `dream.nightly_time` even without new work
(decay and verification depend on time alone). Hook traffic during a cycle stops it between two items; the work
left is picked up after the next quiet period. One cycle at a time: the cycle's file lock also keeps out a
`tempera learn dream` run from the command line.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from tempera.core import paths
from tempera.core.config import Config
from tempera.core.memory import Memory
from tempera.dream.cycle import CycleBusy, last_cycle, last_signature, memory_signature, run_cycle

log = logging.getLogger("tempera.dream")


def nightly_due(nightly_time: str, now: datetime, last_started: datetime | None) -> bool:
    """Has today's (local) nightly moment passed with no cycle started since?"""
    if not nightly_time:
        return False
    hour, minute = (int(x) for x in nightly_time.split(":"))
    moment = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment > now:
        moment -= timedelta(days=1)
    return last_started is None or last_started < moment


class _Marker(FileSystemEventHandler):
    """Any change of the database files or of a transcript sets the flag; everything else is ignored."""

    def __init__(self, flag: threading.Event):
        self.flag = flag

    def on_any_event(self, event: FileSystemEvent) -> None:
        name = Path(str(event.dest_path if event.event_type == "moved" else event.src_path)).name
        if not event.is_directory and (name.startswith(paths.DB_NAME) or name.endswith(".jsonl")):
            self.flag.set()


class DreamScheduler:
    def __init__(self, data_dir: Path, last_activity: Callable[[], float], last_good: Config):
        self.data_dir = data_dir
        self.last_activity = last_activity
        self.last_good = last_good  # the config the thread starts from if config.toml is broken as it opens
        self.stopping = threading.Event()
        self.dirty = threading.Event()
        self.dirty.set()  # work may have arrived while no daemon ran
        self.observer: Any = None
        self.thread = threading.Thread(target=self._loop, name="dream", daemon=True)

    def start(self) -> None:
        try:
            observer = Observer()
            marker = _Marker(self.dirty)
            observer.schedule(marker, str(self.data_dir), recursive=False)
            observer.start()
            self.observer = observer
        except Exception as exc:  # without events the signature is checked on every tick instead
            log.warning("dream: file watch unavailable (%s); polling instead", exc)
        self.thread.start()
        log.info("dream scheduler on (dream.idle_minutes and dream.nightly_time as config.toml says at each tick)")

    def mark_pending(self) -> None:
        """New transcripts arrived (the daemon's watcher saw them): maybe new work."""
        self.dirty.set()

    def stop(self, timeout: float = 30.0) -> None:
        self.stopping.set()
        if self.observer is not None:
            self.observer.stop()
            self.observer.join(timeout=5)
        self.thread.join(timeout=timeout)

    def _idle_seconds(self) -> float:
        return time.monotonic() - self.last_activity()

    def _trigger(self, mem: Memory, pending: bool) -> str | None:
        cfg = mem.config.dream
        if self._idle_seconds() < cfg.idle_minutes * 60:
            return None
        if pending:
            return "idle"
        last = last_cycle(mem.db)
        started = datetime.fromisoformat(last["started_at"]).astimezone() if last else None
        return "nightly" if nightly_due(cfg.nightly_time, datetime.now().astimezone(), started) else None

    def _loop(self) -> None:
        """Each tick, and the cycle it may start, read config.toml as it is then (`Memory.current_config`): an edit
        of the idle time, the nightly time or the budget applies without a restart."""
        mem = Memory(last_good=self.last_good)
        pending = False
        try:
            while not self.stopping.wait(max(0.5, min(15.0, mem.current_config().dream.idle_minutes * 60 / 4))):
                if self.dirty.is_set() or self.observer is None:
                    self.dirty.clear()
                    pending = pending or memory_signature(mem.db) != last_signature(mem.db)
                trigger = self._trigger(mem, pending)
                if trigger is not None:
                    pending = not self._run(mem, trigger)
        except Exception:
            log.exception("dream scheduler stopped")
        finally:
            mem.close()

    def _run(self, mem: Memory, trigger: str) -> bool:
        """One cycle; True when it completed (an interrupted or refused one leaves the work pending)."""
        quiet_since = self.last_activity()
        try:
            report = run_cycle(
                mem, trigger=trigger, should_stop=lambda: self.stopping.is_set() or self.last_activity() != quiet_since
            )
        except CycleBusy:
            log.info("dream: a cycle is already running elsewhere; trying again later")
            return False
        except Exception:
            log.exception("dream cycle failed")
            return True  # do not retry a broken cycle in a loop; new work or the nightly run tries again
        return report.status == "done"
