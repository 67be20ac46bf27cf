"""Every test gets its own data dir (a real SQLite file) and a clean TEMPERA_* environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.datadir import kill_daemon

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data"  # the real inputs the tests read, with their origins and licences (README.md)
TRANSCRIPTS = FIXTURES / "transcripts"
DIALECT = FIXTURES / "minigraf-dialect"
LOCOMO = FIXTURES / "locomo" / "conv-26.json"
EMBEDDING_REFERENCE = FIXTURES / "embeddings" / "minilm-int8-reference.json"
PLAN_PROMPT = TRANSCRIPTS / "entire-cli" / "plan-prompt.md"  # a real plan mode prompt, 5,198 characters


def pytest_report_header(config: pytest.Config) -> list[str]:
    from tempera.core.db import driver_info

    info = driver_info()
    transport = os.environ.get("TEMPERA_DAEMON__TRANSPORT") or "the platform's default"
    return [f"tempera: {info['driver']}, SQLite {info['sqlite_version']}, fixtures: {FIXTURES}, transport: {transport}"]


TRANSPORT_ENV = "TEMPERA_DAEMON__TRANSPORT"
FORCED_TRANSPORT = os.environ.get(TRANSPORT_ENV)


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The test's own data dir. A hook run without a daemon starts one for next time, so whatever daemon serves
    it is stopped afterwards: none outlives its test."""
    for key in list(os.environ):
        if key.startswith("TEMPERA_"):
            monkeypatch.delenv(key)
    if FORCED_TRANSPORT:  # the run with the transport forced (.ci/run's second pass: TCP, as on Windows)
        monkeypatch.setenv(TRANSPORT_ENV, FORCED_TRANSPORT)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    d = tmp_path / "tempera-data"
    monkeypatch.setenv("TEMPERA_DATA_DIR", str(d))
    # one model cache for the whole run: the offline model dir is assembled once, never downloaded
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(REPO / ".pytest_cache" / "models"))
    # a hook that finds no daemon starts one and waits for its answer; on a busy test machine that start can take
    # longer than a user's default, and tests read the answer (test_first_prompt.py tests the bound itself)
    monkeypatch.setenv("TEMPERA_INJECT__DAEMON_START_SECONDS", "40")
    yield d
    kill_daemon(d)


@pytest.fixture
def one_row_suffices(monkeypatch: pytest.MonkeyPatch) -> None:
    """One logged row clears the brief's evidence bar, for tests about something else (matching, transfer, budget,
    a replay of one session); `test_brief_evidence.py` tests the bar itself. Requested before `mem`."""
    monkeypatch.setenv("TEMPERA_SELFIMPROVE__BRIEF_MIN_ROWS", "1")
    monkeypatch.setenv("TEMPERA_SELFIMPROVE__BRIEF_MIN_SESSIONS", "1")


@pytest.fixture
def memory():
    from tempera.core.memory import Memory

    mem = Memory()
    yield mem
    mem.close()
