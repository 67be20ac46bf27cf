"""`tempera-hook <event>`: the console entry (relay.py's path, with `site` loaded), and what a hook does when no
daemon answered.

The daemon is the only answerer. When nobody listens on its socket, the hook starts it and asks again for at most
`inject.daemon_start_seconds` (the daemon binds before it opens the memory and answers keyword-only until its
model is warm). When that fails too, nothing is injected (fail open: exit 0, no output), hooks.log says why, and a
capture (Stop, PreCompact, SessionEnd) is kept in the spool (core/spool.py), which the daemon queues once it runs.
Only that cold path reads config.toml (with config.py's reader: the kill switch, how long to wait).
"""

from __future__ import annotations

import sys
import time

from tempera.core import paths
from tempera.hooks.relay import ask_daemon
from tempera.inject import gate, payload
from tempera.inject.payload import HookPayload


def answer_cold(event_arg: str, raw: bytes, why: str) -> bytes:
    """What the hook prints when the daemon gave no answer to the first request (`why`, '' when nobody listened):
    the answer of the daemon this call starts, or nothing. A call the gate would not act on (the kill switch,
    `tempera pause`, a Stop inside a stop hook...) starts no daemon."""
    from tempera.core.config import load_config  # here: the console entry's warm path imports this module too
    from tempera.core.errors import InvalidInput

    event = gate.known_event(event_arg)
    if event is None:
        return b""
    try:
        cfg = load_config()
    except InvalidInput as exc:  # no daemon can start on it either: say so, keep a capture
        disabled, wait, why = False, 0.0, why or f"{exc}; no daemon can start until it is fixed"
    else:
        disabled, wait = cfg.general.disabled, cfg.inject.daemon_start_seconds
    hp = gate.admitted(event, payload.decode(raw), disabled=disabled)
    if hp is None:
        return b""
    if not why:
        out, why = _start_and_ask(event_arg, raw, wait)
        if out is not None:
            return out
    gate.log(f"{event_arg}: daemon error: {why}; nothing injected")
    if event in gate.CAPTURING:
        _keep_capture(hp)
    return b""


def _start_and_ask(event_arg: str, raw: bytes, wait: float) -> tuple[bytes | None, str]:
    """Start the daemon (client.spawn_daemon: at most once per guard window, so one starting already is waited
    for) and ask it until `wait` seconds have passed."""
    from tempera.hooks.client import spawn_daemon

    deadline = time.monotonic() + wait
    spawn_daemon(paths.ensure_data_dir())
    directory = str(paths.data_dir())
    while True:
        left = deadline - time.monotonic()
        out, why = ask_daemon(directory, event_arg, raw, max(left, 0.05))
        if out is not None:
            return out, why
        if why and time.monotonic() < deadline:  # the daemon's own error, not the end of our patience
            return None, why
        if why or left <= 0:
            return None, f"the daemon it started did not answer within {wait} s"
        time.sleep(0.02)


def _keep_capture(hp: HookPayload) -> None:
    """A capture no daemon took is spooled for the daemon to queue later; failing that, said in hooks.log, and
    failing that on stderr: never lost in silence."""
    from tempera.core import spool

    try:
        kept = spool.write(hp.session_id, hp.transcript_path, hp.event)
    except OSError as exc:
        line = (
            f"{hp.event}: could not spool the capture of session {hp.session_id} ({exc});"
            f" once the disk takes writes again, run: tempera import {hp.transcript_path}"
        )
        if not gate.log(line):
            sys.stderr.write(f"tempera: {line}\n")
        return
    gate.log(f"{hp.event}: the capture of session {hp.session_id} is spooled in {kept} for the daemon")


def main() -> None:
    from tempera.hooks import relay

    relay.run(sys.argv)


if __name__ == "__main__":
    main()
