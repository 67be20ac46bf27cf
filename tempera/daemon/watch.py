"""Transcripts that change on disk without a Stop hook (sessions from before installation, synced folders)
become capture jobs through the same queue, debounced per file."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from tempera.core import jobs, paths
from tempera.core.migrations import connect
from tempera.transcripts.importer import claude_projects_dir

log = logging.getLogger("tempera.daemon")


class TranscriptWatcher(FileSystemEventHandler):
    def __init__(self, data_dir: Path, debounce: float, on_enqueue: Callable[[], None], root: Path | None = None):
        self.root = root or claude_projects_dir()
        self.debounce = debounce
        self.on_enqueue = on_enqueue
        self.pending: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.observer = Observer()
        self.db_path = data_dir / paths.DB_NAME

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.observer.schedule(self, str(self.root), recursive=True)
        self.observer.start()
        threading.Thread(target=self._flush_loop, name="watch-flush", daemon=True).start()
        log.info("watching %s for transcripts", self.root)

    def stop(self) -> None:
        self.stopped.set()
        self.observer.stop()
        self.observer.join(timeout=5)

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = str(event.dest_path if event.event_type == "moved" else event.src_path)
        if (
            event.is_directory
            or not path.endswith(".jsonl")
            or event.event_type not in ("created", "modified", "moved", "closed")
        ):
            return
        with self.lock:
            self.pending[path] = time.monotonic()

    def _flush_loop(self) -> None:
        while not self.stopped.wait(min(1.0, max(0.05, self.debounce / 4))):
            now = time.monotonic()
            with self.lock:
                ready = [p for p, t in self.pending.items() if now - t >= self.debounce]
                for p in ready:
                    del self.pending[p]
            if ready:
                self._enqueue(ready)

    def _enqueue(self, ready: list[str]) -> None:
        db = connect(self.db_path)
        try:
            for p in ready:
                jobs.enqueue(db.conn, "capture", {"transcript_path": p, "source": "watch"}, dedupe_key=f"capture:{p}")
        finally:
            db.close()
        log.info("watch: queued %d transcript(s)", len(ready))
        self.on_enqueue()
