"""`daemon.transport = "tcp"` (the default on Windows, forced here on Linux): the daemon listens on loopback with a
secret token written owner-only into the data dir; the real hook reaches it through that file, `tempera doctor` names
it, and a client without the token, or of another user, gets nothing. Real daemon, real hook subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hookrun import context_of, run_hook, without_unix_sockets

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.hooks import wire
from tests.support.cli import tempera
from tests.support.datadir import rows

PROMPT = "phoenix server does not start, mix deps"


@pytest.fixture
def tcp_daemon(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_daemon: Any) -> str:
    """A TCP daemon over one episode; the episode's id."""
    monkeypatch.setenv("TEMPERA_DAEMON__TRANSPORT", "tcp")
    with Memory(use_model=False) as mem:
        summary = "Phoenix server failed to start until mix deps.get was run"
        episode = mem.capture(CaptureInput(summary=summary, project=str(tmp_path))).id
    start_daemon()
    return episode


def _raw_hook_call(port: int, payload: bytes, token: str, proof: str) -> bytes:
    with socket.create_connection((wire.LOOPBACK, port), timeout=30) as s:
        header = wire.hook_header("user-prompt-submit", len(payload), token)
        return wire.exchange(s, header, payload, proof, wire.MAX_REPLY_BYTES)


def test_the_hook_reaches_a_tcp_daemon_through_its_owner_only_file(
    tcp_daemon: str, data_dir: Path, tmp_path: Path
) -> None:
    assert not (data_dir / paths.SOCKET_NAME).exists()
    endpoint = data_dir / paths.TCP_NAME
    assert stat.S_IMODE(endpoint.stat().st_mode) == 0o600 and stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    port, token, _ = wire.tcp_endpoint(str(data_dir)) or (0, "", "")
    assert port > 0 and len(token) == 64
    payload = {"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}
    assert tcp_daemon[:8] in context_of(run_hook("user-prompt-submit", payload))
    doctor = json.loads(tempera("doctor", "--json", timeout=120).stdout)
    (daemon,) = [c for c in doctor if c["check"] == "daemon"]
    assert f"over tcp 127.0.0.1:{port}" in daemon["detail"]
    report = json.loads(tempera("doctor", "--report", timeout=120).stdout)  # what a bug report attaches
    assert report["daemon_transport"] == "tcp" and any("listening on tcp" in ln for ln in report["logs"]["daemon.log"])
    assert token not in json.dumps(report)  # the secret stays in its file
    tempera("daemon", "stop", check=True, timeout=60)
    assert not endpoint.exists()  # no port file outlives its daemon


def test_a_request_without_the_token_gets_nothing(tcp_daemon: str, data_dir: Path, tmp_path: Path) -> None:
    port, token, proof = wire.tcp_endpoint(str(data_dir)) or (0, "", "")
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}).encode()
    for sent in ("", "0" * 64, token[:-1] + ("0" if token[-1] != "0" else "1")):
        with pytest.raises(PermissionError, match="token") as refused:
            _raw_hook_call(port, payload, sent, proof)
        assert tcp_daemon[:8] not in str(refused.value)
    assert rows(data_dir, "SELECT COUNT(*) FROM injections") == [(0,)]  # nothing answered, nothing logged
    out, _ = wire.hook_reply(_raw_hook_call(port, payload, token, proof))
    assert out is not None and tcp_daemon[:8] in out.decode()  # the same request with the token is answered


