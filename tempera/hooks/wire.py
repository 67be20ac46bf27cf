"""The wire between a hook process and the daemon, over the daemon's unix socket: the one home of its framing.
Built-in modules only: relay.py loads this file by its path (it cannot afford to import the package), the CLI's
client and the daemon import it as `tempera.hooks.wire`.

A request is one line of JSON, the header (`op`; for a hook call its `event` and the `size` of the payload), then,
for a hook call, the payload's raw bytes as Claude Code wrote them: the daemon decodes the payload once, and the
relay never escapes it into a JSON string. A hook call's reply is a status line (`ok`, or the error) and the bytes
the hook prints, up to the close; any other op's reply is one line of JSON.
"""

import _json
import _socket

MAX_REPLY_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024
CHUNK = 65536


def connect(path: "str | bytes", wait: float) -> "_socket.socket":
    """A connection to the socket at `path` whose reads and writes give up after `wait` seconds (OSError when
    nobody listens)."""
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(wait)
        s.connect(path)
    except BaseException:
        s.close()
        raise
    return s


def hook_request(event: str, payload: bytes) -> bytes:
    """The request for one hook call: its event argument and the raw stdin."""
    header = '{"op": "hook", "event": ' + _json.encode_basestring_ascii(event) + ', "size": ' + str(len(payload))
    return header.encode("ascii") + b"}\n" + payload


def receive(s: "_socket.socket", limit: int, *, line: bool = False) -> bytes:
    """What the peer sends until it closes (or, with `line`, until a newline has come), a chunk past `limit` at
    most: the caller sees it is too long."""
    chunks = []
    size = 0
    while size <= limit:
        chunk = s.recv(CHUNK)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if line and b"\n" in chunk:
            break
    return b"".join(chunks)


def receive_body(s: "_socket.socket", have: bytes, size: int) -> bytes:
    """The `size` bytes of a request's body, `have` of them read with its header; ValueError when the peer closes
    before all came."""
    chunks = [have]
    got = len(have)
    while got < size:
        chunk = s.recv(min(CHUNK, size - got))
        if not chunk:
            raise ValueError(f"the request ended after {got} of its {size} payload bytes")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)[:size]


def hook_reply(reply: bytes) -> "tuple[bytes | None, str]":
    """The bytes the hook prints from a hook call's reply, or None and why the daemon gave none."""
    status, _, out = reply.partition(b"\n")
    if status == b"ok":
        return out, ""
    if not reply:
        return None, "the daemon closed the connection without an answer"
    return None, "the daemon answered an error: " + status[:500].decode("utf-8", "replace")
