"""A process that embeds holds the model's weights once: the offline model's int8 weights are folded to float32
once, into the model cache (`offline_model.folded`), and later loads map them (issue #39: every load folded them
again, peaking 115 MB above what it kept; a bare process that embedded one text peaked at 309 MB, now 165)."""

from __future__ import annotations

import subprocess
import sys

from tempera.core import offline_model
from tempera.core.config import load_config

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


def test_a_process_that_embeds_one_text_does_not_fold_the_weights_again() -> None:
    peak_mb()  # the model cache of the test run may not hold the folded model yet: this load makes it
    assert peak_mb() < 230
    cache = load_config().model_cache_dir()
    assert list(cache.glob(f"{offline_model.CACHE_DIR_NAME}-folded-ort*/{offline_model.FOLDED_WEIGHTS}"))
