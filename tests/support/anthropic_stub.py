"""A local stand-in for the Anthropic Messages API (wire format, plain JSON and SSE streaming), so LLM code paths
run offline against the real `anthropic` SDK. Replies are scripted; every request body is kept for assertions.

    with AnthropicStub([{"text": '{"intent": "..."}', "input_tokens": 900, "output_tokens": 60}]) as stub:
        client = Anthropic(api_key="sk-test", base_url=stub.url)

A reply is {"text": str, "input_tokens": int, "output_tokens": int} (token counts default to 100 / 20); when the
script runs out, the reply is {"text": "{}"}. Standard library only, shared by every test package.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class AnthropicStub:
    def __init__(self, replies: list[dict[str, Any]] | None = None):
        self.replies = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "AnthropicStub":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            return self.replies.pop(0) if self.replies else {"text": "{}"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                reply = stub._next(body)
                usage = {
                    "input_tokens": reply.get("input_tokens", 100),
                    "output_tokens": reply.get("output_tokens", 20),
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                }
                msg = {
                    "id": "msg_" + uuid.uuid4().hex[:20],
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "stop_sequence": None,
                    "usage": usage,
                }
                if body.get("stream"):
                    self._stream(msg, reply["text"])
                else:
                    self._json(dict(msg, content=[{"type": "text", "text": reply["text"]}], stop_reason="end_turn"))

            def _json(self, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, msg: dict[str, Any], text: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()

                def event(name: str, data: dict[str, Any]) -> None:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(dict(data, type=name))}\n\n".encode())

                start_usage = dict(msg["usage"], output_tokens=1)
                event("message_start", {"message": dict(msg, content=[], stop_reason=None, usage=start_usage)})
                event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
                half = len(text) // 2
                for piece in (text[:half], text[half:]):
                    event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
                event("content_block_stop", {"index": 0})
                event(
                    "message_delta",
                    {
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": msg["usage"]["output_tokens"]},
                    },
                )
                event("message_stop", {})
                self.wfile.flush()
                self.close_connection = True

        return Handler
