"""Vectors for the dream's similarity work (pattern clusters, contradiction pairs).

Episodes use the vectors already stored with them; other texts (reflections, episodes without one) are embedded
with the same model. Without a usable model (keyword-only memory) TF-IDF over the search terms stands in, so
themes and pairs still form; its cosines run lower than an embedding's, which the report names as the space.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tempera.core import textsearch
from tempera.core.errors import ModelUnavailable
from tempera.core.vecindex import VEC_TABLE

if TYPE_CHECKING:
    from tempera.core.memory import Memory

TERM_CHARS = 4000
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
# words Tempera's own summaries and digests put into every item ("Changed ...", "Tests passed: ...", "2 turns")
OWN_WORDS = frozenset(
    "changed tests passed failed unresolved turns turn success failure partial unknown files "
    "touched errors resolved episode reflection".split()
)


@dataclass(frozen=True)
class TextItem:
    text: str
    episode_id: str | None = None  # its stored vector is used when there is one


def terms(text: str) -> list[str]:
    """The words of a text (first TERM_CHARS), lowercased, stopwords and short tokens dropped; plain words rather
    than the index's identifier expansions, because they also name themes."""
    return [w for w in _WORD.findall(text[:TERM_CHARS].lower()) if w not in textsearch.STOPWORDS and w not in OWN_WORDS]


def _normalised(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def tfidf(docs: Sequence[Sequence[str]]) -> np.ndarray:
    vocab: dict[str, int] = {}
    for doc in docs:
        for t in doc:
            vocab.setdefault(t, len(vocab))
    df = Counter(t for doc in docs for t in set(doc))
    matrix = np.zeros((len(docs), max(1, len(vocab))), dtype=np.float32)
    for row, doc in enumerate(docs):
        for t, n in Counter(doc).items():
            matrix[row, vocab[t]] = n * math.log(1 + len(docs) / df[t])
    return _normalised(matrix)


def _stored(mem: "Memory", episode_ids: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(episode_ids), 500):
        chunk = episode_ids[start : start + 500]
        rows = mem.db.query(
            f"SELECT e.id, v.embedding FROM episodes e JOIN {VEC_TABLE} v ON v.rowid = e.rowid "
            f"WHERE e.id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        out.update({r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows})
    return out


def item_vectors(mem: "Memory", items: Sequence[TextItem]) -> tuple[np.ndarray, str]:
    """L2-normalised rows, one per item, and the space they live in: 'embedding' or 'tfidf'."""
    status, embedder = mem.store.vectors.status(), mem.store.vectors.embedder
    if embedder is not None and status.usable and items:
        stored = _stored(mem, [i.episode_id for i in items if i.episode_id]) if status.state == "ok" else {}
        missing = [k for k, item in enumerate(items) if item.episode_id not in stored]
        try:
            fresh = dict(zip(missing, embedder.embed([items[k].text for k in missing]))) if missing else {}
        except ModelUnavailable:
            return tfidf([terms(i.text) for i in items]), "tfidf"
        rows = [fresh[k] if k in fresh else stored[str(i.episode_id)] for k, i in enumerate(items)]
        return _normalised(np.stack(rows).astype(np.float32)), "embedding"
    return tfidf([terms(i.text) for i in items]), "tfidf"


def distinctive_terms(group: Sequence[Sequence[str]], corpus: Sequence[Sequence[str]], k: int = 5) -> list[str]:
    """Terms far more common inside the group than outside it (share of the group's items that hold the term
    minus the share of the other items that do); a term must occur in at least two items of the group, so one
    long item cannot name the theme alone. `group` is a part of `corpus`."""
    df = Counter(t for doc in corpus for t in set(doc))
    in_group = Counter(t for doc in group for t in set(doc))
    outside = max(1, len(corpus) - len(group))
    scored = [(n / len(group) - (df[t] - n) / outside, n, t) for t, n in in_group.items() if n >= min(2, len(group))]
    return [t for _, _, t in sorted(scored, key=lambda x: (-x[0], -x[1], x[2]))[:k]]
