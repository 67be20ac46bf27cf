"""Issue 40: the memory browser shows no secret. A session holding a handful of the matrix's shapes is captured;
each of its episodes is opened in headless Chromium, whose page quotes the source transcript (read from the file
on disk, which is not redacted): the secrets are placeholders on the page and nowhere in the data dir."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from uibrowser import Page

from support.datafiles import stored_bytes
from support.secrets import SECRETS
from tempera.core.memory import Memory
from tempera.transcripts import capture_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

SHOWN = {"curl_basic_auth", "docker_password_stdin", "slack_app", "url_password_slash_at", "discord_bot", "sshpass"}


def test_an_episode_page_quotes_its_transcript_without_secrets(
    page: Page, ui: Any, memory: Memory, data_dir: Path, tmp_path: Path
) -> None:
    shapes = [s for s in SECRETS if s[0] in SHOWN]
    assert len(shapes) == len(SHOWN)
    session = SessionWriter(tmp_path / "t" / "5ec0e700-0000-4000-8000-0000000000b1.jsonl", cwd=str(tmp_path))
    for name, text, _ in shapes:
        session.prompt(f"the {name} check fails: {text}")
        session.bash(f"{text} && ./check_{name}.sh", f"Error: rejected {text}", ok=False)
        session.say(f"The {name} check passes now; it was given {text}.")
    added = capture_transcript(memory, session.path, project=str(tmp_path)).added
    assert len(added) == len(shapes)
    for episode in added:
        assert page.go(f"/episode/{episode.id}").status == 200
        html = page.tab.content()
        assert "[REDACTED:" in page.tab.inner_text("main") and "Error: rejected" in html
        assert [name for name, _, secret in shapes if secret in html] == []
    raw = stored_bytes(data_dir)
    assert [name for name, _, secret in shapes if secret.encode() in raw] == []
