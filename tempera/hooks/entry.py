"""`tempera-hook <event>`: the Claude Code hook entry, and relay.py's fallback. Standard library only.

Fails open: whatever happens, exit 0 with stdout empty or one JSON object; tracebacks go to hooks.log in the
data dir. The warm path is relay.py's one request to the daemon; without it, the same gate answers in-process
(`inject/gate.py`) with the keyword-only context (`inject/context.py`), a capture is queued with the stdlib
driver, and the daemon is started (detached) for next time.
"""

from __future__ import annotations

import os
import sys

from tempera.core import paths
from tempera.core.settings import HookSettings, hook_settings
from tempera.inject import gate, payload
from tempera.inject.payload import HookPayload

# What only the call the daemon did not answer needs (sqlite3, the job queue, the keyword path) is imported there.


def read_stdin() -> bytes:
    """What Claude Code wrote on stdin (nothing for a tty), one byte past the most a payload may hold."""
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        return b""
    return stdin.buffer.read(payload.MAX_STDIN_BYTES + 1)


def _enqueue_once(hp: HookPayload) -> bool:
    """Write the capture job with the stdlib driver; False when there is no database or no schema yet (any other
    error, such as a full disk, is raised as it is)."""
    from tempera.core import jobs
    from tempera.inject import sqlhits

    conn = sqlhits.open_db(paths.db_path())
    if conn is None:
        return False
    try:
        jobs.enqueue_capture(conn, session_id=hp.session_id, transcript_path=hp.transcript_path)
        return True
    except sqlhits.sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return False
        raise
    finally:
        conn.close()


def _queue(hp: HookPayload) -> None:
    if not _enqueue_once(hp):
        # no database or no schema yet: create it once (the only non-stdlib import a hook may make), then retry
        from tempera.core.db import connect

        connect().close()
        if not _enqueue_once(hp):
            raise RuntimeError(f"could not queue the capture of {hp.transcript_path}")


def _keep(hp: HookPayload, exc: Exception) -> None:
    """A capture the database refused (a full or read-only disk, a broken file) is kept in the spool for the daemon
    to queue later; failing that, said in hooks.log, and failing that on stderr: never lost in silence."""
    from tempera.core import spool

    why = f"{type(exc).__name__}: {exc}"
    try:
        kept = spool.write(hp.session_id, hp.transcript_path, hp.event)
    except OSError as spool_exc:
        line = (
            f"{hp.event}: could not queue the capture of session {hp.session_id} ({why}) nor spool it ({spool_exc});"
            f" once the disk takes writes again, run: tempera import {hp.transcript_path}"
        )
        if not gate.log(line):
            sys.stderr.write(f"tempera: {line}\n")
        return
    gate.log(f"{hp.event}: could not queue the capture of session {hp.session_id} ({why}); spooled in {kept}")


def _enqueue(hp: HookPayload) -> None:
    from tempera.hooks.client import request, spawn_daemon

    try:
        _queue(hp)
    except Exception as exc:
        _keep(hp, exc)
    if request(paths.socket_path(), {"op": "wake"}, timeout=0.2) is None:
        spawn_daemon(paths.ensure_data_dir())


def _answer_without_daemon(settings: HookSettings) -> gate.Answer:
    def answer(hp: HookPayload) -> str:
        from tempera.hooks.client import spawn_daemon
        from tempera.inject.context import cold_answer

        spawn_daemon(paths.ensure_data_dir())  # for next time
        return cold_answer(hp, settings)

    return answer


def log_no_answer(event_arg: str, why: str) -> None:
    """Say in hooks.log why a daemon that was there gave no answer (the hook answers without it), as a "daemon
    error" line, which `tempera doctor` counts; no daemon at all is the ordinary cold path and is not logged."""
    if why:
        gate.log(f"{event_arg}: daemon error: {why}; answered without the daemon")


def run_payload(event_arg: str, raw: bytes, *, daemon_failed: bool) -> None:
    """One hook call on the stdin already read: through the daemon unless it failed already (relay.py asked it),
    else answered here. Failures propagate to the caller, which logs them."""
    event = gate.known_event(event_arg)
    if event is None:
        return
    settings = hook_settings()
    if settings.disabled:
        return
    if not daemon_failed:
        from tempera.hooks.relay import ask_daemon

        out, why = ask_daemon(os.fsencode(paths.socket_path()), event_arg, raw, settings.daemon_timeout)
        if out is not None:
            _write(out)
            return
        log_no_answer(event_arg, why)
    os.umask(0o077)
    _write(
        gate.output_bytes(
            gate.handle(event, payload.decode(raw), settings, answer=_answer_without_daemon(settings), enqueue=_enqueue)
        )
    )


def _write(out: bytes) -> None:
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()


def main() -> None:
    try:
        run_payload(sys.argv[1] if len(sys.argv) > 1 else "", read_stdin(), daemon_failed=False)
    except BaseException:  # fail open, always: even SystemExit and KeyboardInterrupt
        import traceback

        gate.log("hook failed:\n" + traceback.format_exc())
    sys.exit(0)


if __name__ == "__main__":
    main()