def test_a_program_on_a_dead_daemons_port_never_gets_the_prompt(data_dir: Path, tmp_path: Path) -> None:
    """A daemon killed outright leaves `daemon.tcp` behind; if another program takes that port, the hook's header
    (with the dead daemon's token) reaches it, but the prompt does not: that program cannot answer with the proof."""
    data_dir.mkdir(parents=True, exist_ok=True)
    squatter = socket.create_server((wire.LOOPBACK, 0))
    port = squatter.getsockname()[1]
    (data_dir / paths.TCP_NAME).write_text(f"{port} {'a' * 64} {'b' * 64}\n")
    heard: list[bytes] = []

    def listen() -> None:
        conn, _ = squatter.accept()
        with conn:
            conn.settimeout(10)
            heard.append(conn.recv(65536))
            conn.sendall(b"c" * 64 + b"\n")  # a guess at the proof
            try:
                while chunk := conn.recv(65536):
                    heard.append(chunk)
            except OSError:
                pass

    thread = threading.Thread(target=listen)
    thread.start()
    secret = "the password is hunter2"
    payload = {"session_id": "s", "cwd": str(tmp_path), "prompt": secret}
    env = {"TEMPERA_DAEMON__TRANSPORT": "tcp", "TEMPERA_INJECT__DAEMON_START_SECONDS": "0.1"}
    r = run_hook("user-prompt-submit", payload, env=env)
    thread.join(timeout=30)
    squatter.close()
    assert r.returncode == 0 and heard and b'"op": "hook"' in heard[0]  # the header reached it ...
    assert secret.encode() not in b"".join(heard)  # ... the prompt did not
    assert "not the daemon" in (data_dir / paths.HOOK_LOG_NAME).read_text()


def _interpreter_for_anyone() -> str:
    """A Python another user may run (the test's venv may sit in root's home, which nobody else may enter)."""
    found = [p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)]
    assert found, "no system python3 for the other user's probe"
    return found[0]


def test_another_user_cannot_reach_the_daemon(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The token sits in the owner-only data dir (0700, the file 0600): a process of another user, in a folder it may
    read, cannot read it, so it finds no daemon to ask (its own hook would start its own, in its own data dir)."""
    assert os.geteuid() == 0, "this test runs a probe as another user: run the suite as root (as .ci/run does)"
    shared = Path(
        tempfile.mkdtemp(prefix="tempera-tcp-")
    )  # world-readable, unlike pytest's tmp: only the data dir guards
    try:
        shared.chmod(0o755)
        data = shared / "data"
        monkeypatch.setenv("TEMPERA_DATA_DIR", str(data))
        monkeypatch.setenv("TEMPERA_DAEMON__TRANSPORT", "tcp")
        with Memory(use_model=False) as mem:
            episode = mem.capture(
                CaptureInput(summary="Phoenix server failed until mix deps.get", project=str(tmp_path))
            )
        tempera("daemon", "start", check=True, timeout=120)
        shutil.copy(wire.__file__, shared / "wire.py")
        (shared / "wire.py").chmod(0o644)
        payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}).encode()
        probe = (
            "import sys; sys.path.insert(0, sys.argv[1]); import wire\n"
            "try:\n    s, token, proof = wire.connect(sys.argv[2], 5)\n"
            "except OSError as exc:\n    print('refused', exc); sys.exit()\n"
            "body = sys.stdin.buffer.read()\n"
            "header = wire.hook_header('user-prompt-submit', len(body), token)\n"
            "print(wire.exchange(s, header, body, proof, wire.MAX_REPLY_BYTES).decode())"
        )
        done = subprocess.run(
            [_interpreter_for_anyone(), "-I", "-S", "-c", probe, str(shared), str(data)],
            input=payload,
            capture_output=True,
            timeout=60,
            user=65534,  # nobody
            group=65534,
        )
        assert done.returncode == 0, done.stderr
        said = done.stdout.decode()
        assert said.startswith("refused") and episode.id[:8] not in said, said
        assert (data / paths.TCP_NAME).exists()  # the daemon is there, for its own user
    finally:
        tempera("daemon", "stop", timeout=60)
        shutil.rmtree(shared, ignore_errors=True)


def test_a_python_without_unix_sockets_reaches_the_daemon_it_starts(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows' Python has no AF_UNIX: the relay, finding no daemon, must still take its cold path, start a (TCP)
    daemon and get its answer; before, asking for a unix socket raised past the cold path and nothing came back."""
    monkeypatch.setenv("TEMPERA_DAEMON__TRANSPORT", "tcp")
    with Memory(use_model=False) as mem:
        summary = "Phoenix server failed to start until mix deps.get was run"
        episode = mem.capture(CaptureInput(summary=summary, project=str(tmp_path))).id
    payload = {"session_id": "s", "cwd": str(tmp_path), "prompt": PROMPT}
    r = run_hook("user-prompt-submit", payload, command=without_unix_sockets())
    assert episode[:8] in context_of(r)
    assert wire.tcp_endpoint(str(data_dir)) is not None and not (data_dir / paths.SOCKET_NAME).exists()
