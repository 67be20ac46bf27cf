"""Whatever arrives on stdin, every hook exits 0 with stdout empty or exactly one valid JSON object."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tempera.core import paths
from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory

from hookrun import ENTRY, HOOK, run_hook
from tests.support.cli import tempera

EVENTS = ["session-start", "user-prompt-submit", "stop"]
FIELDS = [
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "source",
    "prompt",
    "stop_hook_active",
    "last_assistant_message",
]
WEIRD = [
    None,
    0,
    -1,
    1.5,
    True,
    [],
    {},
    [1, "a"],
    {"x": {"y": None}},
    "",
    " ",
    "\x00\ud800",
    "../../etc/passwd",
    "A" * 300_000,
    "ü" * 5000,
    "/nonexistent/path.jsonl",
    "-" * 2,
]


def payloads(seed: int, n: int) -> list[bytes]:
    rnd = random.Random(seed)
    out: list[bytes] = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            out.append(bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 2000))))
        elif kind == 1:
            doc = {f: rnd.choice(WEIRD) for f in rnd.sample(FIELDS, rnd.randint(0, len(FIELDS)))}
            out.append(json.dumps(doc).encode())
        elif kind == 2:
            out.append(json.dumps(rnd.choice([[], [1, 2], 3, "str", None, True, 1e308])).encode())
        elif kind == 3:
            out.append(("[" * rnd.randint(100, 5000) + "]" * rnd.randint(0, 50)).encode())
        elif kind == 4:
            doc = {
                "session_id": "s",
                "cwd": "/tmp",
                "prompt": "x" * rnd.randint(1, 2_000_000),
                "transcript_path": rnd.choice(WEIRD[9:]),
            }
            out.append(json.dumps(doc).encode())
        else:
            good = {"session_id": "s-%d" % i, "cwd": "/tmp", "prompt": "fix the login bug", "source": "startup"}
            raw = json.dumps(good).encode()
            cut = rnd.randint(0, len(raw))
            out.append(raw[:cut] + b"\xff\xfe" * rnd.randint(0, 3))
    return out


@pytest.fixture
def some_memory(tmp_path: Path) -> None:
    with Memory() as mem:
        mem.capture(CaptureInput(summary="Fixed the login bug by trimming the session cookie", project="/tmp"))


def check_output(stdout: str) -> None:
    """Empty, or exactly one JSON object carrying hookSpecificOutput.additionalContext."""
    if not stdout.strip():
        return
    assert stdout.count("\n") == 1 and stdout.endswith("\n"), stdout[:200]
    doc = json.loads(stdout)
    assert set(doc) == {"hookSpecificOutput"}
    assert isinstance(doc["hookSpecificOutput"]["additionalContext"], str)


def run_fuzz(event: str, tmp_path: Path, *extra: str) -> None:
    cases = payloads(sum(map(ord, event)), 500)
    blob = tmp_path / "cases.bin"
    blob.write_bytes(b"".join(struct.pack(">I", len(c)) + c for c in cases))
    r = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("fork_driver.py")), event, str(blob), *extra],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS": "0.05"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    results = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(results) == 500
    for res in results:
        assert res["exit"] == 0
        check_output(res["stdout"])


@pytest.mark.parametrize("event", EVENTS)
def test_500_malformed_payloads(event: str, some_memory: None, tmp_path: Path) -> None:
    """Each payload goes to the real console entry in its own (forked) process; we check its exit status."""
    run_fuzz(event, tmp_path)


@pytest.mark.parametrize("event", EVENTS)
def test_500_malformed_payloads_through_the_daemon(
    event: str, some_memory: None, tmp_path: Path, start_daemon: Any
) -> None:
    """The same payloads through the installed command (relay.py) to a running daemon, which parses them."""
    start_daemon()
    run_fuzz(event, tmp_path, "relay")


def test_real_subprocess_sample(some_memory: None) -> None:
    """A sample through the installed command and the console entry, exactly as Claude Code runs them."""
    for command in (HOOK, ENTRY):
        for event in EVENTS:
            for data in payloads(7, 12):
                r = run_hook(event, data, env={"TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS": "0.05"}, command=command)
                assert r.returncode == 0
                check_output(r.stdout.decode())


def test_unknown_event_and_kill_switch(data_dir: Path) -> None:
    good = {"session_id": "s", "cwd": "/tmp", "prompt": "login bug"}
    r = run_hook("no-such-event", good)
    assert r.returncode == 0 and r.stdout == b""
    assert "unknown hook event" in (data_dir / paths.HOOK_LOG_NAME).read_text()
    for env in ({"TEMPERA_DISABLE": "1"}, {"TEMPERA_GENERAL__DISABLED": "true"}):
        r = run_hook("user-prompt-submit", good, env=env)
        assert r.returncode == 0 and r.stdout == b""


def test_kill_switch_in_config_file(data_dir: Path, some_memory: None) -> None:
    (data_dir / paths.CONFIG_NAME).write_text("[general]\ndisabled = true\n")
    r = run_hook("session-start", {"session_id": "s", "cwd": "/tmp", "source": "startup"})
    assert r.returncode == 0 and r.stdout == b""


def test_event_name_spellings() -> None:
    from tempera.inject.payload import event_name

    assert event_name("SessionStart") == event_name("session-start") == event_name("session_start") == "SessionStart"
    assert event_name("UserPromptSubmit") == "UserPromptSubmit"
    assert event_name("Stop") == "Stop" and event_name("pre-compact") == "PreCompact"
    assert event_name("bogus") is None


def test_warm_relay_answers_as_the_console_entry_does(data_dir: Path, some_memory: None, start_daemon: Any) -> None:
    """Through the daemon, relay.py prints what `tempera-hook` prints, and obeys the config kill switch and
    `tempera pause` that only the daemon reads."""
    start_daemon()
    prompt = {"cwd": "/tmp", "prompt": "the login bug with the session cookie is back"}
    warm = run_hook("user-prompt-submit", {**prompt, "session_id": "a"})
    entry = run_hook("user-prompt-submit", {**prompt, "session_id": "b"}, command=ENTRY)
    assert warm.returncode == entry.returncode == 0
    assert "trimming the session cookie" in warm.stdout.decode() and warm.stdout == entry.stdout
    assert not (data_dir / paths.HOOK_LOG_NAME).exists()  # answered by the daemon, no fallback and no error

    r = tempera("pause", "/tmp")
    assert r.returncode == 0, r.stderr
    assert run_hook("user-prompt-submit", {**prompt, "session_id": "c"}).stdout == b""
    tempera("resume", "/tmp", check=True)
    assert run_hook("user-prompt-submit", {**prompt, "session_id": "d"}).stdout != b""
    (data_dir / paths.CONFIG_NAME).write_text("[general]\ndisabled = true\n")
    assert run_hook("user-prompt-submit", {**prompt, "session_id": "e"}).stdout == b""


def test_relay_copies_of_package_values_agree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """relay.py cannot import the package on its fast path, so it repeats a few values: each must match the one
    definition it copies (core/config.py, core/settings.py, core/paths.py, inject/payload.py)."""
    from tempera.core import paths, settings
    from tempera.core.config import InjectConfig
    from tempera.hooks import relay, wire
    from tempera.inject import payload

    field = InjectConfig.model_fields["daemon_timeout_seconds"]
    lo = next(m.ge for m in field.metadata if hasattr(m, "ge"))
    hi = next(m.le for m in field.metadata if hasattr(m, "le"))
    assert (relay.TIMEOUT_SECTION, relay.TIMEOUT_KEY.decode(), relay.TIMEOUT_ENV.decode()) == (
        "inject",
        "daemon_timeout_seconds",
        settings.ENV_PREFIX + "INJECT__DAEMON_TIMEOUT_SECONDS",
    )
    assert (relay.DEFAULT_TIMEOUT, relay.MIN_TIMEOUT, relay.MAX_TIMEOUT) == (field.default, lo, hi)
    assert {t.decode() for t in relay.TRUE} == settings.TRUE
    assert [k.decode() for k in relay.KILL_SWITCH_ENVS] == [settings.KILL_SWITCH_ENV, "TEMPERA_GENERAL__DISABLED"]
    assert settings.env_overrides({"TEMPERA_GENERAL__DISABLED": "1"}, ["general"]) == {"general": {"disabled": "1"}}
    assert (relay.CONFIG_NAME, relay.HOOK_LOG_NAME) == (paths.CONFIG_NAME.encode(), paths.HOOK_LOG_NAME.encode())
    assert (wire.SOCKET_NAME, wire.TCP_NAME) == (paths.SOCKET_NAME, paths.TCP_NAME)
    assert relay.MAX_STDIN_BYTES == payload.MAX_STDIN_BYTES
    for raw, want in ((b"0", lo), (b"0.2", 0.2), (b"99", hi), (b"nonsense", field.default)):  # clamped, as a hook must
        assert relay.timeout({relay.TIMEOUT_ENV: raw}, b"/nonexistent") == want


def test_a_prompt_with_a_lone_surrogate_still_injects(data_dir: Path, some_memory: None, start_daemon: Any) -> None:
    """Claude Code cuts a string inside an emoji and sends the lone `\\ud83d`: the prompt is repaired and answered,
    on the keyword path and through the daemon alike."""
    prompt = {"cwd": "/tmp", "prompt": "the login bug \ud83d with the session cookie is back"}
    cold = run_hook(
        "user-prompt-submit",
        {**prompt, "session_id": "a"},
        command=ENTRY,
        env={"TEMPERA_INJECT__DAEMON_TIMEOUT_SECONDS": "0.05"},
    )
    assert "trimming the session cookie" in cold.stdout.decode()
    start_daemon()
    warm = run_hook("user-prompt-submit", {**prompt, "session_id": "b"})
    assert "trimming the session cookie" in warm.stdout.decode()
    assert (
        not (data_dir / paths.HOOK_LOG_NAME).exists() or "Traceback" not in (data_dir / paths.HOOK_LOG_NAME).read_text()
    )
