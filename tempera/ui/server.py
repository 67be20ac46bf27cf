"""Serving the memory browser: uvicorn on a socket bound here to 127.0.0.1, so no other address ever listens.

The socket is bound before the server starts, which gives the real port (0 = any free one) for the token URL, and
leaves uvicorn no host to choose. The access log is off: it would write the token URL to the terminal.
"""

from __future__ import annotations

import socket
import threading
import time
import webbrowser
from pathlib import Path

import uvicorn

from tempera.core.memory import Memory
from tempera.ui.app import create_app
from tempera.ui.security import LaunchSecrets

LOOPBACK = "127.0.0.1"


def bind_loopback(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(64)
    return sock


class UiServer:
    """One launch: its socket, its secrets, its app and memory handle. `run` blocks; `start` serves from a thread."""

    def __init__(self, port: int = 0, db_path: Path | None = None) -> None:
        self.sock = bind_loopback(port)
        self.launch = LaunchSecrets(port=self.sock.getsockname()[1])
        self.memory = Memory(db_path=db_path)
        config = uvicorn.Config(
            create_app(self.memory, self.launch),
            log_level="warning",
            access_log=False,
            server_header=False,
            date_header=False,
            proxy_headers=False,
            lifespan="off",
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return self.launch.url

    def run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        finally:
            self.sock.close()
            self.memory.close()

    def start(self, timeout: float = 30.0) -> None:
        thread = self._thread = threading.Thread(target=self.run, name="tempera-ui", daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the UI server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)


def serve(port: int = 0, open_browser: bool = True) -> None:
    """`tempera ui`: print the token URL, open it unless told not to, serve until Ctrl-C."""
    import click

    ui = UiServer(port)
    click.echo(
        f"Tempera memory browser: {ui.url}\n(only this machine can reach it; the token in the URL is the key; "
        "Ctrl-C stops it)"
    )
    if open_browser:
        webbrowser.open(ui.url)
    try:
        ui.run()
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then re-raises it: stopping is the normal end here
        click.echo("stopped")
