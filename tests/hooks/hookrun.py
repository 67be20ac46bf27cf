"""Running real hook subprocesses fed what Claude Code sends, and managing the daemon in tests.

`HOOK` is the command `tempera install` writes (relay.py, isolated and without site); `ENTRY` is the
`tempera-hook` console entry (the plugin form, and the relay's fallback). In the run with the Windows transport
forced (.ci/run's second pass, `TEMPERA_DAEMON__TRANSPORT=tcp`), `HOOK` runs the relay as Windows' Python would: with
no unix sockets (`without_unix_sockets`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import tempera.hooks

RELAY = str(Path(tempera.hooks.__file__).with_name("relay.py"))


def without_unix_sockets(relay: str = RELAY) -> list[str]:
    """The relay's command on a Python without AF_UNIX (as on Windows): the module attribute removed, then the file
    run as the hook command runs it."""
    code = (
        "import _socket, runpy, sys; del _socket.AF_UNIX; "
        f"sys.argv = [{relay!r}, *sys.argv[1:]]; runpy.run_path({relay!r}, run_name='__main__')"
    )
    return [sys.executable, "-I", "-S", "-c", code]


WINDOWS_PASS = os.environ.get("TEMPERA_DAEMON__TRANSPORT") == "tcp"
HOOK = without_unix_sockets() if WINDOWS_PASS else [sys.executable, "-I", "-S", RELAY]
ENTRY = [sys.executable, "-m", "tempera.hooks.entry"]


def run_hook(
    event: str,
    payload: dict[str, Any] | bytes,
    *,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    command: list[str] = HOOK,
) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [*command, event], input=data, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def context_of(r: subprocess.CompletedProcess[bytes]) -> str:
    """The additionalContext a hook printed ('' when it printed nothing); fails on anything else."""
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    if not out.strip():
        return ""
    doc = json.loads(out)
    return doc["hookSpecificOutput"]["additionalContext"]


def keyword_only(base: Path) -> dict[str, str]:
    """The environment of a daemon without a model (an empty model cache, no offline package): it answers every
    prompt keyword-only, as any daemon answers until its model is warm. A hook run with it starts such a daemon."""
    empty = base / "no-models"
    empty.mkdir(parents=True, exist_ok=True)
    return {"FASTEMBED_CACHE_DIR": str(empty), "TEMPERA_EMBEDDING__USE_OFFLINE_PACKAGE": "false"}
