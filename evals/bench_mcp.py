"""Wall time from starting `tempera-mcp` to its `tools/list` reply: what every Claude Code session pays for the server.

    python evals/bench_mcp.py [--runs 10]

The client here is a bare JSON-RPC writer (no SDK), so the clock measures the server alone, from spawn to the
`tools/list` reply, in both protocol eras: Claude Code's own sequence (`server/discover`, `subscriptions/listen`
and its acknowledgement, `server/discover`, the three lists; protocol 2026-07-28) and the handshake
(`initialize`, `notifications/initialized`, `tools/list`). The server runs on a fresh data dir. Its first start there
records the handshake replies (tempera/mcp_server/warmstart.py) and is reported on its own; the median is over the
starts after it, as every session after a user's first one starts.
Baselines from the same run on the same interpreter, so machine load hits every row alike: `python -c pass` (the
floor of starting Python) and `python -c "import mcp"` (the floor of any server built on the SDK).
Target: median <= 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Callable
from typing import IO, Any

HANDSHAKE_VERSION = "2025-06-18"  # the initialize era
STATELESS_VERSION = "2026-07-28"  # per-request _meta, no initialize: what Claude Code 2.1.332 speaks
TARGET_SECONDS = 0.5


def server_command() -> list[str]:
    """The console script the installer registers, next to this interpreter."""
    exe = Path(sys.executable).with_name("tempera-mcp")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tempera.mcp_server.server"]


def _send(pipe: IO[bytes], message: dict[str, object]) -> None:
    pipe.write(json.dumps(message).encode("utf-8") + b"\n")
    pipe.flush()


def _read_until(pipe: IO[bytes], wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the server closed stdout before replying")
        message = json.loads(line)
        if wanted(message):
            return dict(message)


def _reply(pipe: IO[bytes], want_id: object) -> dict[str, Any]:
    return _read_until(pipe, lambda m: m.get("id") == want_id and "method" not in m)


def _acknowledged(pipe: IO[bytes], subscription: str) -> dict[str, Any]:
    return _read_until(
        pipe,
        lambda m: (
            m.get("method") == "notifications/subscriptions/acknowledged"
            and m.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId") == subscription
        ),
    )


def _spawn(env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )


def _finish(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _tool_count(listed: dict[str, object]) -> int:
    result = listed.get("result")
    tools = result.get("tools", []) if isinstance(result, dict) else []
    return len(tools) if isinstance(tools, list) else 0


def time_handshake(env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to the tools/list reply in the handshake era (initialize first), and the tools listed."""
    started = time.perf_counter()
    proc = _spawn(env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(
            proc.stdin,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench_mcp", "version": "0"},
                },
            },
        )
        _reply(proc.stdout, 1)
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = _reply(proc.stdout, 2)
        seconds = time.perf_counter() - started
    finally:
        _finish(proc)
    return seconds, _tool_count(listed)


def time_stateless(env: dict[str, str]) -> tuple[float, int]:
    """The same for Claude Code's own sequence (2.1.332, protocol 2026-07-28, recorded from its wire): discover,
    subscribe and wait for the acknowledgement, discover again, then the three lists."""
    meta = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "bench_mcp", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
        }
    }
    started = time.perf_counter()
    proc = _spawn(env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": meta})
        _reply(proc.stdout, "probe")
        _send(
            proc.stdin,
            {
                "jsonrpc": "2.0",
                "id": "listen:0",
                "method": "subscriptions/listen",
                "params": {**meta, "notifications": {"toolsListChanged": True}},
            },
        )
        _acknowledged(proc.stdout, "listen:0")
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": meta})
        _reply(proc.stdout, 0)
        for n, method in enumerate(("prompts/list", "resources/list", "tools/list"), 1):
            _send(proc.stdin, {"jsonrpc": "2.0", "id": n, "method": method, "params": meta})
        listed = _reply(proc.stdout, 3)
        seconds = time.perf_counter() - started
    finally:
        _finish(proc)
    return seconds, _tool_count(listed)


def time_python(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    servers = {"tempera-mcp, Claude Code's sequence": time_stateless, "tempera-mcp, initialize first": time_handshake}
    rows: dict[str, list[float]] = {"python -c pass": [], "python -c 'import mcp'": [], **{k: [] for k in servers}}
    counts, first = set(), {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TEMPERA_DATA_DIR": str(Path(tmp) / "data")}
        for name, timed in servers.items():  # the first start on this data dir records the replies
            first[name], n = timed(env)
            counts.add(n)
        for _ in range(args.runs):  # interleaved, so load hits every row alike
            rows["python -c pass"].append(time_python("pass"))
            rows["python -c 'import mcp'"].append(time_python("import mcp"))
            for name, timed in servers.items():
                seconds, n = timed(env)
                rows[name].append(seconds)
                counts.add(n)
    floor = statistics.median(rows["python -c pass"])
    sdk = statistics.median(rows["python -c 'import mcp'"])
    print(f"{' '.join(server_command())}: {args.runs} run(s) each, tools listed: {sorted(counts)}")
    for name, xs in rows.items():
        med = statistics.median(xs)
        print(
            f"{name:<36} median {med:6.3f} s  min {min(xs):6.3f}  max {max(xs):6.3f}  "
            f"x{med / floor:5.1f} of python  x{med / sdk:4.2f} of import mcp"
        )
    for name, seconds in first.items():
        print(f"{name + ', first start (records)':<36} {seconds:6.3f} s")
    worst = max(statistics.median(rows[name]) for name in servers)
    print(f"target: median <= {TARGET_SECONDS} s: {'met' if worst <= TARGET_SECONDS else 'NOT met'}")
    return 0 if worst <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
