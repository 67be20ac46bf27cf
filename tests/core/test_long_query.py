"""A prompt longer than the embedding model's window counts as a whole, not only its start (core/embed.py
`embed_query`), on a real store with the real offline model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tempera.core.capture_input import CaptureInput
from tempera.core.memory import Memory
from tempera.core.retrieve import retrieve

EPISODES = [
    "Fixed login redirect loop by sanitizing the return URL in the auth middleware",
    "Set NODE_ENV=production in the Dockerfile so dev dependencies stop shipping",
    "Refactored the billing module into smaller invoice and payment services",
    "Resolved error E0502 by cloning the config before borrowing it mutably in main.rs",
    "Added keyset pagination to the orders API endpoint for large result sets",
    "Documented the deployment runbook for the Kubernetes cluster upgrade",
]
# ~530 word pieces about nothing stored: more than the model reads (512), so its question comes after the cut
PREAMBLE = (
    "Some background first, from the notes I keep about the allotment. The tomatoes went in late this year "
    "because the frost lingered into May, so the beans shaded them for most of June. Next season the beans move "
    "to the north bed, the squash gets the compost heap corner, and the herbs stay by the water butt. "
) * 8
QUESTION = (
    "Now the actual question. People keep getting bounced back to the sign-in page straight after they "
    "authenticate: the password is accepted, and instead of the page they wanted they see the sign-in form again, "
    "round and round, whenever they came from a deep link carrying a return address."
)


def _store(memory: Memory, tmp_path: Path) -> tuple[str, dict[str, str]]:
    repo = tmp_path / "work" / "webshop"
    repo.mkdir(parents=True)
    ids = {s: memory.capture(CaptureInput(summary=s, task_type="bugfix", project=str(repo))).id for s in EPISODES}
    return str(repo), ids


def test_the_end_of_a_long_prompt_reaches_its_episode(memory: Memory, tmp_path: Path) -> None:
    repo, ids = _store(memory, tmp_path)
    cfg = memory.config.retrieval.model_copy(update={"min_standing": 1.5})  # ~0.1 in MiniLM space
    pid = memory.store.projects.resolve(repo).id
    hits = retrieve(memory.store, PREAMBLE + QUESTION, project_id=pid, cfg=cfg, mode="vector")
    assert hits and hits[0].episode.id == ids[EPISODES[0]]
    # what the model reads of the prompt in one run (its start) is about none of them: the chunks did it
    assert memory.embedder is not None
    start = memory.embedder.embed_one(PREAMBLE + QUESTION)
    vectors = memory.embedder.embed(EPISODES)
    assert float(np.max(vectors @ start)) < 0.1


def test_a_prompt_within_the_window_is_embedded_in_one_run(memory: Memory) -> None:
    assert memory.embedder is not None
    prompt = QUESTION * 2  # ~150 word pieces
    assert memory.embedder._chunks(prompt) == [prompt]
    assert np.allclose(memory.embedder.embed_query(prompt), memory.embedder.embed_one(prompt))
    chunks = memory.embedder._chunks(PREAMBLE + QUESTION)
    assert len(chunks) == 3 and "".join(chunks).strip() == (PREAMBLE + QUESTION).strip()
