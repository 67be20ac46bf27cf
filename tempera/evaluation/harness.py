"""Run graded queries through retrieval; load a shipped corpus into a scratch database; keep baselines."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any

from tempera.core.capture_input import CaptureInput
from tempera.core.errors import InvalidInput
from tempera.core.memory import Memory
from tempera.core.retrieve import retrieve
from tempera.evaluation.metrics import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank

CORPUS_NAMESPACE = uuid.UUID("5d1f0c3e-7a4b-4c1e-9a57-7e3a0c0e6d21")


def corpus_uuid(slug: str) -> str:
    """Stable episode id for a corpus slug, so fixtures can name episodes by slug."""
    try:
        return str(uuid.UUID(slug))
    except ValueError:
        return str(uuid.uuid5(CORPUS_NAMESPACE, slug))


@dataclass
class Query:
    id: str
    query: str
    grades: dict[str, int]
    project: str | None = None
    tags: list[str] = field(default_factory=list)


def _jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
            if not isinstance(doc, dict):
                raise InvalidInput(f"{path}:{n}: expected a JSON object")
            yield n, doc


def load_fixture(path: Path) -> list[Query]:
    out = []
    for n, d in _jsonl(path):
        if not d.get("query") or not isinstance(d.get("relevant"), list):
            raise InvalidInput(f"{path}:{n}: needs `query` and a `relevant` list of {{id, grade}}")
        grades = {corpus_uuid(str(r["id"])): int(r.get("grade", 1)) for r in d["relevant"]}
        out.append(
            Query(
                id=str(d.get("id", n)),
                query=d["query"],
                grades=grades,
                project=d.get("project"),
                tags=list(d.get("tags", [])),
            )
        )
    return out


def load_corpus(mem: Memory, path: Path) -> int:
    """Capture every corpus line (a tempera_capture object plus a slug `id`) with its stable id."""
    episodes = []
    for n, d in _jsonl(path):
        slug = d.pop("id", None)
        if not slug:
            raise InvalidInput(f"{path}:{n}: corpus lines need an `id`")
        item = CaptureInput.model_validate(d)
        ref = mem.store.projects.resolve(item.project, create=True)
        ep = item.to_episode(ref, max_summary_chars=mem.config.capture.max_summary_chars)
        ep.id = corpus_uuid(str(slug))
        episodes.append(ep)
    for start in range(0, len(episodes), 256):
        mem.store.add_many(episodes[start : start + 256])
    return len(episodes)


def evaluate(mem: Memory, queries: list[Query], *, mode: str, k: int) -> dict[str, Any]:
    """Per-query and aggregate P@k, R@k, MRR, nDCG@k, overall and per tag. Retrieval is not logged as use."""
    rows = []
    for q in queries:
        ref = mem.store.projects.resolve(q.project)
        hits = retrieve(
            mem.store,
            q.query,
            project_id=ref.id,
            cfg=mem.config.retrieval,
            limit=max(k, 10),
            mode=mode,
            cross_project="cross-project" in q.tags,
        )
        ranked = [h.episode.id for h in hits]
        rows.append(
            {
                "id": q.id,
                "tags": q.tags,
                "p": precision_at_k(ranked, q.grades, k),
                "r": recall_at_k(ranked, q.grades, k),
                "mrr": reciprocal_rank(ranked, q.grades),
                "ndcg": ndcg_at_k(ranked, q.grades, k),
            }
        )
    by_tag: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        for t in r["tags"] or ["untagged"]:
            by_tag[t].append(r)
    return {
        "mode": mode,
        "k": k,
        "queries": len(rows),
        "overall": _aggregate(rows, k),
        "by_tag": {t: _aggregate(rs, k) for t, rs in sorted(by_tag.items())},
        "per_query": rows,
    }


def _aggregate(rows: list[dict[str, Any]], k: int) -> dict[str, float]:
    if not rows:
        return {}
    return {
        f"P@{k}": mean(r["p"] for r in rows),
        f"R@{k}": mean(r["r"] for r in rows),
        "MRR": mean(r["mrr"] for r in rows),
        f"nDCG@{k}": mean(r["ndcg"] for r in rows),
        "n": len(rows),
    }


def compare(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float]:
    """Metric deltas (current - baseline) of the overall figures."""
    return {
        m: current["overall"][m] - baseline["overall"].get(m, 0.0)
        for m in current["overall"]
        if m != "n" and m in baseline.get("overall", {})
    }
