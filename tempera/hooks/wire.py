"""The wire between a hook process and the daemon: the one home of its transport and framing. Built-in modules only:
relay.py loads this file by its path (it cannot afford to import the package), the CLI's client and the daemon
import it as `tempera.hooks.wire`.

Transport (`daemon.transport`): a unix socket in the data dir (`daemon.sock`, 0600: only its user reaches it), the
default where there are unix sockets; or loopback TCP on a port the system picks, which the daemon writes with two
secrets into `daemon.tcp` (0600, in the 0700 data dir): a token every request must carry, so a client that cannot
read the user's data dir (another user) is refused, and a proof the daemon answers a request's header with, before
the client sends its payload, so that a program that took the port of a daemon killed outright (its file left
behind) gets a dead token and never the prompt. A client looks for `daemon.tcp` first (one small read), so it needs
no setting: the daemon's file says how to reach it.

A request is one line of JSON, the header (`op`; for a hook call its `event` and the `size` of the payload), then,
for a hook call, the payload's raw bytes as Claude Code wrote them: the daemon decodes the payload once, and the
relay never escapes it into a JSON string. A hook call's reply is a status line (`ok`, or the error) and the bytes
the hook prints, up to the close; any other op's reply is one line of JSON.
"""

import _json
import _operator
import _socket

SOCKET_NAME, TCP_NAME = "daemon.sock", "daemon.tcp"  # core/paths.py names them; tests/hooks/test_entry_fuzz.py pins
LOOPBACK = "127.0.0.1"

MAX_REPLY_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024
CHUNK = 65536


def tcp_endpoint(directory: str) -> "tuple[int, str, str] | None":
    """The port, token and proof a TCP daemon of the data dir `directory` wrote, None when there is no such file (a
    unix socket daemon, or none)."""
    try:
        with open(directory + "/" + TCP_NAME, "rb") as fh:
            words = fh.read(4096).decode("ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    return (int(words[0]), words[1], words[2]) if len(words) == 3 and words[0].isdigit() else None


def connect(directory: str, wait: float) -> "tuple[_socket.socket, str, str]":
    """A connection to the daemon of the data dir `directory`, whose reads and writes give up after `wait` seconds,
    the token its requests carry and the proof it answers them with ('' and '' over the unix socket); OSError when
    nobody listens."""
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
    return (s, "", "") if tcp is None else (s, tcp[1], tcp[2])


def hook_header(event: str, size: int, token: str = "") -> bytes:
    """The header line of one hook call: its event argument, the size of the raw stdin that follows (and the
    daemon's token over TCP)."""
    header = '{"op": "hook", "event": ' + _json.encode_basestring_ascii(event) + ', "size": ' + str(size)
    if token:
        header += ', "token": ' + _json.encode_basestring_ascii(token)
    return header.encode("ascii") + b"}\n"


def exchange(s: "_socket.socket", header: bytes, body: bytes, proof: str, limit: int) -> bytes:
    """Send a request (its header line, then its body) and return the reply, up to the close (a chunk past `limit`
    at most). Over TCP (`proof` given) the body goes only once the listener answered the header with the daemon's
    proof; PermissionError when it did not."""
    s.sendall(header)
    rest = b""
    if proof:
        said, _, rest = receive(s, MAX_HEADER_BYTES, line=True).partition(b"\n")
        if not _operator._compare_digest(said, proof.encode("ascii")):
            if said.startswith(b'{"ok": false'):  # the daemon's refusal of the header (a wrong token)
                raise PermissionError(said[:500].decode("utf-8", "replace"))
            raise PermissionError("the listener on the daemon's port is not the daemon (no proof)")
    if body:
        s.sendall(body)
    return rest + receive(s, limit)


def answer_proof(s: "_socket.socket", proof: str) -> None:
    """The daemon's side of `exchange`: once a request's token is checked, say who answers."""
    s.sendall(proof.encode("ascii") + b"\n")


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
