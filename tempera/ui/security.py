"""The browser's guard: loopback Host only, a per-launch token, same-origin state changes, and strict headers.

Memory holds code, prompts and errors, and a local web server is reachable by every page the user's browser
opens. So: a request must name our exact loopback host and port (a DNS-rebinding page names its own host); it must
carry the launch token, in the URL once (then swapped for an HttpOnly, SameSite=Strict cookie and dropped from the
URL) or in that cookie; a state change must come from our own origin (Origin, else Referer) and carry the
per-launch CSRF token of our forms; and every answer forbids any source but ourselves (CSP), framing and caching.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_PARAM = "token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


@dataclass(frozen=True)
class LaunchSecrets:
    """What one launch of `tempera ui` trusts: its port, its access token and its CSRF token."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @property
    def cookie(self) -> str:
        return f"tempera_ui_{self.port}"  # cookies ignore ports: two launches must not overwrite each other's

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{h}" for h in self.hosts)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?{TOKEN_PARAM}={self.token}"


def same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def _refused(reason: str) -> PlainTextResponse:
    return PlainTextResponse(f"403 Forbidden: {reason}\n", status_code=403)


class Guard:
    """ASGI middleware in front of every route, static files included."""

    def __init__(self, app: ASGIApp, launch: LaunchSecrets) -> None:
        self.app = app
        self.launch = launch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = self._check(scope)
        if response is not None:
            await response(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    def _check(self, scope: Scope) -> Any:
        """None to let the request through, else the response that answers it (a refusal or the token swap)."""
        headers = Headers(scope=scope)
        if headers.get("host") not in self.launch.hosts:
            return _refused("unexpected Host")
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        by_cookie = same(cookie_parser(headers.get("cookie", "")).get(self.launch.cookie), self.launch.token)
        if TOKEN_PARAM in query:
            if not same(query[TOKEN_PARAM], self.launch.token):
                return _refused("wrong token")
            if scope["method"] in SAFE_METHODS:
                return self._swap_token(scope, query)
        elif not by_cookie:
            return _refused("open the URL `tempera ui` printed (it carries the token)")
        if scope["method"] not in SAFE_METHODS and not self._same_origin(headers):
            return _refused("cross-site request")
        return None

    def _swap_token(self, scope: Scope, query: dict[str, str]) -> RedirectResponse:
        """Set the token as a cookie and redirect to the same URL without it, so it leaves the address bar."""
        rest = urlencode({k: v for k, v in query.items() if k != TOKEN_PARAM})
        response = RedirectResponse(scope["path"] + (f"?{rest}" if rest else ""), status_code=303)
        response.set_cookie(self.launch.cookie, self.launch.token, httponly=True, samesite="strict", path="/")
        return response

    def _same_origin(self, headers: Headers) -> bool:
        origin = headers.get("origin")
        if origin is not None:
            return origin in self.launch.origins
        referer = headers.get("referer", "")
        return any(referer.startswith(o + "/") for o in self.launch.origins)

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in HEADERS if h[0] not in names]
            await send(message)

        return sender
