"""The pinned Claude Code CLI: installed once into a cache folder with npm, then run as a subprocess.

Why pinned: the suite answers "does the Claude Code version we claim to support accept our settings, send what we
expect and write transcripts we can read". An unpinned `latest` would change under us between two CI runs. Bump
PINNED_VERSION on purpose, run the suite, and update the README's compatibility line.

Why fail instead of skip: a suite that quietly skips when npm is missing proves nothing, so every problem here
raises `ClaudeUnavailable` with the reason, and the fixture turns it into a test failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PINNED_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"
INSTALL_TIMEOUT_S = 600
CACHE_ENV = "TEMPERA_E2E_CACHE"  # where the CLI is cached; default ~/.cache/tempera-e2e


class ClaudeUnavailable(RuntimeError):
    """The pinned CLI cannot be installed or does not run; the message says why and what to do."""


def cache_root() -> Path:
    override = os.environ.get(CACHE_ENV)
    return Path(override).expanduser() if override else Path.home() / ".cache" / "tempera-e2e"


def _version_of(binary: Path) -> str | None:
    """What `claude --version` says its version is (None when it does not run)."""
    try:
        r = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.split()[0] if r.returncode == 0 and r.stdout.strip() else None


def _find_binary(prefix: Path, version: str) -> Path | None:
    """The launcher npm linked, or the platform package's binary itself when the package's postinstall (which
    copies that binary over the launcher placeholder) did not run, e.g. under `npm --ignore-scripts`."""
    modules = prefix / "node_modules"
    candidates = [modules / ".bin" / "claude", *sorted(modules.glob("@anthropic-ai/claude-code-*/claude"))]
    return next((c for c in candidates if c.is_file() and _version_of(c) == version), None)


def ensure_claude(version: str = PINNED_VERSION, root: Path | None = None) -> Path:
    """The path of a working `claude` of exactly `version`, installed with npm into `<root>/claude-code-<v>` when
    missing. A file lock makes concurrent test sessions wait for one install instead of racing two."""
    prefix = (root or cache_root()) / f"claude-code-{version}"
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _find_binary(prefix, version)
        if found is not None:
            return found
        npm = shutil.which("npm")
        if npm is None:
            raise ClaudeUnavailable(
                f"npm is not on PATH, so Claude Code {version} cannot be installed for the e2e "
                "suite; install Node.js (with npm) or put a finished install in "
                f"{prefix} (set {CACHE_ENV} to move the cache)"
            )
        cmd = [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            f"{PACKAGE}@{version}",
        ]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise ClaudeUnavailable(f"`{' '.join(cmd)}` did not finish within {INSTALL_TIMEOUT_S}s") from exc
        if r.returncode != 0:
            tail = "\n".join((r.stderr or r.stdout).strip().splitlines()[-15:])
            raise ClaudeUnavailable(f"`{' '.join(cmd)}` failed with exit code {r.returncode}:\n{tail}")
        found = _find_binary(prefix, version)
        if found is None:
            raise ClaudeUnavailable(
                f"npm installed {PACKAGE}@{version} into {prefix}, but no `claude` there "
                f"reports version {version} (`claude --version` fails or differs)"
            )
        return found


@dataclass
class ClaudeRun:
    """One finished `claude` process, with the requests it sent the model (the stub's log for this run only)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[dict[str, Any]] = field(default_factory=list)
    unused_replies: list[dict[str, Any]] = field(default_factory=list)

    def events(self) -> list[dict[str, Any]]:
        """Every JSON object on stdout: the one result of `json`, or all events of `stream-json`."""
        out = []
        for line in self.stdout.splitlines():
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict):
                out.append(doc)
        return out

    @property
    def output(self) -> dict[str, Any]:
        """The result object (the last JSON line of stdout)."""
        events = self.events()
        assert events, f"no JSON result on stdout of {self.args}:\n{self.stdout[-2000:]}\n{self.stderr[-2000:]}"
        return events[-1]

    def hooks_started(self) -> list[str]:
        """Names of the hooks (`SessionStart:startup` ...) a `stream-json` run reported starting."""
        return [str(e.get("hook_name")) for e in self.events() if e.get("subtype") == "hook_started"]

    @property
    def session_id(self) -> str:
        return str(self.output["session_id"])

    def describe(self) -> str:
        return (
            f"`claude {' '.join(self.args)}` exit {self.returncode} in {self.seconds:.1f}s\n"
            f"stdout: {self.stdout[-1500:]}\nstderr: {self.stderr[-1500:]}"
        )


def run(
    binary: Path, args: list[str], *, cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run the CLI with no terminal and no stdin, as CI and `claude -p` users do; the timeout kills a hung run."""
    return subprocess.run(
        [str(binary), *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def timed_run(binary: Path, args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> ClaudeRun:
    started = time.monotonic()
    r = run(binary, args, cwd=cwd, env=env, timeout=timeout)
    return ClaudeRun(
        args=args, returncode=r.returncode, stdout=r.stdout, stderr=r.stderr, seconds=time.monotonic() - started
    )


class LiveSession:
    """One `claude -p --input-format stream-json` process: several prompts in ONE session, each sent when the test
    chooses. Why: SessionStart fires once, at the first prompt, so later prompts of the session show what the
    UserPromptSubmit hook alone adds, after work done meanwhile in other sessions was captured."""

    def __init__(self, binary: Path, *, cwd: Path, env: dict[str, str], allowed_tools: str) -> None:
        self.args = [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            allowed_tools,
        ]
        self._proc = subprocess.Popen(
            [str(binary), *self.args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._errors: list[str] = []  # stderr, drained all the time so a chatty CLI never blocks on a full pipe
        threading.Thread(target=self._pump, name="claude-stdout", daemon=True).start()
        threading.Thread(target=self._drain, name="claude-stderr", daemon=True).start()

    def _pump(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _drain(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._errors.append(line)

    def send(self, prompt: str, timeout: float) -> ClaudeRun:
        """One user turn; returns when Claude Code reports the turn's result."""
        assert self._proc.stdin is not None
        started = time.monotonic()
        self._proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
        self._proc.stdin.flush()
        seen: list[str] = []
        while True:
            left = timeout - (time.monotonic() - started)
            try:
                line = self._lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                self.close()
                raise AssertionError(f"no result within {timeout}s for {prompt!r}; output:\n{''.join(seen)[-3000:]}")
            if line is None:
                raise AssertionError(
                    f"claude exited during {prompt!r}:\n{''.join(seen)[-3000:]}\n{''.join(self._errors)[-2000:]}"
                )
            seen.append(line)
            if line.startswith("{") and json.loads(line).get("type") == "result":
                return ClaudeRun(
                    args=[*self.args, prompt],
                    returncode=0,
                    stdout="".join(seen),
                    stderr="".join(self._errors),
                    seconds=time.monotonic() - started,
                )

    def close(self, timeout: float = 30) -> int:
        """End the session (stdin closed, as a finished pipe does); killed when it does not exit in time."""
        if self._proc.stdin and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait(timeout)
