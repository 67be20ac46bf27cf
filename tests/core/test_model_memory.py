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
FOLD = """
import sys
from pathlib import Path
from tempera.core import offline_model
model = offline_model.assemble(Path(sys.argv[1]) / "assembled")
offline_model.save_folded(str(model / "model.onnx"), sys.argv[1])
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def peak_mb(code: str, *args: str) -> float:
    """The peak resident memory of a fresh process running `code`."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) / 1024


def test_no_process_that_embeds_carries_the_folding_of_the_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Measured against what every load did before, in the same run: fold the weights (a process that only folds
    them peaks above any that embedded one text then)."""
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(tmp_path / "models"))  # nothing folded yet
    (tmp_path / "fold").mkdir()
    folding = peak_mb(FOLD, str(tmp_path / "fold"))
    first = peak_mb(EMBED_ONE)  # folds them, in a process of its own
    assert list(
        (tmp_path / "models").glob(f"{offline_model.CACHE_DIR_NAME}-folded-ort*/{offline_model.FOLDED_WEIGHTS}")
    )
    again = peak_mb(EMBED_ONE)
    assert first < 0.8 * folding and again < 0.8 * folding, (first, again, folding)
