"""The wire between a hook process and the daemon: the one home of its transport and framing. Built-in modules only:
relay.py loads this file by its path (it cannot afford to import the package), the CLI's client and the daemon
import it as `tempera.hooks.wire`.

Transport (`daemon.transport`): a unix socket in the data dir (`daemon.sock`, 0600: only its user reaches it), the
default where there are unix sockets; or loopback TCP on a port the system picks, which the daemon writes with a
secret token into `daemon.tcp` (0600, in the 0700 data dir): a request must carry the token, so a client that
cannot read the user's data dir (another user) is refused. A client looks for `daemon.tcp` first (one small read),
so it needs no setting: the daemon's file says how to reach it.

A request is one line of JSON, the header (`op`; for a hook call its `event` and the `size` of the payload), then,
for a hook call, the payload's raw bytes as Claude Code wrote them: the daemon decodes the payload once, and the
relay never escapes it into a JSON string. A hook call's reply is a status line (`ok`, or the error) and the bytes
the hook prints, up to the close; any other op's reply is one line of JSON.
"""

import _json
import _socket

SOCKET_NAME, TCP_NAME = "daemon.sock", "daemon.tcp"  # core/paths.py names them; tests/hooks/test_entry_fuzz.py pins
LOOPBACK = "127.0.0.1"

MAX_REPLY_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024
CHUNK = 65536


def tcp_endpoint(directory: str) -> "tuple[int, str] | None":
    """The port and token a TCP daemon of the data dir `directory` wrote, None when there is no such file (a unix
    socket daemon, or none)."""
    try:
        with open(directory + "/" + TCP_NAME, "rb") as fh:
            text = fh.read(4096).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    port, _, token = text.strip().partition(" ")
    return (int(port), token) if port.isdigit() and token else None


def connect(directory: str, wait: float) -> "tuple[_socket.socket, str]":
    """A connection to the daemon of the data dir `directory`, whose reads and writes give up after `wait` seconds,
    and the token its requests carry ('' over the unix socket); OSError when nobody listens."""
    tcp = tcp_endpoint(directory)
    if tcp is None:
        if not hasattr(_socket, "AF_UNIX"):  # Windows' Python: only a TCP daemon can be listening
            raise OSError("no daemon.tcp, and no unix sockets here")
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        address: "str | tuple[str, int]" = directory + "/" + SOCKET_NAME
    else:
        s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        address = (LOOPBACK, tcp[0])
    try:
        s.settimeout(wait)
        s.connect(address)
    except BaseException:
        s.close()
        raise
    return s, "" if tcp is None else tcp[1]


def hook_request(event: str, payload: bytes, token: str = "") -> bytes:
    """The request for one hook call: its event argument and the raw stdin (and the daemon's token over TCP)."""
    header = '{"op": "hook", "event": ' + _json.encode_basestring_ascii(event) + ', "size": ' + str(len(payload))
    if token:
        header += ', "token": ' + _json.encode_basestring_ascii(token)
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
