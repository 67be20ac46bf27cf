"""Another embedding model without another download: the real offline model seen through a monotone map, for the
tests that a decision drawn in standings (core/standing.py) is the same on every model's cosine scale."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tempera.core.capture_input import CaptureInput
from tempera.core.embed import Embedder, ModelSpec
from tempera.core.episodes import EpisodeStore
from tempera.core.memory import Memory


class Shifted(Embedder):
    """Another model: `inner`'s vectors with a constant dimension appended, so every cosine is 0.5 + 0.5 x inner's."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(ModelSpec(inner.spec.name + "+shifted", inner.spec.dim + 1, "model_path", None), inner._config)
        self.inner = inner

    @staticmethod
    def _shift(vectors: np.ndarray) -> np.ndarray:
        v = np.atleast_2d(vectors)
        return (np.hstack([v, np.ones((len(v), 1), dtype=np.float32)]) / np.sqrt(2)).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._shift(self.inner.embed(texts))

    def embed_one(self, text: str) -> np.ndarray:
        return self._shift(self.inner.embed_one(text))[0]

    def embed_query(self, text: str) -> np.ndarray:
        return self._shift(self.inner.embed_query(text))[0]


def shifted_memory(tmp_path: Path, inner: Embedder, root: Path, episodes: list[tuple[str, list[str]]]) -> Memory:
    """A second database of `episodes` (summary, files modified) under `root`, embedded by the shifted model."""
    mem = Memory(db_path=tmp_path / "shifted.db", use_model=False)
    mem.embedder = Shifted(inner)
    mem.store = EpisodeStore(mem.db, mem.embedder)
    for summary, files in episodes:
        mem.capture(CaptureInput(summary=summary, files_modified=files, project=str(root)))
    return mem
