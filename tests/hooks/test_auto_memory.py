"""Claude Code's auto memory as a source, with a real MEMORY.md and topic file in a temp HOME: the real hooks and
daemon inject a topic note that bears on the prompt, with its provenance, and never a note of MEMORY.md's first 200
lines (Claude Code loaded those itself); an edited note is retired; `tempera doctor` says when both are on."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hookrun import ENTRY, context_of, run_hook

from tempera.core import paths
from tempera.transcripts import automemory
from tests.support.cli import tempera
from tests.support.datadir import rows, wait_for

LOADED = "Use pnpm for every install in this repository, never npm or yarn"
PAST_WINDOW = "The invoice exporter writes CSV with semicolons because the accounting tool expects them"
TOPIC = "The flaky checkout test fails when the Stripe webhook fixture is older than the cart session fixture"
FILLER = [f"- Module {n} keeps its own fixtures under tests/fixtures/m{n}" for n in range(200)]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git checkout, and a HOME whose Claude Code auto memory for it holds MEMORY.md and one topic file."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    folder = home / ".claude" / "projects" / automemory.sanitised(str(root.resolve())) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "\n".join(
            [
                "# Project notes",
                f"- {LOADED}",
                *FILLER,
                "## Exports",
                f"- {PAST_WINDOW}",
                "- See [debugging](debugging.md)",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    (folder / "debugging.md").write_text(
        "---\nname: debugging\ndescription: what broke and why\ntype: project\n---\n# Checkout tests\n\n"
        f"{TOPIC}.\nRegenerate both fixtures together.\n\n- {LOADED}\n",
        encoding="utf-8",
    )
    return root


def test_notes_outside_the_loaded_window_are_the_ones_kept(project: Path) -> None:
    directory = automemory.memory_dir(str(project))
    notes = automemory.read_notes(directory)
    by_text = {n.text: n for n in notes if n.file.name == "MEMORY.md"}
    assert by_text[LOADED].loaded and by_text[LOADED].line == 2
    assert not by_text[PAST_WINDOW].loaded and by_text[PAST_WINDOW].section == "Exports"
    topic = next(n for n in notes if n.text.startswith(TOPIC))
    assert topic.text.endswith("Regenerate both fixtures together.") and topic.section == "Checkout tests"
    assert not any("name: debugging" in n.text for n in notes)  # front matter is no note
    kept = {n.text for n in automemory.to_store(notes)}
    assert PAST_WINDOW in kept and topic.text in kept
    assert LOADED not in kept  # loaded by Claude Code, and its repeat in the topic file too
    assert not any(t.startswith("Module 3 ") for t in kept)


def _synced() -> bool:
    """No auto-memory job left to run: the one SessionStart queued is done."""
    return not rows(
        paths.data_dir(), "SELECT COUNT(*) FROM jobs WHERE kind = 'auto-memory' AND status IN ('pending', 'leased')"
    )[0][0]


def _turn(project: Path, session: str, prompt: str) -> str:
    """SessionStart, the daemon's worker syncing the auto memory it queued, then the prompt."""
    base = {"session_id": session, "cwd": str(project), "transcript_path": ""}
    context_of(run_hook("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}))
    wait_for(_synced, timeout=60)
    return context_of(run_hook("user-prompt-submit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}))


def test_hooks_inject_topic_notes_and_never_the_loaded_ones(project: Path, start_daemon: Any) -> None:
    start_daemon()
    context = _turn(project, "s1", "why does the flaky checkout test fail with the stripe webhook fixture?")
    assert TOPIC in context and "Claude Code auto memory, debugging.md" in context
    loaded = _turn(project, "s2", "should I use pnpm or npm or yarn for every install in this repository?")
    assert "pnpm" not in loaded
    folder = automemory.memory_dir(str(project))
    (folder / "debugging.md").write_text(
        "# Checkout tests\n\n- The checkout test is stable since the fixtures were merged.\n", encoding="utf-8"
    )
    after = _turn(project, "s3", "why does the flaky checkout test fail with the stripe webhook fixture?")
    assert TOPIC not in after  # the edited note was retired by the sync SessionStart queued


def test_the_cold_path_never_sees_loaded_notes(project: Path, start_daemon: Any) -> None:
    """Without the daemon the keyword path reads the same table: only the stored notes exist to be found."""
    start_daemon()
    _turn(project, "warm", "what about the invoice exporter")
    tempera("daemon", "stop", check=True, timeout=60)
    base = {"session_id": "cold", "cwd": str(project), "transcript_path": "", "hook_event_name": "UserPromptSubmit"}
    cold = context_of(
        run_hook(
            "user-prompt-submit",
            {**base, "prompt": "invoice exporter CSV semicolons accounting pnpm install repository"},
            command=ENTRY,
        )
    )
    assert "semicolons" in cold and "pnpm" not in cold


def _doctor(project: Path, **env: str) -> dict[str, Any]:
    done = tempera("doctor", "--json", cwd=project, timeout=120, env={**os.environ, **env})
    return next(c for c in json.loads(done.stdout) if c["check"] == "claude code auto memory")


def test_doctor_says_when_auto_memory_is_on(project: Path) -> None:
    alone = _doctor(project)
    assert alone["ok"] and alone["detail"].startswith("on: ")
    # line 2 and the 198 module notes of lines 3-200 are loaded; lines 201-205 and the topic note are not
    assert "holds 205 note(s); Claude Code loads 199 itself" in alone["detail"]
    assert "Tempera reads the other 5 as episodes" in alone["detail"]
    tempera("install", cwd=project, check=True, timeout=120)
    both = _doctor(project)
    assert both["detail"].startswith("on, and so is Tempera: ")
    off = _doctor(project, CLAUDE_CODE_DISABLE_AUTO_MEMORY="1")
    assert off["detail"] == "off for this project"
