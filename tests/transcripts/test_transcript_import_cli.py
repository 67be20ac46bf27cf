"""`tempera import` and `tempera capture --session` through the real executable."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from transcript_paths import REAL, TRANSCRIPTS
from tempera.core import pause as pausing
from tempera.core.project import project_for_path
from tests.support.cli import tempera


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    """A Claude Code config dir holding two projects' sessions (one with its subagent folder)."""
    root = tmp_path / "claude-config"
    spotter = root / "projects" / "-home-marco-projects-spotter"
    spotter.mkdir(parents=True)
    for name in ("short.jsonl", "tool_heavy.jsonl"):
        shutil.copy(TRANSCRIPTS / "spotter" / name, spotter / name)
    shutil.copytree(REAL.parent, root / "projects" / "-tmp-ccrun-proj")
    return root


def test_default_folder_table_then_idempotent_json(claude_dir: Path) -> None:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(claude_dir)}
    first = tempera("import", "--no-embed", env=env)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert sum(".jsonl:" in ln for ln in lines) == 3  # plain progress lines off a terminal, one per session
    table = {ln[:22].strip(): ln[22:].strip() for ln in lines if not ln.startswith(("/", "-", " "))}
    assert (table["sessions"], table["prompts"], table["work units"], table["episodes created"]) == ("3", "6", "6", "6")
    assert float(table["megabytes"]) > 0 and "records skipped, by reason" in lines
    second = tempera("import", "--no-embed", "--json", env=env)
    totals = json.loads(second.stdout)
    assert (totals["episodes_added"], totals["episodes_updated"], totals["episodes_skipped"]) == (0, 0, 6)


def test_dry_run_and_since_store_nothing(claude_dir: Path) -> None:
    folder = str(claude_dir / "projects")
    dry = json.loads(tempera("import", folder, "--dry-run", "--json", "--no-embed").stdout)
    assert dry["dry_run"] and dry["episodes_added"] == 6
    later = json.loads(tempera("import", folder, "--since", "2099-01-01", "--json", "--no-embed").stdout)
    assert (later["files"], later["files_skipped_since"]) == (0, 3)
    real = json.loads(tempera("import", folder, "--since", "2025-01-01", "--json", "--no-embed").stdout)
    assert real["episodes_added"] == 6  # nothing was stored by the runs above


def test_capture_session_with_embeddings(claude_dir: Path) -> None:
    session = claude_dir / "projects" / "-tmp-ccrun-proj" / REAL.name
    r = tempera("capture", "--session", str(session), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["turns"], out["added"], out["project"]) == (3, 3, "proj")
    hits = tempera("retrieve", "add function subtracts instead of adding", "--project", "proj", "--json")
    assert json.loads(hits.stdout)[0]["id"] == out["episodes"][0]["id"]
    again = json.loads(tempera("capture", "--session", str(session), "--json").stdout)
    assert (again["added"], again["skipped"]) == (0, 3)


def test_bad_paths_and_dates_are_one_line_errors(tmp_path: Path) -> None:
    for args in (
        ("import", str(tmp_path / "nope")),
        ("import", str(tmp_path), "--since", "yesterday"),
        ("capture", "--session", str(tmp_path / "nope.jsonl")),
    ):
        r = tempera(*args)
        assert r.returncode == 1 and r.stderr.startswith("Error:") and "Traceback" not in r.stderr, r.stderr


def test_help_names_the_default_folder() -> None:
    out = tempera("import", "--help").stdout
    assert "CLAUDE_CONFIG_DIR" in out and "--since" in out and "--dry-run" in out


def test_a_paused_project_is_neither_imported_nor_captured(claude_dir: Path) -> None:
    """A paused project means "store nothing from here": import (dry run too) and `capture --session` skip its
    sessions and say so, and the other projects' sessions are still captured."""
    spotter = project_for_path("/home/marco/projects/spotter")  # the working directory of both spotter sessions
    pausing.pause(spotter.id, spotter.name, spotter.path)
    folder = str(claude_dir / "projects")
    dry = json.loads(tempera("import", folder, "--dry-run", "--json", "--no-embed").stdout)
    assert (dry["files_paused"], dry["episodes_added"]) == (2, 3)
    real = json.loads(tempera("import", folder, "--json", "--no-embed").stdout)
    assert (real["files_paused"], real["episodes_added"]) == (2, 3)  # the 3 turns of the unpaused project
    one = tempera("capture", "--session", str(claude_dir / "projects" / "-home-marco-projects-spotter" / "short.jsonl"))
    assert one.returncode == 0, one.stderr
    assert "capture is paused for this project, nothing stored" in one.stdout
    pausing.resume(spotter.id)
    again = json.loads(tempera("import", folder, "--json", "--no-embed").stdout)
    assert (again["files_paused"], again["episodes_added"]) == (0, 3)  # resumed: spotter's turns come in now


def test_import_names_projects_not_on_this_machine_and_the_merge_it_prints_moves_them_to_a_fresh_clone(
    tmp_path: Path,
) -> None:
    """Sessions recorded in two checkouts of one repository on other machines (their paths are not here) become
    projects no hook here would see: the import says so and prints the one command that moves them; run as printed,
    with a fresh clone that holds no memory yet as the target, the clone's directory then finds both."""
    import re
    import subprocess

    from transcript_writer import SessionWriter

    for i, (where, work) in enumerate(
        [
            ("/nonexistent/alice/cli", "the checkpoint rewind command"),
            ("/nonexistent/bob-laptop/cli", "the shadow branch pruning"),
        ]
    ):
        s = SessionWriter(
            tmp_path / "t" / f"s{i}.jsonl", session_id=f"0b7c3a52-5d1e-4a57-9b61-3f0d1c2e4a1{i}", cwd=where
        )
        s.prompt(f"fix {work} so the integration test passes")
        s.say(f"Fixed {work}: the integration test passes now.")
    out = tempera("import", str(tmp_path / "t"), "--no-embed")
    assert out.returncode == 0, out.stderr
    assert "projects stored into" in out.stdout and out.stdout.count("path not on this machine") == 2, out.stdout
    [command] = re.findall(r"run: (tempera projects merge [0-9a-f ]+) <your checkout>", out.stdout)
    clone = tmp_path / "src" / "cli"
    clone.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    dry = tempera(*command.split()[1:], str(clone), "--dry-run")
    assert dry.returncode == 0 and "Would merge" in dry.stdout, dry.stderr
    merged = tempera(*command.split()[1:], str(clone))
    assert merged.returncode == 0 and merged.stdout.count("Merged") == 2, merged.stderr
    found = tempera("retrieve", "integration test passes", "--json", "--mode", "keyword", "--limit", "5", cwd=clone)
    assert len(json.loads(found.stdout)) == 2, found.stdout
