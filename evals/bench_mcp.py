"""Wall time from starting `tempera-mcp` to its `tools/list` reply: what every Claude Code session pays for the server.

    python evals/bench_mcp.py [--runs 10]

The client here is a bare JSON-RPC writer (no SDK), so the clock measures the server alone: spawn, `initialize`,
`notifications/initialized`, `tools/list`, reply read. The server runs on a fresh data dir. Its first start there
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
from typing import IO

PROTOCOL_VERSION = "2025-06-18"  # a handshake version Claude Code offers
TARGET_SECONDS = 0.5


def server_command() -> list[str]:
    """The console script the installer registers, next to this interpreter."""
    exe = Path(sys.executable).with_name("tempera-mcp")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "tempera.mcp_server.server"]


def _send(pipe: IO[bytes], message: dict[str, object]) -> None:
    pipe.write(json.dumps(message).encode("utf-8") + b"\n")
    pipe.flush()


def _reply(pipe: IO[bytes], want_id: int) -> dict[str, object]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("the server closed stdout before replying")
        message = json.loads(line)
        if message.get("id") == want_id:
            return dict(message)


def time_tools_list(env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to the tools/list reply, and how many tools it listed."""
    started = time.perf_counter()
    proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "bench_mcp", "version": "0"}}})
        _reply(proc.stdout, 1)
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = _reply(proc.stdout, 2)
        seconds = time.perf_counter() - started
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    result = listed.get("result")
    tools = result.get("tools", []) if isinstance(result, dict) else []
    return seconds, len(tools)


def time_python(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {"python -c pass": [], "python -c 'import mcp'": [], "tempera-mcp tools/list": []}
    counts = set()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TEMPERA_DATA_DIR": str(Path(tmp) / "data")}
        first, n = time_tools_list(env)
        counts.add(n)
        for _ in range(args.runs):  # interleaved, so load hits every row alike
            rows["python -c pass"].append(time_python("pass"))
            rows["python -c 'import mcp'"].append(time_python("import mcp"))
            seconds, n = time_tools_list(env)
            rows["tempera-mcp tools/list"].append(seconds)
            counts.add(n)
    floor = statistics.median(rows["python -c pass"])
    sdk = statistics.median(rows["python -c 'import mcp'"])
    print(f"{' '.join(server_command())}: {args.runs} run(s) each, tools listed: {sorted(counts)}")
    for name, xs in rows.items():
        med = statistics.median(xs)
        print(f"{name:<26} median {med:6.3f} s  min {min(xs):6.3f}  max {max(xs):6.3f}  "
              f"x{med / floor:5.1f} of python  x{med / sdk:4.2f} of import mcp")
    server = statistics.median(rows["tempera-mcp tools/list"])
    print(f"{'first start (records)':<26} {first:6.3f} s")
    print(f"target: median <= {TARGET_SECONDS} s: {'met' if server <= TARGET_SECONDS else 'NOT met'}")
    return 0 if server <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
