"""The symbol index and the code signal (core/symbols.py) on real Go code and a real session's edits: the index finds
the files defining a name and follows the work tree (a changed file parsed again, a deleted one dropped), a
capture records the definitions an Edit touched, and a prompt naming one brings the episode that touched it.

The code is `telemetry.go` and `telemetry_test.go` of entireio/cli as Claude Code's Edit results carried them
(`originalFile`) in the session `tests/transcripts/data/entire-cli/4e836284-….jsonl` (origin and licence in that
folder's README)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

from tempera.core import symbols
from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, Intent
from tempera.core.retrieve import retrieve
from tempera.transcripts.capture import capture_transcript
from tempera.transcripts.pipeline import capture_and_learn

SESSION = next((REPO / "tests" / "transcripts" / "data" / "entire-cli").glob("4e836284-*.jsonl"))
TELEMETRY = "cmd/entire/cli/telemetry/telemetry.go"
TELEMETRY_TEST = "cmd/entire/cli/telemetry/telemetry_test.go"


def original_files() -> dict[str, str]:
    """Each file's text before the session's first edit of it, repo-relative."""
    out: dict[str, str] = {}
    for line in SESSION.read_text().splitlines():
        result = json.loads(line).get("toolUseResult")
        if isinstance(result, dict) and result.get("originalFile"):
            rel = result["filePath"].split("/wks/cli/", 1)[1]
            out.setdefault(rel, result["originalFile"])
    return out


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def checkout(tmp_path: Path) -> Path:
    """A git repository holding the two files, committed."""
    repo = tmp_path / "cli"
    for rel, text in original_files().items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "telemetry")
    return repo


def test_the_index_finds_the_files_defining_a_name_and_those_named(memory: Memory, tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    assert symbols.refresh(memory.db, "p1", str(repo)) == (2, 0)
    found = symbols.defining_files(memory.db, "p1", ["TrackCommand", "trackcommand", "telemetry_test", "nope"])
    assert found == {"trackcommand": {TELEMETRY}, "telemetry_test": {TELEMETRY_TEST}}
    assert symbols.defining_files(memory.db, "p2", ["TrackCommand"]) == {}  # per project
    assert symbols.refresh(memory.db, "p1", str(repo)) == (0, 0)  # nothing moved: nothing read again


def test_a_changed_file_is_parsed_again_and_a_deleted_one_dropped(memory: Memory, tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    symbols.refresh(memory.db, "p1", str(repo))
    path = repo / TELEMETRY
    path.write_text(path.read_text().replace("TrackCommand", "TrackInvocation"))
    assert symbols.refresh(memory.db, "p1", str(repo)) == (1, 0)
    found = symbols.defining_files(memory.db, "p1", ["TrackCommand", "TrackInvocation"])
    assert found == {"trackinvocation": {TELEMETRY}}
    assert memory.db.query("SELECT file FROM code_changed WHERE project_id = 'p1'") == [(TELEMETRY,)]
    (repo / TELEMETRY_TEST).unlink()
    assert symbols.refresh(memory.db, "p1", str(repo)) == (0, 1)
    assert symbols.defining_files(memory.db, "p1", ["telemetry_test.go", "TestCommandStringReturnsFullCommand"]) == {}


def test_a_captured_edit_records_the_definitions_it_touched(memory: Memory, tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / "-Users-dev-cli" / SESSION.name
    transcript.parent.mkdir(parents=True)
    shutil.copy(SESSION, transcript)
    capture_transcript(memory, transcript)
    touched = {
        ep.intent.extracted[:30]: ep.context.symbols_modified
        for ep in memory.store.iter_episodes(None)
        if ep.context.symbols_modified
    }
    # the edit of TrackCommand's body; then a new CommandString, TrackCommand calling it, and its test
    assert sorted(touched.values()) == [
        ["CommandString", "TrackCommand", "TestCommandStringReturnsFullCommand"],
        ["TrackCommand"],
        ["TrackCommand"],
    ]
    rows = memory.db.query("SELECT name, COUNT(*) FROM episode_symbols GROUP BY name ORDER BY name")
    assert rows == [("commandstring", 1), ("testcommandstringreturnsfullcommand", 1), ("trackcommand", 3)]


def test_a_capture_in_a_checkout_here_brings_its_index_up_to_date(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session, as if it ran in a checkout on this machine (its paths rewritten to it): the steps after the
    capture index the checkout, under the project the episodes are stored in, once retrieval reads the index."""
    monkeypatch.setenv("TEMPERA_RETRIEVAL__HYBRID_CODE_WEIGHT", "2")
    repo = checkout(tmp_path)
    transcript = tmp_path / "projects" / "-cli" / SESSION.name
    transcript.parent.mkdir(parents=True)
    transcript.write_text(SESSION.read_text().replace("/Users/gtrrz-victor/wks/cli", str(repo)))
    result = capture_and_learn(memory, transcript)
    project_id = result.added[0].project_id
    assert symbols.defining_files(memory.db, project_id, ["TrackCommand"]) == {"trackcommand": {TELEMETRY}}


def test_a_prompt_naming_a_symbol_ranks_the_episode_that_touched_it_first(memory: Memory, tmp_path: Path) -> None:
    pid = "p1"
    symbols.refresh(memory.db, pid, str(checkout(tmp_path)))
    touched = Episode(
        project_id=pid,
        project_name="cli",
        summary="Tracking sends the flags of the command to posthog",
        intent=Intent(raw_prompt="send the flags and arguments of the command too"),
        context=Context(files_modified=[TELEMETRY], symbols_modified=["TrackCommand"]),
    )
    other = Episode(
        project_id=pid,
        project_name="cli",
        summary="The root command drops unknown flags when tracking is off",
        intent=Intent(raw_prompt="why does the root command drop the flags"),
        context=Context(files_modified=["cmd/entire/cli/root.go"]),
    )
    memory.store.add_many([touched, other])
    prompt = "why does TrackCommand drop the flags when tracking the command?"

    def order(weight: float) -> list[str]:
        cfg = memory.config.retrieval.model_copy(update={"hybrid_code_weight": weight})
        hits = retrieve(memory.store, prompt, project_id=pid, cfg=cfg, limit=5, mode="hybrid")
        return [h.episode.id for h in hits]

    assert order(0.0)[0] == other.id  # by words alone, the other one
    assert order(2.0)[0] == touched.id
