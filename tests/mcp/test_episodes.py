"""Episodes through the MCP tools: capture, the three retrieve modes, feedback moving the rank, and which
project a call lands in (explicit argument, client roots, server cwd)."""

from __future__ import annotations

from pathlib import Path

import pytest
from stdio_session import Tempera, connect

from tempera.core.project import project_for_path

QUERY = "flaky checkout test fix"


async def _ranked(client: Tempera) -> list[str]:
    hits = (await client.ok("tempera_retrieve", {"query": QUERY, "limit": 2}))["hits"]
    return [h["id"] for h in hits]


@pytest.mark.anyio
async def test_capture_retrieve_feedback_moves_the_rank(data_dir: Path, project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        for summary in (
            "Flaky checkout test fixed by freezing time with freezegun",
            "Flaky checkout test fixed by seeding the random generator",
        ):
            captured = await client.ok(
                "tempera_capture",
                {"summary": summary, "task_type": "bugfix", "files_modified": ["tests/test_checkout.py"]},
            )
            assert captured["project_id"] == project_for_path(project_dir).id
        before = await _ranked(client)
        assert len(before) == 2
        lower = before[1]

        feedback = await client.ok("tempera_feedback", {"helpful": True, "episodes": [lower[:8]]})
        assert feedback["signal"] == "helpful" and feedback["utility"][lower] > 0.5

        after = await _ranked(client)
        assert after == [lower, before[0]]


@pytest.mark.anyio
async def test_retrieve_lists_shows_details_and_crosses_projects(
    data_dir: Path, project_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "billing"
    other.mkdir()
    async with connect(data_dir, project_dir) as client:
        mine = await client.ok(
            "tempera_capture",
            {
                "summary": "Login redirect loop fixed by validating return URLs",
                "errors_resolved": ["ERR_TOO_MANY_REDIRECTS"],
            },
        )
        await client.ok(
            "tempera_capture",
            {
                "summary": "asyncio.gather swallows cancellation unless return_exceptions is set",
                "validity_scope": "language:python",
                "project": str(other),
            },
        )

        listed = await client.ok("tempera_retrieve", {"all": True})
        assert [e["id"] for e in listed["episodes"]] == [mine["id"]] and listed["total"] == 1
        everywhere = await client.ok("tempera_retrieve", {"all": True, "scope": "cross-project"})
        assert everywhere["total"] == 2

        details = await client.call("tempera_retrieve", {"query": mine["id"][:8]})
        assert details.data and details.data["episode"]["id"] == mine["id"]
        assert "ERR_TOO_MANY_REDIRECTS" in details.text

        query = {"query": "asyncio gather cancellation"}
        assert (await client.ok("tempera_retrieve", query))["hits"] == []
        crossed = await client.ok("tempera_retrieve", query | {"scope": "cross-project"})
        assert [h["scope"] for h in crossed["hits"]] == ["language:python"]


@pytest.mark.anyio
async def test_the_clients_first_root_names_the_project(data_dir: Path, project_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with connect(data_dir, elsewhere, roots=[project_dir / "src", tmp_path]) as client:
        by_root = await client.ok("tempera_capture", {"summary": "Pinned numpy below 2 for the legacy pipeline"})
        named = await client.ok(
            "tempera_capture", {"summary": "Moved the cron jobs to systemd timers", "project": str(elsewhere)}
        )
        status = await client.ok("tempera_status")
    assert by_root["project_id"] == project_for_path(project_dir).id  # the root's git checkout, like the hooks
    assert named["project_id"] == project_for_path(elsewhere).id
    assert status["project"]["path"] == str(project_dir.resolve()) and status["counts"]["episodes"] == 1

    async with connect(data_dir, elsewhere) as client:  # no roots capability: the server's cwd
        status = await client.ok("tempera_status")
    assert status["project"]["id"] == project_for_path(elsewhere).id and status["counts"]["episodes"] == 1
