"""The control commands end to end: forget (dry run, confirmation, --yes), export, pause/resume, scope, and
`tempera ui` itself started as a user would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from typing import Any

import httpx
import pytest
from uiseed import MARKER, MARKER_SESSION, Seeded

from tempera.cli.control import COMMANDS
from tempera.cli.ui import COMMANDS as UI_COMMANDS
from tempera.core.memory import Memory
from tests.support.cli import TEMPERA, command_path, tempera


def invoke(*args: str, input: str | None = None, code: int = 0) -> Any:
    result = tempera(*args, input=input)
    assert result.returncode == code, result.stderr
    return result


@pytest.mark.parametrize("command", COMMANDS + UI_COMMANDS, ids=lambda c: c.name)
def test_every_command_has_help(command: Any) -> None:
    assert command.help and len(command.help.split()) >= 6
    assert "Usage:" in invoke(*command_path(command), "--help").stdout


def test_forget_counts_first_asks_then_forgets(memory: Memory, seeded: Seeded) -> None:
    prefix = seeded.marker_id[:8]
    dry = json.loads(invoke("forget", "episode", prefix, "--dry-run", "--json").stdout)
    assert not dry["executed"] and dry["counts"]["episodes"] == 1
    declined = invoke("forget", "episode", prefix, input="n\n", code=1)
    assert "Would forget episode" in declined.stdout and "Aborted" in declined.stderr
    assert memory.store.count() == 9
    done = json.loads(invoke("forget", "episode", prefix, "--yes", "--json").stdout)
    assert done["executed"] and done["wiped"] and done["counts"] == dry["counts"]
    assert memory.store.count() == 8
    again = invoke("forget", "episode", prefix, "--yes", code=1)
    assert "no episode" in again.stderr


def test_forget_a_session_and_a_period(memory: Memory, seeded: Seeded) -> None:
    assert "2 episodes" not in invoke("forget", "session", MARKER_SESSION, "--dry-run").stdout
    assert "Forgot session" in invoke("forget", "session", MARKER_SESSION, "--yes").stdout
    nothing = invoke("forget", "before", "2000-01-01", "--project", str(seeded.billing), "--yes")
    assert "Nothing to forget" in nothing.stdout
    invoke("forget", "before", "2100-01-01", "--project", str(seeded.billing), "--yes")
    assert memory.store.count(memory.store.projects.resolve(str(seeded.billing)).id) == 0
    assert memory.store.count() == 5  # webshop's transcripts and s-2 remain


def test_export_jsonl_and_markdown(memory: Memory, seeded: Seeded, tmp_path: Any) -> None:
    out = tmp_path / "memory.jsonl"
    invoke("memory", "export", "--output", str(out))
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    episodes = [r for r in records if r["type"] == "episode"]
    facts = [r for r in records if r["type"] == "fact"]
    assert len(episodes) == 9 and {e["id"] for e in episodes} >= {seeded.marker_id, seeded.neighbour_id}
    assert episodes[0]["utility"]["value"] and episodes[0]["scope"] == "project"
    assert {f["op"] for f in facts} == {"assert", "retract"} and any(MARKER in f["value"] for f in facts)
    markdown = invoke("memory", "export", "--format", "markdown", "--project", str(seeded.billing)).stdout
    assert markdown.startswith("# Tempera memory export") and "## Project billing" in markdown
    assert "webshop" not in markdown and "## Facts" not in markdown


def test_pause_list_resume_and_scope(memory: Memory, seeded: Seeded) -> None:
    paused = json.loads(invoke("pause", str(seeded.webshop), "--json").stdout)
    listed = json.loads(invoke("pause", "--list", "--json").stdout)
    assert [p["id"] for p in listed] == [paused["id"]] and listed[0]["name"] == "webshop"
    resumed = json.loads(invoke("resume", str(seeded.webshop), "--json").stdout)
    assert resumed["was_paused"] and "not paused" in invoke("resume", str(seeded.webshop)).stdout
    scoped = json.loads(invoke("memory", "scope", seeded.marker_id[:8], "crate:tokio@1.38", "--json").stdout)
    assert scoped == {"id": seeded.marker_id, "scope": "crate:tokio@1.38", "transferable": True}
    assert str(memory.store.get(seeded.marker_id).scope) == "crate:tokio@1.38"
    assert "bad validity scope" in invoke("memory", "scope", seeded.marker_id[:8], "galaxy:far", code=1).stderr


def test_pause_and_resume_refuse_a_name_no_project_has(memory: Memory, seeded: Seeded, tmp_path: Any) -> None:
    """A typo of a privacy control is an error, not a pause of nothing (the real project would go on being
    captured); a directory paused before anything of it was captured resumes by its name."""
    refused = invoke("pause", "webshopp", code=1)
    assert "unknown project 'webshopp'" in refused.stderr
    assert json.loads(invoke("pause", "--list", "--json").stdout) == []
    assert "unknown project 'webshopp'" in invoke("resume", "webshopp", code=1).stderr
    fresh = tmp_path / "not-yet-captured"
    fresh.mkdir()
    invoke("pause", str(fresh))
    assert json.loads(invoke("resume", "not-yet-captured", "--json").stdout)["was_paused"]


def test_tempera_ui_serves_on_loopback_with_a_token_until_interrupted(memory: Memory, seeded: Seeded) -> None:
    proc = subprocess.Popen(
        [*TEMPERA, "ui", "--no-open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.split(": ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url
        with httpx.Client(follow_redirects=True, timeout=30) as client:
            assert client.get(url.split("?")[0] + "timeline").status_code == 403
            page = client.get(url)
            assert page.status_code == 200 and "webshop" in page.text
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert url.split("token=")[1] not in err  # no access log carrying the token
