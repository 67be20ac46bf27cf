"""Ranked-retrieval metrics over graded relevance (grade 0 = not relevant)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def precision_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    return sum(1 for r in ranked[:k] if grades.get(r, 0) > 0) / k


def recall_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    relevant = [g for g in grades.values() if g > 0]
    if not relevant:
        return 0.0
    return sum(1 for r in ranked[:k] if grades.get(r, 0) > 0) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], grades: Mapping[str, int]) -> float:
    for i, r in enumerate(ranked, 1):
        if grades.get(r, 0) > 0:
            return 1.0 / i
    return 0.0


def ndcg_at_k(ranked: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    """nDCG with gain 2^grade - 1 and log2 discount."""

    def dcg(gs: Sequence[int]) -> float:
        return sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(gs, 1))

    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    return dcg([grades.get(r, 0) for r in ranked[:k]]) / ideal if ideal else 0.0


def recall_any(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant & set(ranked[:k]) else 0.0


def recall_all(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant and relevant <= set(ranked[:k]) else 0.0
