"""The fact-graph tools (transact, query with history, retract, audit, git ingestion) and the upkeep tools
(status, stats, trends, propagate, review, template) on a real server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from stdio_session import STEP_SECONDS, connect


def _git_repo(root: Path) -> None:
    """A one-commit repository with a Python module that imports another."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "db.py").write_text("def connect():\n    return 1\n", encoding="utf-8")
    (root / "pkg" / "api.py").write_text(
        "from pkg.db import connect\n\n\ndef handler():\n    return connect()\n", encoding="utf-8"
    )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    for command in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", *command], cwd=root, env=env, check=True, timeout=30)


async def _exited(pid: int) -> None:
    """Wait for a process that is not our child: a pidfd turns readable when it exits."""
    fd = os.pidfd_open(pid)
    try:
        with anyio.fail_after(STEP_SECONDS):
            await anyio.wait_readable(fd)
    finally:
        os.close(fd)


@pytest.mark.anyio
async def test_facts_keep_their_history(data_dir: Path, project_dir: Path) -> None:
    decision = '[[:decision/auth-order :description "auth runs before request logging"]]'
    async with connect(data_dir, project_dir) as client:
        added = await client.ok("tempera_transact", {"facts": decision, "reason": "agreed with the user"})
        again = await client.ok("tempera_transact", {"facts": decision, "reason": "said twice"})
        query = {"query": "[:find ?d :where [:decision/auth-order :description ?d]]"}
        now = await client.call("tempera_query", query)
        gone = await client.ok("tempera_retract", {"facts": decision, "reason": "the order was reversed"})
        after = await client.ok("tempera_query", query)
        then = await client.ok(
            "tempera_query",
            {
                "query": f"[:find ?d :as-of {added['tx']} :in ?e :where [?e :description ?d]]",
                "params": {"e": ":decision/auth-order"},
            },
        )
        await client.ok(
            "tempera_transact",
            {"facts": '[[:decision/vague :rationale "no description"]]', "reason": "an invalid entity"},
        )
        report = await client.ok("tempera_audit")
        fixed = await client.ok("tempera_audit", {"fix": True})
    assert added["added"] == 1 and again["tx"] is None
    assert now.data == {"columns": ["?d"], "rows": [["auth runs before request logging"]]}
    assert '"auth runs before request logging"' in now.text
    assert gone["retracted"] == 1 and after["rows"] == []
    assert then["rows"] == [["auth runs before request logging"]]
    assert [v["kind"] for v in report["violations"]] == ["missing-required"] and report["tx"] is None
    assert fixed["retracted"] == 1


@pytest.mark.anyio
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux) to wait for the ingestion")
async def test_git_ingestion_runs_in_the_background(data_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "service"
    _git_repo(repo)
    async with connect(data_dir, repo) as client:
        started = await client.ok("tempera_ingest_git")
        await _exited(started["pid"])
        status = await client.call("tempera_ingest_status")
        deps = await client.ok("tempera_query", {"query": "[:find ?to :where [:module/pkg.api :depends-on ?to]]"})
    assert started["repository"] == str(repo.resolve())
    assert status.data and status.data["state"] == "done" and status.data["commits"] == 1
    assert status.text.startswith("Done: 1 commit(s)")
    assert deps["rows"] == [[":module/pkg.db"]]


@pytest.mark.anyio
async def test_upkeep_tools_answer_for_the_project(data_dir: Path, project_dir: Path) -> None:
    async with connect(data_dir, project_dir) as client:
        for summary in (
            "Fixed the login redirect by validating return URLs against the allow-list",
            "Fixed the login redirect by validating the return URL against an allow-list",
        ):
            ep = await client.ok("tempera_capture", {"summary": summary, "task_type": "bugfix"})
        await client.ok("tempera_feedback", {"helpful": True, "episodes": [ep["id"]]})
        status = await client.ok("tempera_status")
        stats = await client.ok("tempera_stats")
        trends = await client.ok("tempera_stats", {"kind": "trends", "bucket": "monthly"})
        propagated = await client.call("tempera_propagate", {"temporal": True})
        analysis = await client.ok("tempera_review")
        merged = await client.ok("tempera_review", {"action": "consolidate", "dry_run": False})
        template = await client.call("tempera_template", {"task_type": "bugfix", "domain": "auth"})
        listed = await client.ok("tempera_retrieve", {"all": True})
    assert status["counts"]["episodes"] == 2 and status["vectors"]["state"] == "ok"
    assert stats["episodes"] == 2 and stats["by_task_type"] == {"bugfix": 2} and stats["feedback"]["helpful"] >= 1
    assert sum(p["episodes"] for p in trends["periods"]) == 2
    assert not propagated.is_error and propagated.data and propagated.data["temporal_rows"] is not None
    assert len(analysis["consolidation"]["merges"]) == 1 and analysis["dry_run"] is True
    assert merged["consolidation"]["merges"] == analysis["consolidation"]["merges"] and merged["dry_run"] is False
    assert listed["total"] == 2 and len(listed["episodes"]) == 2  # the absorbed episode stays stored
    assert not template.is_error and template.data == {"template": None}
    assert "No template for bugfix/auth" in template.text
