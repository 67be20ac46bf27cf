"""Fixtures of the memory browser's tests: a seeded memory, a live server on loopback, and headless Chromium.

Chromium is Debian's (/usr/bin/chromium), driven by Playwright with `executable_path`: nothing is downloaded.
Screenshots land in tests/ui/artifacts/ (ignored by git; see uibrowser.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from uibrowser import CHROMIUM, CHROMIUM_ARGS, Page
from uiseed import Seeded, seed

from tempera.core import paths
from tempera.core.memory import Memory


@pytest.fixture
def seeded(memory: Memory, tmp_path: Path) -> Seeded:
    return seed(memory, tmp_path / "work")


@pytest.fixture
def ui(seeded: Seeded, data_dir: Path) -> Iterator[Any]:
    from tempera.ui.server import UiServer

    server = UiServer(0, db_path=data_dir / paths.DB_NAME)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per module of browser tests. Not session scope: playwright's sync API keeps an event loop
    running in the main thread while it is open, and every anyio test collected after tests/ui would fail on it."""
    if not Path(CHROMIUM).exists():
        pytest.fail("the browser tests need Debian's chromium: apt-get install -y chromium chromium-driver")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any, ui: Any) -> Iterator[Page]:
    tab = Page(browser, ui)
    yield tab
    tab.context.close()
    assert tab.foreign == [], "the page requested another origin"
    assert tab.errors == [], "the page logged errors"
