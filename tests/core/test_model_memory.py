"""A process that embeds holds the model's weights once: the offline model's int8 weights are folded to float32
once, by a process of its own, into the model cache (`offline_model.folded`), and loads map them (issue #39: every
load folded them again, peaking 115 MB above what it kept; a bare process that embedded one text peaked at 309 MB,
now 165)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tempera.core import offline_model

EMBED_ONE = """
from tempera.core.config import load_config
from tempera.core.embed import get_embedder
get_embedder(load_config()).embed_one("how do I run the checkout tests")
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def peak_mb() -> float:
    """The peak resident memory of a fresh process that loads the model and embeds one text."""
    done = subprocess.run([sys.executable, "-c", EMBED_ONE], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) / 1024


def test_no_process_that_embeds_carries_the_folding_of_the_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path / "models"))  # nothing folded yet
    first = peak_mb()  # folds them, in a process of its own
    assert list(
        (tmp_path / "models").glob(f"{offline_model.CACHE_DIR_NAME}-folded-ort*/{offline_model.FOLDED_WEIGHTS}")
    )
    assert first < 230 and peak_mb() < 230
