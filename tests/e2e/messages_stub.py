"""A local stand-in for the Anthropic Messages API that the real Claude Code CLI can be pointed at.

Why our own copy: the e2e suite asserts on what Claude Code actually sent the model (the `<tempera-memory>` block,
MCP tool results), so every request is logged as one JSON line, and the agent loop must follow a script so the tools
really run. Standard library only, so it runs wherever the tests run.

Replies are consumed in order by requests that carry `tools` (the agent loop, subagents included); requests without
tools (small side calls) get a short text and consume nothing. A reply is `{"text": "..."}` or
`{"tool_use": {"name": "Bash", "input": {...}, "id": "toolu_optional"}, "text": "optional text before the call"}`.
When the script runs out the reply is `{"text": "Done."}`. Both streaming (SSE) and plain JSON answers are served.

    python messages_stub.py --port 18080 --log requests.jsonl --script script.json   # standalone, for poking at it
"""

from __future__ import annotations

import argparse
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Reply = dict[str, Any]
FALLBACK: Reply = {"text": "Done."}


class MessagesStub:
    """The server plus its script and log; `start()` binds a free loopback port and serves from a daemon thread."""

    def __init__(self, log_path: Path, script: list[Reply] | None = None) -> None:
        self.log_path = log_path
        self._script: list[Reply] = list(script or [])
        self._step = 0  # how many scripted replies have been served since the last `load`
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- the script ---------------------------------------------------------------------------------------------
    def load(self, script: list[Reply]) -> None:
        """Replace the script (one Claude Code run each, so a leftover reply cannot leak into the next run)."""
        with self._lock:
            self._script = list(script)
            self._step = 0

    def unused(self) -> list[Reply]:
        """Scripted replies nobody asked for: a run that leaves some did not do what its test scripted."""
        with self._lock:
            return list(self._script)

    def _next(self, agent_loop: bool) -> tuple[Reply, int | None]:
        with self._lock:
            if not (agent_loop and self._script):
                return FALLBACK, None
            self._step += 1
            return self._script.pop(0), self._step - 1

    # -- the log -------------------------------------------------------------------------------------------------
    def _log(self, entry: dict[str, Any]) -> None:
        with self._lock, self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")

    def requests(self) -> list[dict[str, Any]]:
        """Every logged request so far: {method, path, body, step} (step: the scripted reply that answered it)."""
        if not self.log_path.exists():
            return []
        with self._lock:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    # -- serving -------------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "start() the stub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self, port: int = 0) -> "MessagesStub":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="messages-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The message for one POST and its stop reason; logs the request first."""
        reply, step = self._next(bool(body.get("tools")))
        self._log({"method": "POST", "path": path, "body": body, "step": step})
        content: list[dict[str, Any]] = []
        if reply.get("text"):
            content.append({"type": "text", "text": reply["text"]})
        if reply.get("tool_use"):
            call = dict(reply["tool_use"])
            call.setdefault("id", "toolu_" + uuid.uuid4().hex[:20])
            content.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["input"]})
        stop = "tool_use" if reply.get("tool_use") else "end_turn"
        message = {
            "id": "msg_" + uuid.uuid4().hex[:20],
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 12},
        }
        return message, stop


def sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The streaming form of one message: the event sequence the Messages API sends."""
    start = dict(message, content=[], stop_reason=None)
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"index": i, "content_block": dict(block, input={})}))
            events.append(
                (
                    "content_block_delta",
                    {"index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                )
            )
        events.append(("content_block_stop", {"index": i}))
    events.append(
        (
            "message_delta",
            {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}, "usage": {"output_tokens": 12}},
        )
    )
    events.append(("message_stop", {}))
    return events


def _handler_for(stub: MessagesStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # the JSON log is the record; stderr stays quiet
            pass

        def _start(self, content_type: str, length: int | None) -> None:
            """Status and headers; without a length the body is an event stream that ends with the connection."""
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header(*(("content-length", str(length)) if length is not None else ("connection", "close")))
            self.end_headers()

        def _json(self, obj: dict[str, Any]) -> None:
            data = json.dumps(obj).encode()
            self._start("application/json", len(data))
            self.wfile.write(data)

        def do_GET(self) -> None:
            stub._log({"method": "GET", "path": self.path, "body": None, "step": None})
            self._json({})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            body = body if isinstance(body, dict) else {}
            if "count_tokens" in self.path:
                stub._log({"method": "POST", "path": self.path, "body": body, "step": None})
                return self._json({"input_tokens": 10})
            message, _ = stub.answer(self.path, body)
            if not body.get("stream"):
                return self._json(message)
            self._start("text/event-stream", None)
            for name, data in sse_events(message):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(dict(data, type=name))}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", type=Path, required=True, help="file that receives one JSON line per request")
    ap.add_argument("--script", type=Path, help="JSON list of replies for the agent loop")
    a = ap.parse_args()
    script = json.loads(a.script.read_text()) if a.script else []
    stub = MessagesStub(a.log, script).start(a.port)
    print(stub.url, flush=True)
    assert stub._thread is not None
    stub._thread.join()


if __name__ == "__main__":
    main()
