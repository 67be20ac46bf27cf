"""The daemon's answering memories: each hook call is answered on its own thread with a Memory of its own (its own
SQLite connection; the embedder, the config file and the vector cache shared), so prompts are answered beside each
other and beside the capture the worker runs. WAL lets every connection read while one writes; what an answer
writes (the injection log, the session's context, a queued job, a new project) is a short transaction that waits
for a capture's write at most the busy timeout (core/db.py): 0 ms mostly, 35 ms at most, measured with eight
captures queued. Memories are kept for the next calls, at most MAX_OPEN.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tempera.core.config import Config
from tempera.core.embed import Embedder
from tempera.core.memory import Memory
from tempera.core.vecindex import VectorCache

MAX_OPEN = 16  # hook calls answered at once; one more waits for a memory to come back


class Answerers:
    """Memories lent to one thread at a time, and how many hook calls were answered at once at most (`peak`):
    the daemon's status shows it, so a test can see that answers overlapped."""

    def __init__(self, first: Memory, vectors: VectorCache):
        self._first = first
        self._vectors = vectors
        first.store.vectors.cache = vectors
        self._idle = [first]
        self._opened = [first]
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_OPEN)
        self.answering = 0
        self.peak = 0
        self._embedder: Embedder | None = None  # the daemon's model, once warm (`give_model`)

    @property
    def config(self) -> Config:
        return self._first.config

    def give_model(self, embedder: Embedder) -> None:
        """The daemon's model is warm: every memory, open or opened later, embeds with it from now on."""
        with self._lock:
            self._embedder = embedder
            for mem in self._opened:
                mem.embedder = mem.store.vectors.embedder = embedder

    @contextmanager
    def lend(self, *, counted: bool = False) -> Iterator[Memory]:
        """A memory no other thread holds meanwhile; `counted`: a hook call, counted in `answering` and `peak`."""
        with self._slots:
            with self._lock:
                mem = self._idle.pop() if self._idle else None
                if counted:
                    self.answering += 1
                    self.peak = max(self.peak, self.answering)
            try:
                if mem is None:
                    mem = self._open()
                yield mem
            finally:
                with self._lock:
                    if counted:
                        self.answering -= 1
                    if mem is not None:
                        self._idle.append(mem)

    def _open(self) -> Memory:
        # its config follows config.toml per call (current_config); the first memory's last read is the fallback
        mem = Memory(last_good=self._first.config, use_model=False)
        mem.store.vectors.cache = self._vectors
        mem.embedder = mem.store.vectors.embedder = self._embedder
        with self._lock:
            self._opened.append(mem)
        return mem

    def close(self) -> None:
        """Close every memory opened (the daemon's end: no call is answered any more)."""
        with self._lock:
            for mem in self._opened:
                mem.close()
            self._opened.clear()
            self._idle.clear()
