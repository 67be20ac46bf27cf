"""`tempera-mcp`'s entry: the handshake answered while the SDK is still loading. Standard library only.

Importing the `mcp` SDK alone takes longer than the 0.5 s a session may wait for `tools/list` (evals/bench_mcp.py),
and every Claude Code session waits for it. Yet what a client asks first — `server/discover` or `initialize`,
the acknowledgement of its subscription, `tools/list`, `prompts/list`, `resources/list` — has the same answer at
every start of the same code (for the same protocol version and client capabilities). So the SDK server runs
unchanged on a pair of pipes that stand in for stdin and stdout, and a relay between those pipes and the real
wire answers those requests from the replies the SDK gave at an earlier start, recorded in the data dir under a
fingerprint of the code that produced them (Tempera's sources, the SDK's, the interpreter). Everything else, the
`initialize` included (the SDK must see the client's capabilities), goes to the SDK in order; its reply to a
request already answered is dropped (see `Relay`). A first start, or one after any code change, records instead
of answering.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import sys
import threading
from types import FrameType
from pathlib import Path
from typing import Any, BinaryIO

from tempera.core import paths
from tempera.core.atomic import write_atomic

STATIC = {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
LISTEN, ACKNOWLEDGED = "subscriptions/listen", "notifications/subscriptions/acknowledged"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"  # in each request's _meta, from 2026-07-28 on
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"


def fingerprint() -> str:
    """What the recorded replies depend on: every Tempera source file, the SDK's packages and pydantic's (they
    write the schemas), the interpreter."""
    digest = hashlib.sha256(sys.version.encode())
    package = Path(__file__).resolve().parents[1]
    files = sorted(str(p) for p in package.rglob("*.py"))
    for name in ("mcp", "mcp_types", "pydantic", "pydantic_core"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            files.append(spec.origin)
    for file in files:
        st = os.stat(file)
        digest.update(f"{file}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class Replies:
    """Recorded results by `"<protocol version> <client capabilities> <method>"`, valid for one fingerprint;
    saved atomically, 0600."""

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
            doc = json.dumps({"fingerprint": self.key, "results": self.results})  # ASCII: any text survives
            write_atomic(self.path, doc.encode("ascii"), 0o600)
        except OSError:  # a read-only data dir only costs the next start its speed
            pass


def _message(line: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(line)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


class Relay:
    """Client lines to the SDK (or answered from `replies`), SDK lines to the client (minus duplicate answers).

    Two protocol eras reach it. The handshake era opens with `initialize`, whose reply is answered here and whose
    request still goes to the SDK. The stateless era (2026-07-28, what Claude Code speaks) names the version and the
    client's capabilities in every request's `_meta`: `server/discover` and the lists are answered here and never
    reach the SDK; `subscriptions/listen` goes to the SDK (it owns the subscription) but its acknowledgement, a
    notification, is sent from the record at once, since the client waits for it before listing.

    The SDK itself starts only when a request needs it (a tool call, or anything unrecorded): importing it costs a
    second of CPU that a session which never calls a tool would otherwise take from Claude Code at its start.
    """

    def __init__(self, replies: Replies, wire_in: BinaryIO, wire_out: BinaryIO, to_sdk: BinaryIO, from_sdk: BinaryIO):
        self.replies = replies
        self.wire_in, self.wire_out, self.to_sdk, self.from_sdk = wire_in, wire_out, to_sdk, from_sdk
        self.session: str | None = None  # handshake era: the version and capabilities `initialize` sent
        self.answered: set[Any] = set()  # request ids the relay answered: the SDK's reply is dropped
        self.acknowledged: set[Any] = set()  # subscription ids the relay acknowledged: the SDK's ack is dropped
        self.recording: dict[Any, str] = {}  # request id -> the name its SDK reply (or ack) is recorded under
        self.lock = threading.Lock()  # both threads write to the wire
        self.held: list[bytes] = []  # client lines the SDK must see, waiting for it to be needed
        self.started = False  # whether some request needed the SDK
        self.wanted = threading.Event()  # set when it is needed, or when the client has gone

    def _send(self, message: dict[str, Any]) -> None:
        self._pass(json.dumps(message).encode("ascii") + b"\n")  # ASCII escapes: valid whatever the text holds

    def _pass(self, line: bytes) -> None:
        with self.lock:
            self.wire_out.write(line)
            self.wire_out.flush()

    def _answerable(self, msg: dict[str, Any]) -> str | None:
        """The recorded name of a request whose answer never varies, else None."""
        method, params = msg.get("method"), msg.get("params")
        if "id" not in msg or not isinstance(method, str):
            return None
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str):
            context = f"{meta[VERSION_KEY]} {json.dumps(meta.get(CAPABILITIES_KEY), sort_keys=True)}"
        elif method == "initialize" and isinstance(params.get("protocolVersion"), str):
            self.session = f"{params['protocolVersion']} {json.dumps(params.get('capabilities'), sort_keys=True)}"
            return f"{self.session} initialize"
        elif self.session is None:
            return None
        else:
            context = self.session
        if method == LISTEN:
            return f"{context} {LISTEN} {json.dumps(params.get('notifications'), sort_keys=True)}"
        if method in STATIC and not params.get("cursor"):
            return f"{context} {method}"
        return None

    def _answer(self, msg: dict[str, Any], recorded: Any) -> bool:
        """Answer from the record; True when the request must still reach the SDK."""
        rid, method = msg["id"], msg["method"]
        if method == LISTEN:
            self.acknowledged.add(rid)
            params = json.loads(json.dumps(recorded))
            params.setdefault("_meta", {})[SUBSCRIPTION_KEY] = rid
            self._send({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": params})
            return True
        self.answered.add(rid)
        self._send({"jsonrpc": "2.0", "id": rid, "result": recorded})
        return method == "initialize"

    def _to_sdk(self, line: bytes, *, now: bool) -> None:
        """Hold `line` until some request needs the SDK (`now`); then start it and send everything, in order."""
        self.held.append(line)
        if now and not self.started:
            self.started = True
            self.wanted.set()
        if self.started:
            for held in self.held:
                self.to_sdk.write(held)
            self.held.clear()
            self.to_sdk.flush()

    def client_to_sdk(self) -> None:
        try:
            for line in iter(self.wire_in.readline, b""):
                msg = _message(line)
                name = self._answerable(msg)
                if name is not None and name in self.replies.results:
                    if self._answer(msg, self.replies.results[name]):
                        self._to_sdk(line, now=False)  # initialize, listen: the SDK sees them once it runs
                    continue
                if name is not None:
                    self.recording[msg["id"]] = name
                self._to_sdk(line, now="id" in msg)  # only the SDK answers this request; notifications wait
        except (BrokenPipeError, ValueError):  # the SDK has gone (or closed its end): nothing left to serve
            pass
        finally:
            self.wanted.set()  # the client left: main() starts nothing more
            try:
                self.to_sdk.close()  # EOF: the SDK server ends its session
            except OSError:
                pass

    def _from_sdk(self, msg: dict[str, Any]) -> bool:
        """Record what the SDK answered; True when the client must see it."""
        if msg.get("method") == ACKNOWLEDGED:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            sid = meta.get(SUBSCRIPTION_KEY)
            if sid in self.recording:
                self.replies.record(self.recording.pop(sid), params)
            if sid in self.acknowledged:
                self.acknowledged.discard(sid)
                return False
            return True
        rid = msg.get("id") if "method" not in msg else None
        if rid is None:
            return True
        if rid in self.recording and "result" in msg:
            self.replies.record(self.recording.pop(rid), msg["result"])
        if rid in self.answered:
            self.answered.discard(rid)
            return False
        return True

    def sdk_to_client(self) -> None:
        try:
            for line in iter(self.from_sdk.readline, b""):
                if self._from_sdk(_message(line)):
                    self._pass(line)
        except (BrokenPipeError, ValueError):
            pass


def _stop(signum: int, frame: FrameType | None) -> None:
    """Claude Code ends a session with SIGINT, and the SDK's stdio loop does not stop on it (it ran on, and Claude
    Code waited seconds for it at the end of every `claude -p`): leave at once. SQLite keeps every committed
    transaction and rolls back the one cut short."""
    os._exit(0)


def main() -> None:
    os.umask(0o077)
    signal.signal(signal.SIGINT, _stop)  # before the SDK's event loop starts, so it keeps this handler
    signal.signal(signal.SIGTERM, _stop)
    replies = Replies(paths.data_dir() / paths.MCP_REPLIES_NAME, fingerprint())
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
    relay.wanted.wait()
    if not relay.started:  # a session that only listed: the SDK was never needed, nor its second of CPU
        return
    from tempera.mcp_server.server import main as serve

    try:
        serve()
    finally:
        sys.stdout.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # closes the SDK's last write end: the relay drains it
        out.join(timeout=5)
