"""One user's machine in a folder: a temporary HOME with Tempera installed the way a user installs it, git
repositories to work in, and the pinned Claude Code CLI talking to the Messages API stub.

Why a whole HOME: Claude Code reads ~/.claude/settings.json and ~/.claude.json and writes transcripts under
~/.claude/projects; Tempera's daemon watches that folder. Only a private HOME keeps a test from reading or changing
the developer's own setup, and only a real `tempera install` subprocess tests what users run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_cli import ClaudeRun, LiveSession, run, timed_run
from messages_stub import MessagesStub, Reply

from tests.support.datadir import kill_daemon
from tempera.core import paths

RUN_TIMEOUT_S = 120.0  # one whole `claude -p` run; a healthy scripted one takes a few seconds
ALLOWED_TOOLS = "Bash,Write,Edit,Read"
# Variables of the developer's own session that would leak into the sandbox and change what Claude Code or
# Tempera do (config dirs, API endpoints, a parent Claude Code session, Tempera settings, caches).
_DROPPED_PREFIXES = ("TEMPERA_", "ANTHROPIC_", "CLAUDE", "XDG_", "FASTEMBED_", "MCP_")


@dataclass
class Sandbox:
    root: Path
    claude_bin: Path
    stub: MessagesStub
    env_extra: dict[str, str] = field(default_factory=dict)  # what this test sets in its user's environment

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def data_dir(self) -> Path:
        return self.home / ".tempera"

    @property
    def settings_file(self) -> Path:
        return self.home / ".claude" / "settings.json"

    @property
    def hooks_log(self) -> Path:
        return self.data_dir / paths.HOOK_LOG_NAME

    def env(self) -> dict[str, str]:
        """What a user's shell would hold, with HOME and the API pointed into the sandbox."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
        env.update(
            HOME=str(self.home),
            TEMPERA_DATA_DIR=str(self.data_dir),
            ANTHROPIC_API_KEY="sk-ant-dummy",
            ANTHROPIC_BASE_URL=self.stub.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            **self.env_extra,
        )
        return env

    # -- Tempera as a user runs it -------------------------------------------------------------------------------
    def tempera(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> str:
        """Run the installed `tempera` console script; a failure fails the test with its output."""
        exe = Path(sys.executable).parent / "tempera"
        assert exe.is_file(), f"{exe} is missing: install tempera-memory into this environment first"
        r = subprocess.run(
            [str(exe), *args],
            cwd=cwd or self.home,
            env=self.env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, f"tempera {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        return r.stdout

    def install(self) -> None:
        self.tempera("install", "--scope", "user")

    def stop_daemon(self) -> None:
        kill_daemon(self.data_dir)

    # -- a project to work in ------------------------------------------------------------------------------------
    def repo(self, relative: str, files: dict[str, str]) -> Path:
        """A git repository with `files` committed, as a project a user opens Claude Code in."""
        path = self.root / relative
        path.mkdir(parents=True)
        for name, text in files.items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_text(text)
        git = ["git", "-c", "user.name=E2E", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main"]
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
            subprocess.run([*git, *cmd], cwd=path, env=self.env(), check=True, capture_output=True, timeout=60)
        return path

    # -- Claude Code ---------------------------------------------------------------------------------------------
    def claude(
        self,
        prompt: str,
        *,
        cwd: Path,
        script: list[Reply],
        args: tuple[str, ...] = (),
        allowed_tools: str = ALLOWED_TOOLS,
        stream: bool = False,
        check: bool = True,
    ) -> ClaudeRun:
        """`claude -p PROMPT --output-format json --allowedTools ...` with the model following `script`.

        `stream` asks for `stream-json` instead, whose events show which hooks Claude Code started. With `check`,
        the run must succeed and use up its script: a leftover reply means a tool was refused or the agent loop went
        another way than the test scripted, and the later assertions would be about nothing."""
        output = ["stream-json", "--verbose"] if stream else ["json"]
        argv = ["-p", prompt, "--output-format", *output, "--allowedTools", allowed_tools, *args]
        return self._run(argv, cwd=cwd, script=script, check=check)

    def claude_command(self, *args: str, cwd: Path, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """Any other `claude` subcommand (e.g. `mcp list`) in the sandbox's environment."""
        return run(self.claude_bin, list(args), cwd=cwd, env=self.env(), timeout=timeout)

    def open_session(self, cwd: Path, allowed_tools: str = ALLOWED_TOOLS) -> LiveSession:
        """A session kept open for several prompts (see `LiveSession`); close it when done."""
        return LiveSession(self.claude_bin, cwd=cwd, env=self.env(), allowed_tools=allowed_tools)

    def turn(self, session: LiveSession, prompt: str, *, script: list[Reply], check: bool = True) -> ClaudeRun:
        """One more prompt in an open session, the model following `script`."""
        return self._scripted(lambda: session.send(prompt, RUN_TIMEOUT_S), script, check)

    def _run(self, argv: list[str], *, cwd: Path, script: list[Reply], check: bool) -> ClaudeRun:
        return self._scripted(
            lambda: timed_run(self.claude_bin, argv, cwd=cwd, env=self.env(), timeout=RUN_TIMEOUT_S), script, check
        )

    def _scripted(self, go: Callable[[], ClaudeRun], script: list[Reply], check: bool) -> ClaudeRun:
        self.stub.load(script)
        before = len(self.stub.requests())
        result = go()
        result.requests = self.stub.requests()[before:]
        result.unused_replies = self.stub.unused()
        if check:
            assert result.returncode == 0, result.describe()
            assert result.output.get("is_error") is False, result.describe()
            assert not result.unused_replies, (
                f"scripted replies never asked for: {result.unused_replies}\n{result.describe()}"
            )
        return result

    def transcript(self, session_id: str) -> Path:
        """The session's transcript file, wherever this Claude Code version put it under ~/.claude/projects."""
        found = sorted((self.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"expected one transcript of session {session_id}, found {found}"
        return found[0]

    # -- what Tempera recorded -----------------------------------------------------------------------------------
    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query on the data dir's database; [] while the database or its schema does not exist yet
        (the daemon creates them asynchronously)."""
        db = self.data_dir / paths.DB_NAME
        if not db.exists():
            return []
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []
        finally:
            conn.close()

    def episodes(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Captured episodes (their stored JSON documents), oldest first; optionally of one session only."""
        where, params = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
        return [json.loads(r[0]) for r in self.rows(f"SELECT data FROM episodes {where} ORDER BY created_at", params)]

    def hook_log_text(self) -> str:
        return self.hooks_log.read_text(encoding="utf-8", errors="replace") if self.hooks_log.exists() else ""

    def assert_no_hook_errors(self) -> None:
        text = self.hook_log_text()
        assert "Traceback" not in text, f"{self.hooks_log} holds a traceback:\n{text[-4000:]}"
