"""One process, one loaded model: prompts and batches share one ONNX session (issue #39: a session per core and one
for prompts held three float32 copies of the weights in the daemon), and a prompt's vector is its batch vector."""

from __future__ import annotations

import gc
import threading

import numpy as np
import onnxruntime as ort

from tempera.core.config import load_config
from tempera.core.embed import Embedder, resolve_model


def sessions_alive() -> int:
    gc.collect()
    return sum(isinstance(o, ort.InferenceSession) for o in gc.get_objects())


def test_prompts_and_batches_run_on_one_session() -> None:
    config = load_config()
    spec = resolve_model(config)
    assert spec is not None
    before = sessions_alive()
    embedder = Embedder(spec, config)  # its own, not the process-wide one other tests have loaded
    embedder.warm()  # the daemon's start
    texts = [f"captured episode {i}: fixed the retry loop in the uploader" for i in range(20)]
    batch = embedder.submit(texts)  # an import's or a capture's batch ...
    prompt = embedder.embed_query("why does the uploader retry forever")  # ... and a prompt beside it
    assert batch.result().shape == (20, spec.dim) and prompt.shape == (spec.dim,)
    assert sessions_alive() - before == 1


def test_a_prompt_embeds_as_its_batch_beside_a_running_batch() -> None:
    config = load_config()
    spec = resolve_model(config)
    assert spec is not None
    embedder = Embedder(spec, config)
    texts = ["Fixed the login redirect loop", "", "asyncio.gather swallows cancellation " * 40]
    batch = embedder.embed(texts)
    running = threading.Thread(target=embedder.embed, args=[texts * 10])
    running.start()  # the same session runs another batch meanwhile
    one = np.stack([embedder.embed_one(t) for t in texts])
    running.join()
    assert one.shape == batch.shape == (3, spec.dim)
    assert np.array_equal(one, batch)
    assert float(one[0] @ one[2]) < 0.9  # different texts, different vectors: the check above can fail
