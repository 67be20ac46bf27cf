"""`tempera daemon start|stop|status|run`: the warm background worker."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option
from tempera.core import paths, processes
from tempera.core.db import require_writable_dir
from tempera.core.errors import TemperaError
from tempera.hooks.client import request, spawn_daemon


def ping(timeout: float = 1.0) -> dict[str, Any] | None:
    return request(paths.data_dir(), {"op": "status"}, timeout=timeout)


def _lock_pid() -> int | None:
    try:
        return int((paths.data_dir() / paths.DAEMON_LOCK_NAME).read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


@click.group()
def daemon() -> None:
    """The background worker that keeps the model warm and captures sessions (hooks start it by themselves)."""


@daemon.command()
@click.option(
    "--wait", "wait_s", type=float, default=30.0, show_default=True, help="Seconds to wait for its warm answer."
)
def start(wait_s: float) -> None:
    """Start the daemon detached and wait until its model is warm (no-op when it is already running)."""
    if ping():
        click.echo("daemon already running")
        return
    data = paths.ensure_data_dir()
    require_writable_dir(data)
    (data / paths.DAEMON_SPAWN_NAME).unlink(missing_ok=True)
    log = data / paths.DAEMON_LOG_NAME
    offset = log.stat().st_size if log.exists() else 0
    spawn_daemon(data)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        reply = ping()
        if reply and reply.get("warm"):
            click.echo(f"daemon running (pid {reply['pid']}, version {reply['version']})")
            return
        reason = _failure_since(log, offset)
        if reason:
            raise TemperaError(f"the daemon failed to start: {reason} (details in {log})")
        time.sleep(0.1)
    tail = _log_since(log, offset).strip().splitlines()
    raise TemperaError(
        f"the daemon did not answer within {wait_s:.0f}s; "
        + (f"its last words in {log}: {tail[-1]}" if tail else f"it wrote nothing to {log}")
    )


def _log_since(log: Path, offset: int) -> str:
    """What the daemon wrote to its log after `offset` (its stderr goes there too, so a crash shows)."""
    try:
        with log.open("rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _failure_since(log: Path, offset: int) -> str | None:
    """The reason of a daemon that died after `offset`: its FAILED line."""
    from tempera.daemon.server import FAILED

    for line in _log_since(log, offset).splitlines():
        if FAILED in line:
            return line.split(FAILED, 1)[1].strip()
    return None


@daemon.command()
@click.option(
    "--wait",
    "wait_s",
    type=float,
    default=15.0,
    show_default=True,
    help="Seconds to wait for it to exit before sending SIGTERM.",
)
def stop(wait_s: float) -> None:
    """Ask the daemon to exit (SIGTERM if it does not answer)."""
    click.echo("daemon stopped" if stop_daemon(wait_s) else "daemon not running")


def stop_daemon(wait_s: float = 15.0) -> bool:
    """Ask the daemon to exit, SIGTERM after `wait_s`; False when none was running."""
    reply = request(paths.data_dir(), {"op": "shutdown"}, timeout=2.0)
    pid = _lock_pid()
    if reply is None and pid is None:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and any(p.exists() for p in paths.endpoint_files()):
        time.sleep(0.1)
    (paths.data_dir() / paths.DAEMON_SPAWN_NAME).unlink(missing_ok=True)  # the next hook may start a fresh one at once
    if any(p.exists() for p in paths.endpoint_files()) and pid:
        processes.terminate(pid)
    return True


def stale_daemon_files() -> list[Path]:
    """The socket (or TCP port file) and lock a daemon killed mid-run leaves: an endpoint nobody answers on, a lock
    nobody holds. Hooks cope with them, but `daemon stop` would signal the pid in that lock, which may be another
    process's now."""
    lock = paths.data_dir() / paths.DAEMON_LOCK_NAME
    left = [p for p in paths.endpoint_files() if p.exists() or p.is_symlink()]
    if not left or ping():
        return []
    had_lock = lock.exists()
    try:
        with daemon_lock_held(wait_s=0):
            pass
    except TemperaError:
        return []  # a daemon holds the lock: it is starting, or too busy to answer
    return [*left, lock] if had_lock else left


def remove_stale_daemon_files() -> list[Path]:
    """Delete what `stale_daemon_files` finds, holding the lock so no daemon starts in between."""
    stale = stale_daemon_files()
    if stale:
        with daemon_lock_held(wait_s=0):
            for path in stale:
                path.unlink(missing_ok=True)
    return stale


@contextmanager
def daemon_lock_held(wait_s: float = 15.0) -> Iterator[None]:
    """Hold the daemon's lock, so no daemon runs (one a hook starts meanwhile exits at once) while we work on the
    database file underneath it."""
    fd = os.open(paths.ensure_data_dir() / paths.DAEMON_LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            if processes.try_lock(fd):
                break
            if time.monotonic() > deadline:
                raise TemperaError(
                    "the daemon is still running; stop it (`tempera daemon stop`) and run the command again"
                ) from None
            time.sleep(0.1)
        yield
    finally:
        os.close(fd)


@daemon.command("status")
@json_option
def daemon_status(as_json: bool) -> None:
    """Whether the daemon answers, its pid, version, model and job counts."""
    reply = ping()
    data = reply or {"ok": False, "running": False}
    if reply:
        data["running"] = True
    emit(
        data,
        as_json,
        lambda d: click.echo(
            f"running: pid {d['pid']}, version {d['version']}, model {d.get('model') or 'none'}, jobs {d.get('jobs')}"
            if d.get("running")
            else "not running (hooks start it on demand; or `tempera daemon start`)"
        ),
    )


@daemon.command()
def run() -> None:
    """Run the daemon in the foreground (what `start` launches)."""
    from tempera.daemon.server import main

    raise SystemExit(main())


COMMANDS = [daemon]
