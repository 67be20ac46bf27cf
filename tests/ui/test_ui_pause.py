"""Pausing capture: the real hook entry injects and enqueues nothing for a paused project, the daemon's capture job
skips it, and resuming does not capture what happened while paused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tempera.core import pause as pausing
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.project import project_for_path
from tempera.daemon.worker import handle_capture
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.resume import resume_project
from tempera.transcripts.turns import segment_turns
from tests.conftest import TRANSCRIPTS

PROMPT = "the login redirect loop is back: sanitize the return url again"


def _hook(event: str, payload: dict[str, str]) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "tempera.hooks.entry", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def _counts(mem: Memory) -> tuple[int, int]:
    return (mem.db.one("SELECT COUNT(*) FROM injections")[0], mem.db.one("SELECT COUNT(*) FROM jobs")[0])


@pytest.fixture
def project(memory: Memory, tmp_path: Path, data_dir: Path) -> Path:
    repo = tmp_path / "webshop"
    repo.mkdir()
    memory.capture(
        CaptureInput(
            summary="Fixed the login redirect loop by sanitizing the return URL in the auth middleware",
            task_type="bugfix",
            project=str(repo),
        )
    )
    return repo


def test_hooks_inject_and_capture_nothing_for_a_paused_project(memory: Memory, project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("{}\n")
    prompt = {"session_id": "s-1", "cwd": str(project), "prompt": PROMPT}
    assert "login redirect" in _hook("user-prompt-submit", prompt)  # not paused: the memory is injected
    before = _counts(memory)

    pausing.pause_project(memory.store, str(project))
    paused = {"session_id": "s-2", "cwd": str(project), "transcript_path": str(transcript)}
    assert _hook("user-prompt-submit", {**paused, "prompt": PROMPT}) == ""
    assert _hook("session-start", {**paused, "source": "startup"}) == ""
    assert _hook("stop", {**paused, "last_assistant_message": "done"}) == ""
    assert _counts(memory) == before  # no injection logged, no capture job queued

    resume_project(memory, str(project))
    assert "login redirect" in _hook("user-prompt-submit", {**prompt, "session_id": "s-3"})


def _transcript_until(path: Path, lines: int) -> None:
    source = (TRANSCRIPTS / "spotter" / "tool_heavy.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(source[:lines]), encoding="utf-8")


def test_the_daemon_skips_paused_projects_and_resume_skips_the_paused_turns(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    transcript = tmp_path / "claude" / "projects" / "spotter" / "session.jsonl"
    transcript.parent.mkdir(parents=True)
    _transcript_until(transcript, 25)  # the first turn (the second prompt is line 26)
    ref = project_for_path("/home/marco/projects/spotter")  # the transcript's working directory

    pausing.pause(ref.id, ref.name, ref.path)
    assert handle_capture(memory, {"transcript_path": str(transcript)}) == {
        "skipped": "capture is paused for this project"
    }
    assert memory.store.count() == 0
    pausing.resume(ref.id)
    assert handle_capture(memory, {"transcript_path": str(transcript)})["added"] == 1

    pausing.pause_project(memory.store, ref.id)
    time.sleep(0.01)
    _transcript_until(transcript, 39)  # the second turn happens while paused
    assert len(segment_turns(read_transcript(transcript))) == 2  # it would be captured...
    _, record, moved = resume_project(memory, ref.id)
    assert record is not None and moved == 1
    assert handle_capture(memory, {"transcript_path": str(transcript)})["added"] == 0  # ...but resume skipped it
    assert memory.store.count() == 1
