"""Agglomerative clustering with average linkage on cosine similarity (numpy only).

Average linkage keeps a theme coherent as a whole (single linkage would chain unrelated items through one
bridge); merging stops when the best pair of clusters is on average less similar than the threshold, so the
number of themes comes from the data; the threshold rises with the corpus' own mean similarity, so a theme
must stand out from its project. The similarity matrix is updated in place by the Lance-Williams rule:
O(n^2) memory and O(n^2) per merge, fine for the few hundred items of a lookback window (callers cap n).
"""

from __future__ import annotations

import numpy as np

MAX_ITEMS = 1500  # ~1 s of merging; callers keep the newest items when a window holds more
STANDOUT_SD = 0.5


def standout_threshold(sim: np.ndarray, floor: float) -> float:
    """`floor`, raised to half a standard deviation above the mean pairwise similarity: inside one project
    everything shares vocabulary (a small project's items may all score 0.7), and a theme is what stands out."""
    off = sim[~np.eye(len(sim), dtype=bool)]
    return max(floor, float(off.mean() + STANDOUT_SD * off.std())) if off.size else floor


def average_linkage(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Clusters (lists of row indices, each sorted) of L2-normalised row vectors, largest first. The threshold
    is a floor; see standout_threshold."""
    n = len(vectors)
    if n == 0:
        return []
    sim = (vectors @ vectors.T).astype(np.float64)
    threshold = standout_threshold(sim, threshold)
    np.fill_diagonal(sim, -np.inf)
    sizes = np.ones(n)
    members: list[list[int]] = [[i] for i in range(n)]
    while n > 1:
        i, j = divmod(int(np.argmax(sim)), n)
        if sim[i, j] < threshold:
            break
        merged = (sizes[i] * sim[i] + sizes[j] * sim[j]) / (sizes[i] + sizes[j])
        sim[i, :] = merged
        sim[:, i] = merged
        sim[i, i] = -np.inf
        sim[j, :] = -np.inf
        sim[:, j] = -np.inf
        sizes[i] += sizes[j]
        members[i] += members[j]
        members[j] = []
    return sorted((sorted(m) for m in members if m), key=lambda m: (-len(m), m[0]))
