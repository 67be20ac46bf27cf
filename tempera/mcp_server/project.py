"""The directory a tool call is about when it names no project: the client's first root, else the server's cwd.

Claude Code starts the server in the project directory, so the cwd gives the same project id as the hooks
(`tempera.core.project.project_for_path`). A client that declares the roots capability says where it works
explicitly; its first `file://` root wins. Roots are only a hint: a client that fails to answer, answers late
or lists no local directory leaves the cwd in charge.
"""

from __future__ import annotations

import logging
import os
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver import Context

log = logging.getLogger("tempera.mcp")
ROOTS_TIMEOUT_SECONDS = 3.0


def file_root_path(uri: str) -> str | None:
    """The local path of a `file://` URI; None for any other scheme."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


async def client_workdir(ctx: Context) -> str:
    session = ctx.request_context.session
    capabilities = session.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return os.getcwd()
    listed = None
    with anyio.move_on_after(ROOTS_TIMEOUT_SECONDS):
        try:
            listed = await session.list_roots()
        except Exception as exc:  # a refused or malformed answer: the cwd still names a project
            log.info("roots/list failed (%s); using the working directory", exc)
    for root in listed.roots if listed else []:
        path = file_root_path(str(root.uri))
        if path:
            return path
    return os.getcwd()
