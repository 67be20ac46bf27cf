"""The daemon re-executes itself when the installed Tempera version changes (an upgrade under a running daemon)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.support.datadir import daemon_pid
from tests.support.datadir import wait_for

from tempera.core import paths
from tempera.hooks.client import request
from tests.support.cli import tempera


def fake_dist(root: Path, version: str) -> None:
    """A dist-info that importlib.metadata finds before the real one (it is first on PYTHONPATH)."""
    for old in root.glob("tempera_memory-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    d = root / f"tempera_memory-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: tempera-memory\nVersion: {version}\n")


def test_daemon_restarts_on_new_version(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "site"
    fake_dist(fake, "0.1.0.post1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("TEMPERA_DAEMON__VERSION_CHECK_SECONDS", "0.5")
    r = tempera("daemon", "start", timeout=90)
    assert r.returncode == 0, r.stderr
    first = request(paths.data_dir(), {"op": "ping"}, timeout=5)
    assert first and first["version"] == "0.1.0.post1"
    pid = daemon_pid(data_dir)

    fake_dist(fake, "0.1.0.post2")  # an upgrade lands while the daemon runs

    def upgraded() -> bool:
        reply = request(paths.data_dir(), {"op": "ping"}, timeout=2)
        return bool(reply and reply["version"] == "0.1.0.post2")

    wait_for(upgraded, timeout=60, interval=0.2)
    assert daemon_pid(data_dir) == pid  # re-executed in place: same process, new code
    status = tempera("daemon", "status", "--json", timeout=30)
    assert json.loads(status.stdout)["version"] == "0.1.0.post2"
