"""The search page over real HTTP against the live server ranks as `tempera retrieve` does, the names list
included: a query naming a file finds the episode that changed it, and the page shows that list's rank."""

from __future__ import annotations

import re
from typing import Any

import httpx
from uiseed import Seeded

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory

QUERY = "what did we change in src/orders/totals_calc.py"


def test_a_query_naming_a_file_finds_the_episode_that_changed_it(memory: Memory, seeded: Seeded, ui: Any) -> None:
    web = str(seeded.webshop)
    changed = memory.capture(
        CaptureInput(
            summary="Rounded the order totals half-even so invoices match the ledger",
            task_type="bugfix",
            project=web,
            files_modified=["src/orders/totals_calc.py"],
        )
    )
    for i in range(6):  # they share the query's generic words ("change", "orders"), not its file
        memory.capture(
            CaptureInput(
                summary=f"Changed what the orders page shows in checkout step {i}",
                task_type="feature",
                project=web,
                files_modified=[f"src/pages/orders_{i}.tsx"],
            )
        )
    project = memory.store.projects.resolve(web).id
    with httpx.Client(base_url=f"http://127.0.0.1:{ui.launch.port}", timeout=60) as client:
        assert client.get(f"/?token={ui.launch.token}").status_code == 303  # the token becomes a cookie
        page = client.get("/search", params={"q": QUERY, "project": project, "scope": "project"}).text

    rows = re.findall(r'<tr class="hit">(.*?)</tr>', page, re.S)
    shown = [re.search(r'href="/episode/([^"]+)"', r).group(1) for r in rows]  # type: ignore[union-attr]
    cli = [h.episode.id for h in memory.retrieve(QUERY, project=web, limit=len(shown))]
    assert shown[0] == changed.id and shown == cli  # one ranking: the page's is the CLI's
    assert "ranks kw/vec/names" in page
    assert re.search(r"<td class=\"n\">1/[^<]*/1</td>", rows[0])  # first by keyword and by the names list
