"""`tempera-mcp`'s entry: the handshake answered while the SDK is still loading. Standard library only.

Importing the `mcp` SDK alone takes longer than the 0.5 s a session may wait for `tools/list` (evals/bench_mcp.py),
and every Claude Code session waits for it. Yet what a client asks first — `initialize`, `tools/list`,
`prompts/list`, `resources/list` — has the same answer at every start of the same code. So the SDK server runs
unchanged on a pair of pipes that stand in for stdin and stdout, and a relay between those pipes and the real
wire answers those requests from the replies the SDK gave at an earlier start, recorded in the data dir under a
fingerprint of the code that produced them (Tempera's sources, the SDK's, the interpreter). Everything else, the
`initialize` included (the SDK must see the client's capabilities), goes to the SDK in order; its reply to a
request already answered is dropped. A first start, or one after any code change, records instead of answering.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

from tempera.core import paths

CACHE_NAME = "mcp-replies.json"
STATIC_LISTS = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}


def fingerprint() -> str:
    """What the recorded replies depend on: every Tempera source file, the SDK's packages, the interpreter."""
    digest = hashlib.sha256(sys.version.encode())
    package = Path(__file__).resolve().parents[1]
    files = sorted(str(p) for p in package.rglob("*.py"))
    for name in ("mcp", "mcp_types"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            files.append(spec.origin)
    for file in files:
        st = os.stat(file)
        digest.update(f"{file}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Replies:
    """Recorded results by `"<protocol version> <method>"`, valid for one fingerprint; saved atomically, 0600."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = path, key
        self.results: dict[str, Any] = {}
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("fingerprint") == key and isinstance(doc.get("results"), dict):
                self.results = doc["results"]
        except (OSError, ValueError, AttributeError):
            pass

    def record(self, name: str, result: Any) -> None:
        self.results[name] = result
        try:
            paths.ensure_data_dir(self.path.parent)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"fingerprint": self.key, "results": self.results}, fh, ensure_ascii=False)
            os.replace(tmp, self.path)
        except OSError:  # a read-only data dir only costs the next start its speed
            pass


def _message(line: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(line)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


class Relay:
    """Client lines to the SDK (or answered from `replies`), SDK lines to the client (minus duplicate answers)."""

    def __init__(self, replies: Replies, wire_in: BinaryIO, wire_out: BinaryIO, to_sdk: BinaryIO,
                 from_sdk: BinaryIO):
        self.replies = replies
        self.wire_in, self.wire_out, self.to_sdk, self.from_sdk = wire_in, wire_out, to_sdk, from_sdk
        self.version: str | None = None  # the protocol version this client asked for in `initialize`
        self.answered: set[Any] = set()  # request ids the relay answered: the SDK's reply is dropped
        self.recording: dict[Any, str] = {}  # request id -> the name its SDK reply is recorded under
        self.lock = threading.Lock()  # both threads write to the wire

    def _send(self, line: bytes) -> None:
        with self.lock:
            self.wire_out.write(line)
            self.wire_out.flush()

    def _answerable(self, msg: dict[str, Any]) -> str | None:
        """The recorded name of a request whose answer never varies, else None."""
        method, params = msg.get("method"), msg.get("params")
        if "id" not in msg or not isinstance(method, str):
            return None
        if method == "initialize":
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            self.version = version if isinstance(version, str) else None
            return None if self.version is None else f"{self.version} initialize"
        if method in STATIC_LISTS and self.version and not (isinstance(params, dict) and params.get("cursor")):
            return f"{self.version} {method}"
        return None

    def client_to_sdk(self) -> None:
        try:
            for line in iter(self.wire_in.readline, b""):
                msg = _message(line)
                name = self._answerable(msg)
                if name is not None and name in self.replies.results:
                    self.answered.add(msg["id"])
                    self._send(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                           "result": self.replies.results[name]}).encode() + b"\n")
                    if msg["method"] != "initialize":
                        continue
                elif name is not None:
                    self.recording[msg["id"]] = name
                self.to_sdk.write(line)
                self.to_sdk.flush()
        except (BrokenPipeError, ValueError):  # the SDK has gone (or closed its end): nothing left to serve
            pass
        finally:
            try:
                self.to_sdk.close()  # EOF: the SDK server ends its session
            except OSError:
                pass

    def sdk_to_client(self) -> None:
        try:
            for line in iter(self.from_sdk.readline, b""):
                msg = _message(line)
                rid = msg.get("id") if "method" not in msg else None
                if rid is not None and rid in self.recording and "result" in msg:
                    self.replies.record(self.recording.pop(rid), msg["result"])
                if rid is not None and rid in self.answered:
                    self.answered.discard(rid)
                    continue
                self._send(line)
        except (BrokenPipeError, ValueError):
            pass


def main() -> None:
    os.umask(0o077)
    replies = Replies(paths.data_dir() / CACHE_NAME, fingerprint())
    wire_in, wire_out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    sdk_in, to_sdk = os.pipe()
    from_sdk, sdk_out = os.pipe()
    os.dup2(sdk_in, 0)  # the SDK's stdio transport reads fd 0 and writes fd 1, as ever
    os.dup2(sdk_out, 1)
    os.close(sdk_in)
    os.close(sdk_out)
    relay = Relay(replies, wire_in, wire_out, os.fdopen(to_sdk, "wb"), os.fdopen(from_sdk, "rb"))
    threading.Thread(target=relay.client_to_sdk, name="mcp-relay-in", daemon=True).start()
    out = threading.Thread(target=relay.sdk_to_client, name="mcp-relay-out", daemon=True)
    out.start()
    from tempera.mcp_server.server import main as serve

    try:
        serve()
    finally:
        sys.stdout.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # closes the SDK's last write end: the relay drains it
        out.join(timeout=5)
