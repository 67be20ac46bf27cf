"""`tempera doctor` checks the whole chain: Claude Code registration, the daemon, and hook failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def doctor(env: dict[str, str]) -> tuple[int, dict[str, dict[str, object]]]:
    r = subprocess.run([sys.executable, "-m", "tempera.cli", "doctor", "--json"], capture_output=True, text=True,
                       env=env, timeout=120, cwd=env["HOME"])
    return r.returncode, {c["check"]: c for c in json.loads(r.stdout)}


@pytest.fixture
def home_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
    env["HOME"] = str(home)
    return env


def test_doctor_sees_install_daemon_and_hook_errors(home_env: dict[str, str], data_dir: Path) -> None:
    code, checks = doctor(home_env)
    assert code == 1 and checks["claude code"]["ok"] is False and "tempera install" in checks["claude code"]["detail"]

    r = subprocess.run([sys.executable, "-m", "tempera.cli", "install", "--scope", "user"], capture_output=True,
                       text=True, env=home_env, timeout=120)
    assert r.returncode == 0, r.stderr
    code, checks = doctor(home_env)
    assert checks["claude code (user)"]["ok"] is True, checks["claude code (user)"]
    assert "not running" in str(checks["daemon"]["detail"])
    assert checks["hook errors"]["ok"] is True
    assert code == 0, checks

    (data_dir / "hooks.log").write_text("2026-11-30T00:00:00 pid=1 hook failed:\nTraceback ...\n")
    code, checks = doctor(home_env)
    assert code == 1 and checks["hook errors"]["ok"] is False

    settings = Path(home_env["HOME"]) / ".claude" / "settings.json"
    doc = json.loads(settings.read_text())
    cmd = doc["hooks"]["Stop"][0]["hooks"][0]["command"]
    doc["hooks"]["Stop"][0]["hooks"][0]["command"] = cmd.replace(str(Path(sys.executable).parent), "/nonexistent")
    settings.write_text(json.dumps(doc, indent=2))
    code, checks = doctor(home_env)
    assert checks["claude code (user)"]["ok"] is False and "missing executable" in str(
        checks["claude code (user)"]["detail"])
