"""A real memory for the dream tests, built once per session and copied into each test's data dir: every real
transcript in tests/data, the self-improvement transcripts and the written ledger sessions, captured and processed
as the daemon does (corrections and missed questions included), with retrievals made the way hooks make them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from dream_support import write_ledger
from support.anthropic_stub import AnthropicStub

from tempera.core import paths
from tempera.core.memory import Memory
from tempera.transcripts import capture_transcript
from tempera.transcripts.detect import process_capture
from tests.conftest import REPO, TRANSCRIPTS

NOW = datetime(2026, 3, 5, 12, tzinfo=timezone.utc)  # the day after the last recorded turn
SELFIMPROVE = REPO / "tests" / "selfimprove" / "data"
QUERIES = [
    ("refund totals in the report", "webshop"),
    ("store amounts in cents", "webshop"),
    ("export skips cancelled orders", "webshop"),
    ("rounding of totals", "ledger"),
    ("verbose output logging", "ledger"),
]


def _seed(target: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TEMPERA_DATA_DIR", str(target))
        mp.setenv("FASTEMBED_CACHE_DIR", str(REPO / ".pytest_cache" / "models"))
        mp.delenv("ANTHROPIC_API_KEY", raising=False)
        sources = [
            *sorted(TRANSCRIPTS.rglob("*.jsonl")),
            *sorted(SELFIMPROVE.glob("*.jsonl")),
            write_ledger(target.parent / "written" / "ledger.jsonl"),
        ]
        mem = Memory()
        try:
            for src in sources:
                copy = target.parent / "copies" / src.parent.name / src.name
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(src, copy)
                process_capture(mem, capture_transcript(mem, copy, use_llm=False))
            for query, project in QUERIES:
                mem.retrieve(query, project=project, limit=4, via="hook")
        finally:
            mem.close()


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("dream-seed") / "data"
    _seed(target)
    return target / paths.DB_NAME


@pytest.fixture
def seeded(seed_db: Path, data_dir: Path) -> Iterator[Memory]:
    """This test's own copy of the seeded database, opened with the embedding model."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copy(seed_db, data_dir / paths.DB_NAME)
    mem = Memory()
    yield mem
    mem.close()


@pytest.fixture
def llm_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicStub]:
    """The local Messages API stub with a key and the LLM switched on; script replies in `stub.replies`."""
    with AnthropicStub([]) as stub:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("TEMPERA_LLM__ENABLED", "true")
        monkeypatch.setenv("TEMPERA_LLM__BASE_URL", stub.url)
        yield stub
