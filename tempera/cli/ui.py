"""`tempera ui`: the local memory browser."""

from __future__ import annotations

import click


@click.command("ui")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port on 127.0.0.1 (0: any free port)."
)
@click.option("--no-open", is_flag=True, help="Print the URL without opening a browser.")
def ui(port: int, no_open: bool) -> None:
    """Browse, search, explain and control memory in a local web page.

    It listens on 127.0.0.1 only; the URL it prints carries a random token, without which every request is
    refused, and it makes no request to anywhere else.
    """
    from tempera.ui.server import serve

    serve(port=port, open_browser=not no_open)


COMMANDS = [ui]
