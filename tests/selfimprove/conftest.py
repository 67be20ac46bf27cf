"""Fixtures for the self-improvement tests: memory without the embedding model (none of this needs vectors),
replays of the transcripts in ./data, and the `tempera` command run in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from selfimprove_support import DATA, replay

from tempera.core.memory import Memory
from tempera.transcripts.detect import Processed


@pytest.fixture
def mem() -> Iterator[Memory]:
    m = Memory(use_model=False)
    yield m
    m.close()


@pytest.fixture
def replayed(mem: Memory, tmp_path: Path) -> Callable[..., list[Processed]]:
    """Replay transcripts from ./data (copied, so the captures' cursors are per test)."""

    def run(*names: str) -> list[Processed]:
        out = []
        for name in names:
            copy = tmp_path / "transcripts" / f"{name}.jsonl"
            copy.parent.mkdir(exist_ok=True)
            shutil.copy(DATA / f"{name}.jsonl", copy)
            out.append(replay(mem, copy))
        return out

    return run


@pytest.fixture
def tempera() -> Callable[..., tuple[int, str, str]]:
    """Run `tempera ARGS` through the real entry point (tests/support/cli.py): (exit code, stdout, stderr)."""
    from tests.support.cli import tempera as run_tempera

    def run(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
        done = run_tempera(*args, cwd=cwd)
        return done.returncode, done.stdout, done.stderr

    return run
