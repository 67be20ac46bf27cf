"""The similarity graph the learning passes walk: nearest neighbours from sqlite-vec KNN, within one project,
over live (not retired) episodes, cached for the length of one pass."""

from __future__ import annotations

from dataclasses import dataclass

from tempera.core.episodes import EpisodeStore
from tempera.core.learning.retire import RETIRED_SQL
from tempera.core.vecindex import VEC_TABLE


@dataclass(frozen=True)
class Node:
    rowid: int
    id: str
    project_id: str


def vectors_missing(store: EpisodeStore) -> str | None:
    """Why the graph cannot be built (no model, no sqlite-vec, a model mismatch), or None when it can."""
    status = store.vectors.status()
    if status.state == "ok":
        return None
    return status.detail or f"vector index is {status.state}"


class SimilarityGraph:
    def __init__(self, store: EpisodeStore, *, k: int, threshold: float, project_id: str | None = None):
        self.store = store
        self.k = k
        self.threshold = threshold
        sql = f"SELECT rowid, id, project_id FROM episodes WHERE id NOT IN ({RETIRED_SQL})"
        rows = store.db.query(sql + " AND project_id = ?", (project_id,)) if project_id else store.db.query(sql)
        self.nodes = {int(r[0]): Node(int(r[0]), r[1], r[2]) for r in rows}
        self.by_id = {n.id: n for n in self.nodes.values()}
        self._cache: dict[int, list[tuple[Node, float]]] = {}

    def neighbours(self, node: Node) -> list[tuple[Node, float]]:
        """Up to k live neighbours in node's project with cosine similarity >= threshold, most similar first."""
        if node.rowid not in self._cache:
            self._cache[node.rowid] = self._knn(node)
        return self._cache[node.rowid]

    def _knn(self, node: Node) -> list[tuple[Node, float]]:
        db = self.store.db
        blob = db.one(f"SELECT embedding FROM {VEC_TABLE} WHERE rowid = ?", (node.rowid,))
        if blob is None:
            return []
        found = db.query(
            f"SELECT rowid, distance FROM {VEC_TABLE} WHERE embedding MATCH ? AND k = ? AND project_id = ?",
            (blob[0], self.k + 1, node.project_id),
        )
        out = []
        for rowid, distance in found:
            other = self.nodes.get(int(rowid))
            similarity = 1.0 - float(distance)
            if other is not None and other.rowid != node.rowid and similarity >= self.threshold:
                out.append((other, similarity))
        return out
