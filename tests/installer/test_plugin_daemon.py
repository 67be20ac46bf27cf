"""The plugin's warm daemon leaves with the plugin: started the way the plugin starts it (the launcher execs the
venv's relay, whose fallback spawns the daemon from the venv's Python), it exits once the plugin root or the
plugin's data dir (its venv) is removed."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tempera.core import processes
from tempera.daemon import server
from tests.conftest import REPO
from tests.support.datadir import daemon_pid, endpoint_file, kill_daemon, wait_for

LAUNCHER = REPO / "tempera" / "installer" / "plugin_launcher.py"
RELAY = REPO / "tempera" / "hooks" / "relay.py"


def _plugin(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A plugin root, and its data dir holding a ready venv (no pip: a .pth puts this checkout and its
    dependencies on the venv's path, as the plugin's pip install would put the package there)."""
    root, data = tmp_path / "plugin-root", tmp_path / "plugin-data"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "tempera", "version": "0.1.0"}))
    venv = data / "venv-test"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [packages] = venv.glob("lib/python*/site-packages")
    (packages / "tempera-test.pth").write_text(f"{REPO}\n" + "".join(f"{p}\n" for p in site.getsitepackages()))
    python = venv / "bin" / "python"
    ready = {"source": f"{root.resolve()}@0.1.0", "python": python, "relay": RELAY, "mcp": python}
    (data / "ready").write_text("".join(f"{k}={v}\n" for k, v in ready.items()))
    (data / "setup.failed").write_text("no setup in this test\n")  # the launcher starts no pip install
    return root, data, python


def old_python() -> str:
    """A Python older than the package needs (as macOS's own python3, 3.9): the launcher must still run under it."""
    pyenv = Path(sys.base_prefix).parent  # the versions pyenv keeps beside this one
    found = [p for v in ("3.10", "3.9", "3.8") for p in sorted(glob.glob(f"{pyenv}/{v}.*/bin/python3"))]
    found += [shutil.which(f"python3.{minor}") for minor in (10, 9, 8)]  # pyenv's shims of them do not run
    olds = [p for p in found if p]
    assert olds, "this test needs a Python 3.8-3.10 on the machine (pyenv has them here)"
    return olds[0]


def test_the_launcher_passes_the_plugin_root_under_the_daemons_name() -> None:
    spec = importlib.util.spec_from_file_location("plugin_launcher", LAUNCHER)
    assert spec is not None and spec.loader is not None
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)
    assert launcher.PLUGIN_ROOT_ENV == server.PLUGIN_ROOT_ENV


@pytest.mark.parametrize(("removed", "launcher_python"), [("root", "this"), ("data", "this"), ("root", "old")])
def test_the_plugins_daemon_exits_once_the_plugin_is_removed(
    removed: str, launcher_python: str, data_dir: Path, tmp_path: Path
) -> None:
    """`old`: the `python3` on PATH is too old for the package (macOS's is 3.9); the launcher runs under it and
    hands the hook to the venv's Python all the same."""
    root, data, python = _plugin(tmp_path)
    hook = subprocess.run(
        [sys.executable if launcher_python == "this" else old_python(), "-I", "-S", str(LAUNCHER), str(root)]
        + [str(data), "user-prompt-submit"],
        input=json.dumps({"session_id": "s", "cwd": str(tmp_path), "prompt": "hello"}),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TEMPERA_DAEMON__VERSION_CHECK_SECONDS": "0.5"},
    )
    assert hook.returncode == 0 and hook.stdout == "", hook.stderr
    try:
        pid = wait_for(lambda: daemon_pid(data_dir), timeout=60)
        wait_for(lambda: endpoint_file(data_dir).exists(), timeout=90)
        assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == bytes(python)  # the venv's daemon
        shutil.rmtree(root if removed == "root" else data)
        wait_for(lambda: not processes.alive(pid), timeout=20)
    finally:
        kill_daemon(data_dir)
    assert not endpoint_file(data_dir).exists()  # a clean exit: it took its socket (or port file) with it
    assert "install is gone" in (data_dir / "daemon.log").read_text()
