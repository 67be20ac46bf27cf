"""The series and views behind the pages, on the seeded memory: plots, the timeline, the injection log (its page
too, over HTTP), the fact view's errors."""

from __future__ import annotations

import json
from typing import Any

import httpx
from uiseed import MARKER_FACT, MARKER_SESSION, Seeded

from tempera.core.memory import Memory
from tempera.ui import facts_view, injection_log, plots, timeline


def test_plot_series(memory: Memory, seeded: Seeded) -> None:
    data = plots.all_plots(memory)
    assert data["learning"]["helpfulness"][-1] == 0.5  # one explicit helpful, one explicit unhelpful
    assert data["learning"]["hit_rate"][-1] == 0.5  # of the two injections judged, one was used
    assert {s["label"] for s in data["weekly"]["series"]} == {"webshop", "billing"}
    assert sum(sum(s["data"]) for s in data["weekly"]["series"]) == memory.store.count()
    assert sum(data["utility"]["counts"]) == memory.store.count()
    assert not data["latency"]["recorded"]


def test_latency_is_plotted_once_the_hooks_record_it(memory: Memory, seeded: Seeded) -> None:
    with memory.db.transaction():
        memory.db.execute("UPDATE injections SET scores = json_set(scores, '$.latency_ms', 42.5)")
    latency = plots.hook_latency(memory)
    assert latency["recorded"] and latency["latency_ms"] == [42.5]  # one prompt, however many episodes it injected
    assert "\\u003c" in plots.as_json({"x": "</script>"})


def test_timeline_groups_episodes_by_session(memory: Memory, seeded: Seeded) -> None:
    webshop = memory.store.projects.resolve(str(seeded.webshop)).id
    sessions = timeline.sessions(memory.db, webshop)
    marker = next(s for s in sessions if s["id"] == MARKER_SESSION)
    assert [e["id"] for e in marker["episodes"]] == [seeded.marker_id, seeded.neighbour_id]
    chart = timeline.chart(sessions)
    assert len(chart["labels"]) == len(sessions) and all(end > start for start, end in chart["spans"])
    assert timeline.projects(memory.db)[0]["name"] in ("webshop", "billing")


def test_injection_log_groups_a_prompt(memory: Memory, seeded: Seeded) -> None:
    (prompt,) = injection_log.prompts(memory.db, session_id=MARKER_SESSION)
    assert [i["rank"] for i in prompt["items"]] == [1, 2] and prompt["items"][0]["used"] == 1
    assert json.dumps(prompt["items"][0]["scores"])


def test_the_injection_log_shows_the_facts_a_prompt_was_shown(ui: Any) -> None:
    (prompt,) = injection_log.prompts(ui.memory.db, session_id=MARKER_SESSION)
    assert prompt["facts"] == [MARKER_FACT] and len(prompt["items"]) == 2  # one event: its facts and its episodes
    with httpx.Client(base_url=f"http://127.0.0.1:{ui.launch.port}", timeout=30) as client:
        client.get(f"/?token={ui.launch.token}")
        page = client.get(f"/injections?session={MARKER_SESSION}")
    assert page.status_code == 200 and MARKER_FACT in page.text


def test_fact_view_reports_bad_input_as_text(memory: Memory, seeded: Seeded) -> None:
    assert facts_view.fact_page(memory, "not-an-entity", "", "")["error"]
    assert facts_view.fact_page(memory, ":decision/cache", "", "someday")["error"]
    page = facts_view.fact_page(memory, ":decision/cache", "", "2021-06-01")
    assert page["facts"] == [(":decision/text", '"use redis for the session cache"')]
