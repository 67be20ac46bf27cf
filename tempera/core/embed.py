"""Embedding model resolution and loading (fastembed), without ever downloading on a path a user waits on.

Resolution order: `embedding.model_path` (a local ONNX directory) -> the configured fastembed model when it is
already in the cache -> the `offline` extra's all-MiniLM-L6-v2 (int8) -> none (keyword-only mode).
Downloads happen only in `tempera models pull`.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempera.core import offline_model
from tempera.core.config import Config
from tempera.core.errors import ModelUnavailable

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ModelSpec:
    name: str  # recorded in the database with the vectors it made
    dim: int
    source: str  # model_path | cache | offline-package
    path: Path | None  # a local directory, or None for a cached fastembed model


# How a batch runs. A batch pads to its longest text and episode texts vary from 30 to 250 tokens, so padding
# cost more than batching saved: 17 ms per episode text one at a time, 24 ms in length-sorted batches of 32, 41 ms
# in batches of 32 as they come. And one single-threaded run per core on its own share of the texts beats one run
# over both cores (ONNX Runtime's threads spin for a busy core): 18.8 ms per text against 55.5 (201 real episode
# texts, 2 cores, another process busy).
# Batching texts of one length would pad nothing (and gives the same vectors), but saves nothing either: 33 ms of
# CPU per text one at a time, 31-34 in batches of 2 to 16 (real episode texts, 2 busy cores).
# One session serves every thread: ONNX Runtime runs a session from several threads at once, each run on its
# caller's thread with one intra-op thread, and a session holds the weights as float32 (90 MB for the int8 offline
# model, `offline_model.folded`). A session per core and one for prompts held 3 copies in the daemon: 480 MB
# before its first prompt (issue #39).
EMBED_BATCH = 1
BATCH_THREADS = max(1, min(2, os.cpu_count() or 1))
# A query longer than the model's window is embedded in chunks and the chunk vectors averaged (`embed_query`).
# The window: 256 word pieces, all-MiniLM-L6-v2's trained sequence length (its tokenizer cuts a text at 512, so
# the rest of a long prompt is never read, and pieces past 256 were never trained on); two go to [CLS] and [SEP].
QUERY_WINDOW = 254
# At most 1,016 word pieces, about the 4,000 characters of prose the keyword side reads (textsearch.QUERY_CHARS):
# a chunk costs ~90 ms on a busy 2-core machine (a 9.6k-character prompt: 217 ms in one run cut at 512 pieces,
# 1,010 ms in 11 chunks), and the hook answers within inject.daemon_timeout_seconds (2 s) or falls back.
QUERY_MAX_CHUNKS = 4


def _cached_fastembed_dir(cache_dir: Path, model: str) -> Path | None:
    """The snapshot directory of a fastembed model already in the cache, found without any network; fastembed (0.4 s
    to import) is asked which folder is the model's only when the cache holds a downloaded model at all, so a
    process that opens memory with the offline model and never embeds does not import it."""
    if not any(cache_dir.glob("models--*/snapshots")):
        return None
    try:
        from fastembed import TextEmbedding
    except ImportError:
        return None
    desc = next((d for d in TextEmbedding._list_supported_models() if d.model.lower() == model.lower()), None)
    if desc is None or not desc.sources.hf:
        return None
    repo_dir = cache_dir / ("models--" + desc.sources.hf.replace("/", "--"))
    for snap in sorted((repo_dir / "snapshots").glob("*")) if repo_dir.exists() else []:
        if (snap / desc.model_file).exists():
            return snap
    return None


def resolve_model(config: Config) -> ModelSpec | None:
    emb = config.embedding
    if emb.model_path:
        p = Path(emb.model_path).expanduser()
        if not (p / "model.onnx").exists() and not list(p.glob("*.onnx")):
            return None
        return ModelSpec(name=f"local:{p.name}", dim=_dim_from_dir(p), source="model_path", path=p)
    cached = _cached_fastembed_dir(config.model_cache_dir(), emb.model)
    if cached is not None:
        return ModelSpec(
            name=emb.model, dim=384 if "small" in emb.model else _dim_of(emb.model), source="cache", path=None
        )
    if emb.use_offline_package and offline_model.weights_file() is not None:
        # in the model cache (shared by every data dir that uses it), so one process keeps one loaded model
        return ModelSpec(
            name=offline_model.NAME,
            dim=offline_model.DIM,
            source="offline-package",
            path=config.model_cache_dir() / offline_model.CACHE_DIR_NAME,
        )
    return None


def _dim_of(model: str) -> int:
    from fastembed import TextEmbedding

    for d in TextEmbedding._list_supported_models():
        if d.model.lower() == model.lower():
            assert d.dim is not None  # fastembed lists every dense model with its dimension
            return int(d.dim)
    return 384


def _dim_from_dir(p: Path) -> int:
    try:
        return int(json.loads((p / "config.json").read_text(encoding="utf-8")).get("hidden_size", 384))
    except (OSError, ValueError):
        return 384


class Embedder:
    """A loaded model; load once per process (the daemon keeps one warm) and reuse."""

    def __init__(self, spec: ModelSpec, config: Config):
        self.spec = spec
        self._config = config
        self._model: Any = None  # the one single-threaded session, loaded on first use
        self._lazy = threading.Lock()  # guards what is made on first use: the session, the `submit` thread
        self._batch_lock = threading.Lock()  # one batch at a time; a prompt's `embed_one` never takes it
        self._counter: Any = None  # the tokenizer that cuts a long query into chunks (`_word_pieces`)
        self._ahead: ThreadPoolExecutor | None = None  # the thread `submit` runs batches on, started on first use

    def _load(self, threads: int | None = None) -> Any:
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        spec = self.spec
        cache = str(self._config.model_cache_dir())
        if spec.source == "cache":
            return TextEmbedding(spec.name, cache_dir=cache, local_files_only=True, threads=threads)
        directory = spec.path
        assert directory is not None  # model_path and offline-package specs always name one
        if spec.source == "offline-package":
            directory = offline_model.folded(offline_model.assemble(directory))
        model_file = "model.onnx" if (directory / "model.onnx").exists() else sorted(directory.glob("*.onnx"))[0].name
        custom = f"tempera-local/{directory.name}"
        known = {d.model for d in TextEmbedding._list_supported_models()}
        if custom not in known:
            TextEmbedding.add_custom_model(
                model=custom,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf="tempera-local/none"),
                dim=spec.dim,
                model_file=model_file,
            )
        return TextEmbedding(
            custom, cache_dir=cache, specific_model_path=str(directory), local_files_only=True, threads=threads
        )

    def _session(self) -> Any:
        """The process's session, loaded once."""
        with self._lazy:
            if self._model is None:
                try:
                    self._model = self._load(1)
                except ModelUnavailable:
                    raise
                except Exception as exc:
                    raise ModelUnavailable(f"cannot load embedding model {self.spec.name}: {exc}") from exc
            return self._model

    def embed(self, texts: list[str]) -> "np.ndarray":
        """Vectors for a batch (captures, imports, reindex): one text per model run, a share of the texts per
        core (see EMBED_BATCH), in the order given."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.spec.dim), dtype=np.float32)
        items = [t if t.strip() else "(empty)" for t in texts]
        model = self._session()
        n = min(BATCH_THREADS, len(items))
        with self._batch_lock:
            if n == 1:
                vecs = list(model.embed(items, batch_size=EMBED_BATCH))
            else:
                with ThreadPoolExecutor(n) as pool:
                    shares = list(
                        pool.map(
                            lambda part: list(model.embed(part, batch_size=EMBED_BATCH)),
                            [items[i::n] for i in range(n)],
                        )
                    )
                vecs = [None] * len(items)
                for i, share in enumerate(shares):
                    vecs[i::n] = share
        return np.asarray(vecs, dtype=np.float32)

    def submit(self, texts: list[str]) -> "Future[np.ndarray]":
        """`embed(texts)` on a background thread, batches in the order submitted: the model runs release the
        interpreter lock, so a caller with other work (an import drafting the next transcript, storing and learning
        from the last) keeps one core busy with it while the vectors are made on the others."""
        with self._lazy:
            if self._ahead is None:
                self._ahead = ThreadPoolExecutor(1, thread_name_prefix="tempera-embed")
            return self._ahead.submit(self.embed, texts)

    def embed_one(self, text: str) -> "np.ndarray":
        """One query's vector, on the calling thread: a prompt never waits behind a capture's batch (it runs beside
        it on the same session), and one short text is faster on one thread than split over two (6.6 vs 8.5 ms
        here between retrievals)."""
        import numpy as np

        vec = next(iter(self._session().embed([text if text.strip() else "(empty)"])))
        return np.asarray(vec, dtype=np.float32)

    def warm(self) -> None:
        """Load what a prompt and a capture need before the first one arrives (the daemon's start): the session
        and the word-piece counter that cuts a long prompt, so no hook call pays for loading."""
        self.embed_one("warm up")
        self._word_pieces()

    def embed_query(self, text: str) -> "np.ndarray":
        """A prompt's vector: `embed_one`, or for a prompt longer than the model's window (a pasted plan, a log)
        the normalised mean of its chunks' vectors, so that its first QUERY_MAX_CHUNKS windows count and not only
        its start. A short prompt costs one model run, as before; only a long one pays a run per chunk."""
        import numpy as np

        chunks = self._chunks(text)
        if len(chunks) == 1:
            return self.embed_one(text)
        mean = np.mean([self.embed_one(c) for c in chunks], axis=0)
        return np.asarray(mean / (np.linalg.norm(mean) or 1.0), dtype=np.float32)

    def _chunks(self, text: str) -> list[str]:
        """The text cut at word-piece boundaries into at most QUERY_MAX_CHUNKS equal parts of at most
        QUERY_WINDOW word pieces (the whole text when it fits, or when the model's tokenizer is not reachable)."""
        if len(text) <= QUERY_WINDOW:  # a word piece covers at least one character
            return [text]
        counter = self._word_pieces()
        if counter is None:
            return [text]
        offsets = counter.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= QUERY_WINDOW:
            return [text]
        n = min(QUERY_MAX_CHUNKS, -(-len(offsets) // QUERY_WINDOW))
        size = -(-len(offsets) // n) if n < QUERY_MAX_CHUNKS else QUERY_WINDOW
        starts = [offsets[i][0] for i in range(0, min(len(offsets), n * size), size)]
        ends = [*starts[1:], offsets[min(len(offsets), n * size) - 1][1]]
        return [text[a:b] for a, b in zip(starts, ends)]

    def _word_pieces(self) -> Any:
        """The model's own tokenizer without truncation or padding, to count a text's word pieces."""
        if self._counter is None:
            model = self._session()
            tokenizer = getattr(getattr(model, "model", None), "tokenizer", None)
            if tokenizer is None:
                return None
            from tokenizers import Tokenizer

            counter = Tokenizer.from_str(tokenizer.to_str())
            counter.no_truncation()
            counter.no_padding()
            self._counter = counter
        return self._counter


_CACHE: dict[tuple[str, str], Embedder] = {}
_CACHE_LOCK = threading.Lock()  # the daemon's warm thread and its jobs thread ask at once: one embedder, not two


def get_embedder(config: Config) -> Embedder | None:
    """The process-wide embedder for this config, or None (keyword-only mode)."""
    spec = resolve_model(config)
    if spec is None:
        return None
    key = (spec.name, str(spec.path))
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = Embedder(spec, config)
        return _CACHE[key]


def pull_default(config: Config) -> ModelSpec:
    """Download the configured fastembed model into the cache (the only place that may use the network)."""
    from fastembed import TextEmbedding

    cache = config.model_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    try:
        TextEmbedding(config.embedding.model, cache_dir=str(cache))
    except Exception as exc:
        raise ModelUnavailable(f"download of {config.embedding.model} failed: {exc}") from exc
    spec = resolve_model(config)
    if spec is None or spec.source != "cache":
        raise ModelUnavailable(f"{config.embedding.model} is still not in {cache} after the download")
    return spec
