"""Headless Chromium for the browser tests: Debian's binary (no download), and a tab that watches what it loads."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Without the background-networking flags Chromium calls Google's hosts at start, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=MediaRouter",
]
ARTIFACTS = Path(__file__).parent / "artifacts"


class Page:
    """A browser tab logged in to the server, which records any request to another origin and any page error."""

    def __init__(self, browser: Any, server: Any) -> None:
        self.base = f"http://127.0.0.1:{server.launch.port}"
        self.context = browser.new_context(viewport={"width": 1360, "height": 900})
        self.tab = self.context.new_page()
        self.tab.set_default_timeout(10_000)
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.tab.on("request", lambda r: None if r.url.startswith(self.base) else self.foreign.append(r.url))
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.goto(server.url)

    def go(self, path: str) -> Any:
        return self.tab.goto(self.base + path)

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        target = ARTIFACTS / f"{name}.png"
        self.tab.screenshot(path=str(target), full_page=True)
        print(f"screenshot: {target}")
        return target
