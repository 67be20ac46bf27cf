"""The long-lived local worker: one per data dir (flock), reached over a unix socket (0600) in the data dir, or over
loopback TCP with a secret token (`daemon.transport`; hooks/wire.py), never from another machine.

It keeps the embedder and database open, answers hook requests in milliseconds, works the durable job queue,
watches transcript folders, re-executes itself when the installed package version changes, and exits after a
configurable idle period, or once what it runs from is gone (an uninstalled plugin took its venv or its root). A
crashed daemon leaves a stale socket and lock file; the next one recovers both.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from collections.abc import Callable
from typing import Any

from tempera import __version__
from tempera.core import jobs, paths, processes, spool, standing
from tempera.core.atomic import write_atomic
from tempera.core.config import Config, load_config
from tempera.core.memory import Memory
from tempera.core.redact import RedactingFormatter
from tempera.core.vecindex import VectorCache
from tempera.daemon.answerers import Answerers
from tempera.hooks import wire
from tempera.inject import payload

log = logging.getLogger("tempera.daemon")
FAILED = "daemon failed:"  # starts the log line that `tempera daemon start` shows when the daemon dies
MAX_PAYLOAD_BYTES = payload.MAX_STDIN_BYTES  # a hook's stdin; a larger one is not from Claude Code
# How long a thread holds the interpreter while another waits for it. A hook answer gives it up at each SQLite
# query and model run; at the default 5 ms it then waited up to 5 ms a time behind a capture's parsing to get it back.
SWITCH_INTERVAL_S = 0.0005
# Added to the jobs thread's nice value (its model batches' threads inherit it): a capture takes the cores that hook
# calls leave, so a prompt answered beside one is not slowed by its parsing and embedding.
JOBS_NICER = 10
BACKGROUND_AFTER_S = 1.0  # the background starts this long after the daemon serves, or at its first answer
PLUGIN_ROOT_ENV = "TEMPERA_PLUGIN_ROOT"  # the Claude Code plugin's root, set by installer/plugin_launcher.py (a copy)


def installed_version() -> str:
    try:
        return metadata.version("tempera-memory")
    except metadata.PackageNotFoundError:
        return __version__


def install_paths(data_dir: Path) -> list[Path]:
    """What this daemon runs from, of those there now: its interpreter, the package, its data dir and, when the
    Claude Code plugin started it, the plugin's root. Uninstalling the plugin removes its root and its data dir
    (the venv the interpreter is in); a daemon left running then serves nobody."""
    import tempera

    found = [Path(sys.executable), Path(tempera.__file__).parent, data_dir]
    if os.environ.get(PLUGIN_ROOT_ENV):
        found.append(Path(os.environ[PLUGIN_ROOT_ENV]))
    return [p for p in found if p.exists()]


def lower_priority() -> None:
    """Lower the calling thread's priority by JOBS_NICER, where a thread has a nice value of its own (Linux; on
    other systems a thread id is no process id)."""
    if sys.platform != "linux":
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + JOBS_NICER))
    except OSError as exc:  # a container that forbids it: the jobs run at the daemon's priority
        log.info("jobs thread keeps its priority: %s", exc)


class Daemon:
    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        self.sock_path = data_dir / paths.SOCKET_NAME
        self.tcp_path = data_dir / paths.TCP_NAME
        self.token = ""  # over TCP, what every request must carry (hooks/wire.py)
        self.proof = ""  # over TCP, what the daemon answers a request's header with, before its payload comes
        self.endpoint = ""  # how it is reached, as `status` and `tempera doctor` say it
        self.stop = threading.Event()
        self.wake = threading.Event()
        self.last_activity = time.monotonic()
        self.started_version = installed_version()
        self.install = install_paths(data_dir)
        self.restart = False
        self.warm_ended = threading.Event()  # warming is over, the model loaded or not
        self.begin = threading.Event()  # a request was answered: the background may start (_start_background)
        self.workers: list[threading.Thread] = []
        self._lock_fd: int | None = None
        self.config = load_config()
        self.mem: Memory | None = None
        self.answerers: Answerers | None = None  # a memory per hook call answered at once (answerers.py)
        self.watcher: Any = None
        self.dream: Any = None
        self.team: Any = None

    # -- lifecycle ------------------------------------------------------------------------------
    def acquire_lock(self) -> bool:
        fd = os.open(self.data_dir / paths.DAEMON_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        if not processes.try_lock(fd):
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        return True

    def _bind(self) -> socket.socket:
        """Listen on the configured transport; the endpoint files a dead daemon left go first (we hold the lock)."""
        for left in (self.sock_path, self.tcp_path):
            if left.exists() or left.is_symlink():
                left.unlink()
        if self.config.daemon.transport == "tcp":
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.bind((wire.LOOPBACK, 0))
            srv.listen(64)
            self.token, self.proof = secrets.token_hex(32), secrets.token_hex(32)
            port = srv.getsockname()[1]
            endpoint = f"{port} {self.token} {self.proof}\n"
            write_atomic(self.tcp_path, endpoint.encode("ascii"), 0o600)  # found once it listens
            self.endpoint = f"tcp {wire.LOOPBACK}:{port}"
        else:
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)
            try:
                srv.bind(str(self.sock_path))
            finally:
                os.umask(old)
            os.chmod(self.sock_path, 0o600)
            srv.listen(64)
            self.endpoint = f"unix {self.sock_path}"
        srv.settimeout(0.5)
        return srv

    def run(self) -> int:
        paths.ensure_data_dir(self.data_dir)
        if not self.acquire_lock():
            log.info("another daemon holds %s; exiting", self.data_dir / paths.DAEMON_LOCK_NAME)
            return 0
        # bound before the memory is opened: the relay that started this daemon connects at once and its request
        # waits in the backlog for the memory (a database open), never for the model: answers are keyword-only until
        # the warm thread hands the model to the answering memories (`Answerers.give_model`)
        srv = self._bind()
        self.mem = Memory(use_model=False)  # its config follows config.toml per hook call; the model comes warm
        released = jobs.release_leases(self.mem.db.conn)  # we hold the lock: whoever leased them is dead
        if released:
            log.info("took over %s job(s) leased by a daemon that died", released)
        # requests search vectors in memory (vecindex.py), each on a memory of its own
        self.answerers = Answerers(self.mem, VectorCache())
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        log.info("daemon %s listening on %s (pid %s)", self.started_version, self.endpoint, os.getpid())
        # the job handlers' and answers' imports (the transcripts package) happen here, before any thread: two threads
        # importing that package at once each found the other's half-initialised module, and the daemon died on start
        from tempera.daemon.worker import work_one
        from tempera.inject import warm  # noqa: F401

        starter = threading.Thread(target=self._start_background, args=(work_one,), name="start", daemon=True)
        starter.start()
        # idle counts from when it serves: loading the model on a busy machine took longer than a short idle period,
        # and the daemon exited before it answered the `daemon start` that launched it
        self.last_activity = time.monotonic()
        try:
            self._serve(srv)
        finally:
            self.stop.set()
            self.wake.set()
            self.begin.set()
            srv.close()
            for endpoint in (self.sock_path, self.tcp_path):
                endpoint.unlink(missing_ok=True)
            starter.join(timeout=10)
            if self.watcher is not None:
                self.watcher.stop()
            if self.dream is not None:
                self.dream.stop()
            if self.team is not None:
                self.team.stop()
            for t in self.workers:
                t.join(timeout=10)
            self.answerers.close()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
        if self.restart:
            log.info("installed version changed (%s -> %s): re-executing", self.started_version, installed_version())
            os.execv(sys.executable, [sys.executable, "-m", "tempera.daemon", "run"])
        return 0

    def _start_background(self, work_one: Callable[[Memory], bool]) -> None:
        """Start the jobs, the model's warming, the transcript watch, the dream cycle and team sync once the request
        that started this daemon is answered (or BACKGROUND_AFTER_S passed): on two cores, the model loading beside
        the first answer doubled the first prompt's wait."""
        self.begin.wait(timeout=BACKGROUND_AFTER_S)
        if self.stop.is_set():
            self.warm_ended.set()
            return
        self.workers = [
            threading.Thread(target=self._work_loop, args=(work_one,), name="jobs", daemon=True),
            threading.Thread(target=self._warm, name="warm", daemon=True),
        ]
        for t in self.workers:
            t.start()
        self._start_watcher()
        self._start_dream()
        self._start_team()

    def _warm(self) -> None:
        """Load the model and the reference vectors (standing.py) on a memory of its own, so that no prompt pays for
        them; hook calls answered meanwhile are keyword-only. A model that cannot load keeps them so."""
        assert self.answerers is not None
        try:
            from tempera.core.embed import get_embedder

            embedder = get_embedder(self.answerers.config)
            if embedder is not None:
                embedder.warm()
                with self.answerers.lend() as mem:
                    if mem.store.vectors.status().state == "ok":
                        standing.reference_vectors(mem.db, embedder)
                self.answerers.give_model(embedder)  # last: an answering memory with a model is a warm one
        except Exception:
            log.exception("warming the model failed: hook calls are answered keyword-only")
        else:
            log.info("model %s warm", embedder.spec.name if embedder is not None else "none (keyword-only)")
        finally:
            self.warm_ended.set()

    def _start_watcher(self) -> None:
        if not self.config.daemon.watch_transcripts:
            return
        from tempera.daemon.watch import TranscriptWatcher

        try:
            self.watcher = TranscriptWatcher(self.data_dir, self.config.daemon.watch_debounce_seconds, self._touch)
            self.watcher.start()
        except Exception as exc:  # the watch is a convenience; the Stop hook path does not need it
            log.warning("transcript watch unavailable: %s", exc)
            self.watcher = None

    def _last_good(self) -> Config:
        """The config a new thread starts from if config.toml is broken in the instant it opens its Memory: the last
        one read, not read again here (a hook call may be re-reading it on that memory meanwhile)."""
        assert self.mem is not None
        return self.mem.config

    def _start_dream(self) -> None:
        """The dream cycle's own thread (tempera.dream.scheduler): it runs after idle periods and nightly, with the
        config of each moment; whether it runs at all (`dream.schedule`) is decided at the daemon's start."""
        if not self.config.dream.schedule:
            return
        from tempera.dream.scheduler import DreamScheduler

        self.dream = DreamScheduler(self.data_dir, lambda: self.last_activity, self._last_good())
        self.dream.start()

    def _start_team(self) -> None:
        """The team sync thread (tempera.daemon.teamsync), when the `team` extra is installed and `team.sync_seconds`
        is on at the daemon's start (the thread then follows the setting's edits)."""
        if self.config.team.sync_seconds <= 0:
            return
        try:
            import psycopg_pool  # noqa: F401  (the optional extra)

            from tempera.daemon.teamsync import TeamSyncer
        except ImportError:
            return
        self.team = TeamSyncer(self._last_good())
        self.team.start()

    def _touch(self) -> None:
        self.last_activity = time.monotonic()
        self.wake.set()
        if self.dream is not None:
            self.dream.mark_pending()

    def _idle_expired(self) -> bool:
        minutes = self.config.daemon.idle_exit_minutes
        return minutes > 0 and time.monotonic() - self.last_activity > minutes * 60

    def _serve(self, srv: socket.socket) -> None:
        every = self.config.daemon.version_check_seconds
        next_version_check = time.monotonic() + every
        while not self.stop.is_set():
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                conn = None
            if conn is not None:
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
            now = time.monotonic()
            if now >= next_version_check:
                next_version_check = now + every
                gone = next((p for p in self.install if not p.exists()), None)
                if gone is not None:
                    log.info("its install is gone (%s was removed): exiting", gone)
                    self.stop.set()
                elif installed_version() != self.started_version:
                    self.restart = True
                    self.stop.set()
            if self._idle_expired() and self._queue_idle():
                log.info("idle for %.0f minutes: exiting", self.config.daemon.idle_exit_minutes)
                self.stop.set()

    def _queue_idle(self) -> bool:
        """No job waits, none is worked, and no capture waits in the spool for the disk (core/spool.py)."""
        assert self.answerers is not None
        with self.answerers.lend() as mem:
            c = jobs.counts(mem.db.conn)
        return not c.get("pending") and not c.get("leased") and not spool.pending(self.data_dir)

    # -- requests -------------------------------------------------------------------------------
    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5.0)
            try:
                head, _, rest = wire.receive(conn, wire.MAX_HEADER_BYTES, line=True).partition(b"\n")
                req = json.loads(head.decode("utf-8"))
                if not isinstance(req, dict):
                    raise ValueError("a request is a JSON object")
                if self.token:  # TCP: the token checked, then the daemon's proof before the payload comes
                    if not hmac.compare_digest(str(req.get("token") or ""), self.token):
                        raise PermissionError("refused: the request does not carry this daemon's token")
                    wire.answer_proof(conn, self.proof)
                if req.get("op") == "hook":  # relay.py: a status line, then the bytes the hook prints
                    size = req.get("size")
                    if not isinstance(size, int) or not 0 <= size <= MAX_PAYLOAD_BYTES:
                        raise ValueError(f"a hook request's size is a byte count up to {MAX_PAYLOAD_BYTES}")
                    out = b"ok\n" + self.answer_hook(str(req.get("event") or ""), wire.receive_body(conn, rest, size))
                else:
                    out = json.dumps(self.dispatch(req)).encode("utf-8") + b"\n"
            except Exception as exc:
                log.exception("request failed")
                out = json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}).encode("utf-8") + b"\n"
            try:
                conn.sendall(out)
            except OSError:
                pass
            self.begin.set()

    def dispatch(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        self.last_activity = time.monotonic()
        if op == "ping":
            return {"ok": True, "pid": os.getpid(), "version": self.started_version}
        if op == "wake":
            self.wake.set()
            return {"ok": True}
        if op == "shutdown":
            self.stop.set()
            return {"ok": True}
        assert self.answerers is not None
        if op == "status":
            with self.answerers.lend() as mem:
                return {
                    "ok": True,
                    "pid": os.getpid(),
                    "version": self.started_version,
                    "jobs": jobs.counts(mem.db.conn),
                    "model": mem.embedder.spec.name if mem.embedder else None,
                    "answering_peak": self.answerers.peak,  # most hook calls answered at once since the start
                    "warm": self.warm_ended.is_set(),
                    "transport": self.endpoint,  # the model loaded (or failed to): `tempera daemon start` waits
                }
        return {"ok": False, "error": f"unknown op {op!r}"}

    def answer_hook(self, event: str, raw: bytes) -> bytes:
        """A whole hook call from relay.py (its event argument and raw stdin), answered as the hook process would
        answer it, on a memory of its own beside any other call (answerers.py); a queued job wakes the worker."""
        from tempera.inject.warm import hook_reply

        self.last_activity = time.monotonic()
        assert self.answerers is not None
        with self.answerers.lend(counted=True) as mem:
            # keyword-only until the warm thread gave the answering memories the model
            return hook_reply(mem, event, raw, wake=self.wake.set, keyword_only=mem.embedder is None)

    # -- jobs -----------------------------------------------------------------------------------
    def _work_loop(self, work_one: Callable[[Memory], bool]) -> None:
        # its own connection (the embedder is shared): jobs never wait behind requests, nor requests behind a job but
        # for a write's moment (answerers.py); its config follows config.toml per job (work_one)
        mem = Memory(last_good=self._last_good())
        lower_priority()
        try:
            while not self.stop.is_set():
                try:
                    did = work_one(mem)
                except Exception:
                    log.exception("job loop error")
                    did = False
                if did:
                    self.last_activity = time.monotonic()
                    continue
                self.wake.wait(timeout=2.0)
                self.wake.clear()
        finally:
            mem.close()


def configure_logging(data_dir: Path) -> None:
    handler = logging.FileHandler(data_dir / paths.DAEMON_LOG_NAME, encoding="utf-8")
    paths.secure_file(data_dir / paths.DAEMON_LOG_NAME)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger("tempera")
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)
    data_dir = paths.ensure_data_dir()
    configure_logging(data_dir)
    try:
        return Daemon(data_dir).run()
    except Exception as exc:
        log.exception("%s %s", FAILED, exc)
        return 1
