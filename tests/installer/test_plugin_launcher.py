"""The plugin launcher as Claude Code runs it: `python3 -I -S plugin_launcher.py <root> <data> <verb>`, a real
process. The whole first-use setup (venv, pip) is in tests/e2e/test_plugin_install.py; these are its cheap paths."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LAUNCHER = REPO / "tempera" / "installer" / "plugin_launcher.py"
RELAY = REPO / "tempera" / "hooks" / "relay.py"
SLOW_IMPORTS = {"json", "subprocess", "shutil", "hashlib", "re"}


@pytest.fixture
def plugin_data(tmp_path: Path) -> Path:
    """${CLAUDE_PLUGIN_DATA}: a folder only the launcher writes to."""
    data = tmp_path / "plugin-data"
    data.mkdir()
    return data


def launch(data: Path, verb: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", *flags, str(LAUNCHER), str(REPO), str(data), verb],
        input='{"hook_event_name": "Stop"}',
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TEMPERA_DISABLE": "1"},
    )  # the relay then answers nothing at once


def test_a_ready_venv_runs_the_relay_importing_only_os_and_sys(plugin_data: Path) -> None:
    ready = f"source={REPO.resolve()}@0.1.0\npython={sys.executable}\nrelay={RELAY}\nmcp={sys.executable}\n"
    (plugin_data / "ready").write_text(ready)

    r = launch(plugin_data, "stop", "-X", "importtime")

    assert r.returncode == 0 and r.stdout == ""
    imported = {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    assert "os" in imported and not imported & SLOW_IMPORTS, imported
    assert sorted(p.name for p in plugin_data.iterdir()) == ["ready"]  # up to date: no setup started


def test_before_the_venv_a_hook_answers_nothing_and_a_failed_setup_waits(plugin_data: Path) -> None:
    (plugin_data / "setup.failed").write_text("pip failed\n")  # just now: not retried on every hook

    r = launch(plugin_data, "user-prompt-submit")

    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert sorted(p.name for p in plugin_data.iterdir()) == ["setup.failed"]


def test_the_mcp_server_says_why_it_is_not_there_yet(plugin_data: Path) -> None:
    (plugin_data / "setup.failed").write_text("pip failed\n")

    r = launch(plugin_data, "mcp")

    assert r.returncode == 1 and "being set up" in r.stderr and str(plugin_data / "setup.log") in r.stderr
