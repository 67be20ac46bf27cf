"""The memory browser in headless Chromium (Debian's, through Playwright): search, open an episode, forget it and
find it gone from retrieval and from the database's bytes; every main view rendered (screenshots in
tests/ui/artifacts/); the controls; and a cross-site form that must not be able to forget anything."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from uibrowser import Page
from uiseed import MARKER, MARKER_SUMMARY, Seeded, marker_in_data_dir

from tempera.core import pause as pausing
from tempera.core.retrieve import retrieve


def _search(page: Page, seeded: Seeded, ui: Any, text: str) -> None:
    webshop = ui.memory.store.projects.resolve(str(seeded.webshop)).id
    page.go(f"/search?project={webshop}")
    page.tab.fill("input[name=q]", text)
    page.tab.click("#search-form button[type=submit]")
    page.tab.wait_for_load_state()


def test_search_open_forget_and_it_is_gone(page: Page, ui: Any, seeded: Seeded, data_dir: Path) -> None:
    _search(page, seeded, ui, f"{MARKER} cache stampede")
    hit = page.tab.locator("#hits tr.hit", has_text=MARKER_SUMMARY)
    assert hit.count() == 1
    assert hit.locator("td.n").count() >= 9  # the score parts
    page.shot("search")
    hit.locator("a").first.click()
    assert page.tab.inner_text("#episode-summary") == MARKER_SUMMARY
    assert "(1 + 1.000)" in page.tab.inner_text("#posterior")
    page.shot("episode")
    page.tab.click("#forget-link")
    assert page.tab.locator("#forget-plan").is_visible()
    page.shot("forget-plan")
    page.tab.click("#confirm-forget")
    assert page.tab.inner_text("#forgotten").startswith("Forgot episode")
    assert "vacuumed" in page.tab.inner_text("main")

    _search(page, seeded, ui, f"{MARKER} cache stampede")
    assert MARKER_SUMMARY not in page.tab.inner_text("main")
    mem = ui.memory
    hits = retrieve(
        mem.store,
        f"{MARKER} cache stampede",
        project_id=mem.store.projects.resolve(str(seeded.webshop)).id,
        cfg=mem.config.retrieval,
        limit=20,
        cross_project=True,
    )
    assert seeded.marker_id not in [h.episode.id for h in hits]
    assert marker_in_data_dir(data_dir) == []  # tempera.db, its -wal and -shm, and the reflection page
    assert page.go(f"/episode/{seeded.marker_id}").status == 404
    page.errors.clear()  # the browser logs that 404, which was the point


def test_main_views_render(page: Page, ui: Any, seeded: Seeded) -> None:
    webshop = ui.memory.store.projects.resolve(str(seeded.webshop)).id
    page.go(f"/timeline?project={webshop}")
    assert page.tab.locator("canvas[data-chart=sessions][data-drawn]").count() == 1
    assert page.tab.locator("li.session").count() == 4  # two captured transcripts, the marker's session, s-2
    page.shot("timeline")

    captured = ui.memory.db.one(
        "SELECT id FROM episodes WHERE json_extract(data, '$.source.origin') = 'transcript' "
        "ORDER BY length(data) DESC LIMIT 1"
    )[0]
    page.go(f"/episode/{captured}")
    assert page.tab.locator(".turn").count() >= 2  # the transcript excerpt
    page.shot("episode-from-transcript")

    page.go("/injections")
    prompt = page.tab.locator(".prompt", has_text=MARKER)
    assert prompt.locator("tbody tr").count() == 2 and "used" in prompt.inner_text()
    page.shot("injections")

    page.go("/facts?entity=:decision/cache")
    assert f"coalesce {MARKER} requests in-process" in page.tab.inner_text("#facts")
    assert page.tab.locator("#history tbody tr").count() == 4
    page.go("/facts?entity=:decision/cache&as_of=1&valid_at=any")
    assert "use redis" in page.tab.inner_text("#facts") and MARKER not in page.tab.inner_text("#facts")
    page.shot("facts")

    page.go("/selfimprove")
    assert "wrong_layer" in page.tab.inner_text("#mistakes") and MARKER in page.tab.inner_text("#ask-backs")
    page.shot("selfimprove")
    page.go("/dream")
    assert "A stampede fixed" in page.tab.inner_text("main") and "No patterns yet." in page.tab.inner_text("main")
    page.shot("dream")
    page.go("/plots")
    assert page.tab.locator("canvas[data-drawn]").count() == 3
    assert page.tab.locator("#latency-none").is_visible()  # the hooks record no latency yet
    page.shot("plots")


def test_feedback_scope_pause_and_resume_from_the_page(page: Page, ui: Any, seeded: Seeded, data_dir: Path) -> None:
    page.go(f"/episode/{seeded.neighbour_id}")
    page.tab.click("#mark-helpful")
    assert "(1 + 1.200)" in page.tab.inner_text("#posterior")  # explicit 1.0 on top of the propagated 0.2
    page.tab.fill("input[name=scope]", "language:python")
    page.tab.get_by_role("button", name="Set scope").click()
    assert ui.memory.store.get(seeded.neighbour_id).scope.transferable
    assert page.tab.input_value("input[name=scope]") == "language:python"

    webshop = ui.memory.store.projects.resolve(str(seeded.webshop)).id
    page.go(f"/timeline?project={webshop}")
    page.tab.locator("#projects tr", has_text="webshop").get_by_role("button", name="Pause").click()
    assert "paused since" in page.tab.locator("#projects tr", has_text="webshop").inner_text()
    assert webshop in pausing.paused_projects(data_dir)
    page.tab.locator("#projects tr", has_text="webshop").get_by_role("button", name="Resume").click()
    assert webshop not in pausing.paused_projects(data_dir)


class _EvilPage(BaseHTTPRequestHandler):
    html = b""

    def do_GET(self) -> None:  # noqa: N802 -- the stdlib's handler naming
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def evil_site(ui: Any, seeded: Seeded) -> Iterator[str]:
    """Another origin on the same host (another port: same site, so even a SameSite cookie goes along) whose
    page auto-submits a forget form, holding even the CSRF token: only the Origin check stands in its way."""
    _EvilPage.html = (
        f'<form id="f" method="post" action="http://127.0.0.1:{ui.launch.port}/forget">'
        f'<input name="kind" value="episode"><input name="value" value="{seeded.marker_id}">'
        f'<input name="csrf" value="{ui.launch.csrf}"></form>'
        '<script>document.getElementById("f").submit()</script>'
    ).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EvilPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_cross_site_form_cannot_forget(page: Page, ui: Any, seeded: Seeded, evil_site: str) -> None:
    response_texts: list[tuple[int, str]] = []
    page.tab.on("response", lambda r: response_texts.append((r.status, r.url)) if r.request.method == "POST" else None)
    page.tab.goto(evil_site)
    page.tab.wait_for_url(f"{page.base}/forget")
    assert "cross-site request" in page.tab.inner_text("body")
    assert response_texts == [(403, f"{page.base}/forget")]
    assert ui.memory.db.one("SELECT COUNT(*) FROM episodes WHERE id = ?", (seeded.marker_id,))[0] == 1
    page.tab.wait_for_load_state("networkidle")  # the refused page's late requests (favicon) land before clearing
    page.foreign.clear()  # the evil origin and its refused request were the point of this test
    page.errors.clear()
