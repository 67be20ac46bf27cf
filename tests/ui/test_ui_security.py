"""The guard, over real HTTP against the live server: the token, the cookie, the Host, same-origin state changes,
the headers, and loopback-only listening."""

from __future__ import annotations

import fcntl
import socket
import struct
from pathlib import Path
from typing import Any

import httpx
import pytest
from uiseed import Seeded

SIOCGIFADDR = 0x8915


def _client(ui: Any, *, logged_in: bool) -> httpx.Client:
    client = httpx.Client(base_url=f"http://127.0.0.1:{ui.launch.port}", follow_redirects=False, timeout=30)
    if logged_in:
        assert client.get(f"/?token={ui.launch.token}").status_code == 303
    return client


def _forget_form(ui: Any, seeded: Seeded, csrf: str | None) -> dict[str, str]:
    form = {"kind": "episode", "value": seeded.marker_id}
    return form | ({"csrf": csrf} if csrf is not None else {})


def _still_there(ui: Any, seeded: Seeded) -> bool:
    return ui.memory.db.one("SELECT COUNT(*) FROM episodes WHERE id = ?", (seeded.marker_id,))[0] == 1


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/timeline",
        "/search?q=cache",
        f"/episode/{'0' * 8}",
        "/export",
        "/static/app.js",
        "/static/chart.umd.js",
        "/nowhere",
    ],
)
def test_no_token_is_403(ui: Any, path: str) -> None:
    r = _client(ui, logged_in=False).get(path)
    assert r.status_code == 403
    assert "zanzibarflux" not in r.text


def test_wrong_token_is_403(ui: Any) -> None:
    client = _client(ui, logged_in=False)
    assert client.get("/timeline?token=" + "x" * 43).status_code == 403
    assert client.get("/timeline?token=").status_code == 403
    client.cookies.set(ui.launch.cookie, "x" * 43)
    assert client.get("/timeline").status_code == 403
    client.cookies.set(ui.launch.cookie, ui.launch.token[:-1])
    assert client.get("/timeline").status_code == 403


def test_the_token_becomes_a_strict_cookie_and_leaves_the_url(ui: Any) -> None:
    client = _client(ui, logged_in=False)
    r = client.get(f"/search?q=cache&mode=keyword&token={ui.launch.token}")
    assert r.status_code == 303 and r.headers["location"] == "/search?q=cache&mode=keyword"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = client.get("/timeline")
    assert page.status_code == 200 and "webshop" in page.text


def test_every_answer_forbids_other_sources(ui: Any) -> None:
    client = _client(ui, logged_in=True)
    for path in ("/timeline", "/static/app.js", "/nowhere"):
        headers = client.get(path).headers
        assert headers["content-security-policy"].startswith("default-src 'self'")
        assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    refused = _client(ui, logged_in=False).get("/timeline").headers
    assert refused["content-security-policy"].startswith("default-src 'self'")


def test_a_foreign_host_header_is_refused(ui: Any) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name; the Host header gives it away."""
    client = _client(ui, logged_in=True)
    for host in ("evil.example", f"evil.example:{ui.launch.port}", "127.0.0.1", f"127.0.0.1:{ui.launch.port + 1}"):
        assert client.get("/timeline", headers={"host": host}).status_code == 403
    assert client.get("/timeline", headers={"host": f"localhost:{ui.launch.port}"}).status_code == 200


def test_cross_site_post_is_refused(ui: Any, seeded: Seeded) -> None:
    client = _client(ui, logged_in=True)
    csrf = ui.launch.csrf
    cases = [
        ({"origin": "http://evil.example"}, csrf),  # another site, even holding the cookie and the CSRF token
        ({"origin": f"http://127.0.0.1:{ui.launch.port + 1}"}, csrf),  # same host, another port: another origin
        ({"origin": "null"}, csrf),  # a sandboxed frame or a data: page
        ({"referer": "http://evil.example/page"}, csrf),
        ({}, csrf),  # neither Origin nor Referer
        ({"origin": f"http://127.0.0.1:{ui.launch.port}"}, None),  # our origin, but no CSRF token
        ({"origin": f"http://127.0.0.1:{ui.launch.port}"}, "x" * 43),  # our origin, wrong CSRF token
    ]
    for headers, token in cases:
        r = client.post("/forget", data=_forget_form(ui, seeded, token), headers=headers)
        assert r.status_code == 403, headers
        assert _still_there(ui, seeded)
    r = client.post(
        "/episode/" + seeded.marker_id + "/feedback",
        data={"signal": "unhelpful", "csrf": csrf},
        headers={"origin": "http://evil.example"},
    )
    assert r.status_code == 403


def test_same_origin_post_with_the_token_works(ui: Any, seeded: Seeded) -> None:
    client = _client(ui, logged_in=True)
    r = client.post(
        "/episode/" + seeded.marker_id + "/feedback",
        data={"signal": "unhelpful", "csrf": ui.launch.csrf},
        headers={"referer": f"http://127.0.0.1:{ui.launch.port}/episode/{seeded.marker_id}"},
    )
    assert r.status_code == 303
    assert ui.memory.store.get(seeded.marker_id).utility.unhelpful == 1.0


def _interface_addresses() -> list[tuple[int, str]]:
    """Every address of this machine's interfaces (IPv4 by ioctl, IPv6 from /proc), loopback included."""
    found: list[tuple[int, str]] = []
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _, name in socket.if_nameindex():
        try:
            packed = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name[:15].encode()))
            found.append((socket.AF_INET, socket.inet_ntoa(packed[20:24])))
        except OSError:
            continue
    probe.close()
    inet6 = Path("/proc/net/if_inet6")
    for line in inet6.read_text().splitlines() if inet6.exists() else []:
        raw, scope = line.split()[0], int(line.split()[3], 16)
        if scope == 0:  # global addresses; link-local ones need an interface to connect to
            found.append((socket.AF_INET6, socket.inet_ntop(socket.AF_INET6, bytes.fromhex(raw))))
    return found


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as the kernel shows them) of listening TCP sockets on this port."""
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:
                out.append(addr)
    return out


def test_listens_on_loopback_only(ui: Any) -> None:
    port = ui.launch.port
    assert ui.sock.getsockname() == ("127.0.0.1", port)
    assert _listeners(port) == ["0100007F"]  # 127.0.0.1, and no IPv4 or IPv6 wildcard
    others = [
        (fam, a)
        for fam, a in _interface_addresses() + [(socket.AF_INET, "127.0.0.2"), (socket.AF_INET6, "::1")]
        if a != "127.0.0.1"
    ]
    assert others, "expected at least 127.0.0.2 and ::1 to try"
    for family, address in others:
        with socket.socket(family, socket.SOCK_STREAM) as s, pytest.raises(OSError):
            s.settimeout(2)
            s.connect((address, port))
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
