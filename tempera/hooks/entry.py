"""`tempera-hook <event>`: the Claude Code hook entry. Standard library only on the hot path.

Fails open: whatever happens, exit 0 with stdout empty or one JSON object; tracebacks go to hooks.log in the
data dir. The warm path is one request to the daemon; without it, a keyword-only answer in-process and the
daemon started (detached) for next time. Stop only enqueues a capture job durably and returns.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from tempera.core import pause, paths
from tempera.hooks import payload as payloads
from tempera.hooks.settings import HookSettings, load

HOOK_LOG = "hooks.log"
LOG_MAX_BYTES = 2 * 1024 * 1024
INJECTING = {"SessionStart", "UserPromptSubmit"}
CAPTURING = {"Stop", "PreCompact", "SessionEnd"}


def log(message: str) -> None:
    """Append to hooks.log (0600), rotating once it grows past 2 MB; never raises."""
    try:
        d = paths.ensure_data_dir()
        p = d / HOOK_LOG
        if p.exists() and p.stat().st_size > LOG_MAX_BYTES:
            os.replace(p, d / (HOOK_LOG + ".1"))
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {message.rstrip()}\n")
    except Exception:
        pass


def _daemon_context(hp: payloads.HookPayload, settings: HookSettings) -> str | None:
    """The warm answer, or None when the daemon is not there (it is then started for next time)."""
    from tempera.hooks.client import request, spawn_daemon

    if settings.daemon_failed:  # relay.py asked already
        spawn_daemon(paths.ensure_data_dir())
        return None
    reply = request(paths.socket_path(), {"op": "inject", "event": hp.event, "session_id": hp.session_id,
                                          "cwd": hp.cwd, "prompt": hp.prompt, "source": hp.source},
                    timeout=settings.daemon_timeout)
    if reply is not None and reply.get("ok"):
        return str(reply.get("context") or "")
    if reply is not None:
        log(f"daemon error on {hp.event}: {reply.get('error')}")
    spawn_daemon(paths.ensure_data_dir())
    return None


def _cold_context(hp: payloads.HookPayload, settings: HookSettings) -> str:
    from tempera.hooks import coldpath

    conn = coldpath.open_db(paths.db_path())
    if conn is None:
        return ""
    try:
        return _cold_answer(conn, hp, settings)
    except coldpath.sqlite3.OperationalError as exc:  # the schema is being created right now: nothing to say
        log(f"{hp.event}: keyword path skipped ({exc})")
        return ""
    finally:
        conn.close()


def _cold_answer(conn: Any, hp: payloads.HookPayload, settings: HookSettings) -> str:
    """Keyword-only retrieval (UserPromptSubmit) or the most useful recent episodes (SessionStart)."""
    from tempera.core.project import project_for_path
    from tempera.hooks import coldpath, injectlog, render

    project = project_for_path(hp.cwd or os.getcwd())
    seen = injectlog.injected_ids(conn, hp.session_id)
    if hp.event == "UserPromptSubmit":
        hits = coldpath.keyword_hits(conn, hp.prompt, project, exclude=seen, limit=settings.max_episodes,
                                     min_hits=settings.min_keyword_hits, weights=settings.salience)
        header = render.HEADER_PROMPT
    else:
        hits = coldpath.useful_recent(conn, project, exclude=seen, limit=settings.max_episodes,
                                      weights=settings.salience)
        header = render.HEADER_SESSION
    text = render.render_blocks([(header, [render.episode_line(h) for h in hits])], settings.budget_chars)
    if text:
        injectlog.record(conn, session_id=hp.session_id, project_id=project.id, event=hp.event,
                         prompt=hp.prompt or None, hits=hits)
    return text


def _enqueue_once(hp: payloads.HookPayload) -> bool:
    """Write the capture job with the stdlib driver; False when there is no database or no schema yet."""
    from tempera.hooks import coldpath

    conn = coldpath.open_db(paths.db_path())
    if conn is None:
        return False
    try:
        coldpath.enqueue_capture(conn, session_id=hp.session_id, transcript_path=hp.transcript_path)
        return True
    except coldpath.sqlite3.OperationalError:
        return False
    finally:
        conn.close()


def _enqueue(hp: payloads.HookPayload) -> None:
    from tempera.hooks.client import request, spawn_daemon

    if not _enqueue_once(hp):
        # no database or no schema yet: create it once (the only non-stdlib import a hook may make), then retry
        from tempera.core.db import connect

        connect().close()
        if not _enqueue_once(hp):
            raise RuntimeError(f"could not queue the capture of {hp.transcript_path}")
    if request(paths.socket_path(), {"op": "wake"}, timeout=0.2) is None:
        spawn_daemon(paths.ensure_data_dir())


Answer = Callable[[payloads.HookPayload], str]
Enqueue = Callable[[payloads.HookPayload], None]


def handle(event: str, doc: dict[str, Any], settings: HookSettings, *, answer: Answer | None = None,
           enqueue: Enqueue | None = None) -> dict[str, Any] | None:
    """One hook call. In the hook process the answer comes from the daemon, else the keyword path, and a capture
    is queued with the stdlib driver; the daemon passes its own `answer` and `enqueue` (see relay.py)."""
    from tempera.hooks.render import hook_output

    if settings.disabled:
        return None
    hp = payloads.parse(event, doc)
    if pause.paused_for_cwd(hp.cwd):  # `tempera pause`: nothing injected, nothing captured
        return None
    if event in CAPTURING:
        if event == "Stop" and hp.stop_hook_active:
            return None
        if not hp.transcript_path:
            log(f"{hp.event}: no transcript_path in the payload; nothing to capture")
        else:
            (enqueue or _enqueue)(hp)
        return None
    if event not in INJECTING:
        return None
    if answer is not None:
        return hook_output(event, answer(hp))
    context = _daemon_context(hp, settings)
    if context is None:
        context = _cold_context(hp, settings)
    return hook_output(event, context)


def output_bytes(out: dict[str, Any] | None) -> bytes:
    """What the hook prints: nothing, or one JSON object on one line."""
    return b"" if out is None else (json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8")


def known_event(arg: str) -> str | None:
    """The Claude Code event a hook argument names; an unknown one is logged."""
    event = payloads.event_name(arg)
    if event is None:
        log(f"unknown hook event {arg!r}; expected session-start, user-prompt-submit, stop, pre-compact or session-end")
    return event


def run(argv: list[str]) -> None:
    event = known_event(argv[0] if argv else "")
    if event is None:
        return
    settings = load()
    if settings.disabled:
        return
    os.umask(0o077)
    _print(handle(event, payloads.read_stdin(), settings))


def run_payload(event_arg: str, raw: bytes, *, daemon_failed: bool) -> None:
    """relay.py's fallback: the stdin it read, answered here; after a failed daemon request, straight to the
    keyword path and the daemon started. Failures propagate to the relay, which logs them."""
    event = known_event(event_arg)
    if event is None:
        return
    os.umask(0o077)
    _print(handle(event, payloads.decode(raw), load()._replace(daemon_failed=daemon_failed)))


def _print(out: dict[str, Any] | None) -> None:
    if out is not None:
        sys.stdout.buffer.write(output_bytes(out))
        sys.stdout.flush()


def main() -> None:
    try:
        run(sys.argv[1:])
    except BaseException:  # fail open, always: even SystemExit and KeyboardInterrupt
        import traceback

        log("hook failed:\n" + traceback.format_exc())
    sys.exit(0)


if __name__ == "__main__":
    main()
