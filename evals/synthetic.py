"""Synthetic episodes at scale for benchmarks: realistic-looking text from a coding vocabulary, written in bulk.

Vectors are not computed per episode (10k embeddings would dominate a benchmark's setup): each is the real
embedding of the episode's subject plus noise, so a prompt about a subject is as near to its episodes as real
text would be, and the injection floor (cosine) passes or fails as it would on real memory."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta, timezone

import numpy as np

from tempera.core.episodes import EpisodeStore
from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, Intent, Outcome
from tempera.core.project import ProjectRef

SUBJECTS = [
    "login redirect",
    "session cookie",
    "postgres deadlock",
    "docker build cache",
    "kafka consumer lag",
    "react useEffect loop",
    "rust borrow checker",
    "tokio runtime",
    "terraform state lock",
    "helm chart",
    "pytest fixture",
    "celery retry",
    "stripe webhook",
    "jwt expiry",
    "s3 presigned url",
    "redis eviction",
    "graphql resolver",
    "nginx timeout",
    "ci cache",
    "pandas merge",
    "numpy dtype",
    "go goroutine leak",
    "kotlin coroutine",
    "swift optional",
    "webpack chunk",
    "vite hmr",
    "django migration",
    "fastapi dependency",
]
VERBS = ["fixed", "refactored", "debugged", "documented", "added tests for", "investigated", "optimised", "set up"]
HOW = [
    "by adding a retry with backoff",
    "by pinning the dependency",
    "by moving the call out of the loop",
    "by validating input at the boundary",
    "by increasing the timeout",
    "by adding an index",
    "by splitting the module",
    "by caching the result",
    "with a feature flag",
    "by reverting the change",
]
TOKENS = [
    "E0502",
    "TS2345",
    "ECONNREFUSED",
    "NODE_ENV",
    "DATABASE_URL",
    "RUST_LOG",
    "HTTP 429",
    "SQLSTATE 40001",
    "OOMKilled",
    "exit code 137",
    "get_user_by_id",
    "UserSerializer",
    "src/auth/middleware.py",
]


def episode(rnd: random.Random, project: ProjectRef, when: datetime) -> Episode:
    subject = rnd.choice(SUBJECTS)
    summary = (
        f"{rnd.choice(VERBS).capitalize()} the {subject} problem {rnd.choice(HOW)}; "
        f"saw {rnd.choice(TOKENS)} in {rnd.choice(['staging', 'ci', 'prod', 'local'])} "
        f"#{rnd.randint(1, 10**6)}"
    )
    files = [f"src/{subject.split()[0]}/{rnd.choice(['core', 'api', 'util'])}.py"]
    return Episode(
        project_id=project.id,
        project_name=project.name,
        project_path=project.path,
        session_id=str(uuid.UUID(int=rnd.getrandbits(128))),
        summary=summary,
        created_at=when,
        updated_at=when,
        intent=Intent(raw_prompt=summary, extracted=summary, task_type=rnd.choice(["bugfix", "feature"])),
        context=Context(files_modified=files),
        outcome=Outcome(status="success"),
    )


def populate(
    mem: Memory, n: int, *, projects: int = 5, seed: int = 7, refs: list[ProjectRef] | None = None
) -> list[ProjectRef]:
    """Add n episodes over `projects` projects (keyword index through the store, vectors in bulk, of the model's
    dimension: a benchmark runs with whichever model the config resolves, `embedding.model_path` included)."""
    rnd = random.Random(seed)
    refs = refs or [ProjectRef(id=f"{i:016x}", name=f"bench-{i}", path=f"/bench/{i}") for i in range(projects)]
    projects = len(refs)
    start = datetime.now(timezone.utc) - timedelta(days=365)
    plain = EpisodeStore(mem.db, None)  # rows + FTS; vectors are written below without the model
    chunk = 2000
    for lo in range(0, n, chunk):
        eps = [
            episode(rnd, refs[i % projects], start + timedelta(minutes=5 * i)) for i in range(lo, min(n, lo + chunk))
        ]
        plain.add_many(eps)
    assert mem.embedder is not None, "benchmarks need the offline model (pip install '.[offline]')"
    with mem.db.transaction():
        mem.store.vectors.ensure_table()
    rows = mem.db.query(
        "SELECT rowid, project_id, summary FROM episodes WHERE rowid NOT IN (SELECT rowid FROM episode_vec)"
    )
    gen = np.random.default_rng(seed)
    dim = mem.embedder.spec.dim
    subject_vecs = dict(zip(SUBJECTS, mem.embedder.embed(SUBJECTS)))
    for lo in range(0, len(rows), 5000):
        part = rows[lo : lo + 5000]
        noise = gen.standard_normal((len(part), dim)).astype(np.float32) * (0.8 / np.sqrt(dim))
        vecs = np.stack([subject_vecs[_subject(summary)] for _, _, summary in part]) + noise
        vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
        with mem.db.transaction():
            mem.db.conn.executemany(
                "INSERT INTO episode_vec(rowid, embedding, project_id, transferable) VALUES (?, ?, ?, 0)",
                [(r, v.tobytes(), p) for (r, p, _), v in zip(part, vecs)],
            )
    with mem.db.transaction():
        mem.store.vectors.rebuilt()  # written around the store: in-memory copies reload
    return refs


def _subject(summary: str) -> str:
    return summary.split(" the ", 1)[1].split(" problem", 1)[0]


def queries(n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    return [
        f"{rnd.choice(SUBJECTS)} {rnd.choice(['keeps failing', 'is slow', 'broke after deploy', 'error'])} "
        f"{rnd.choice(TOKENS)}"
        for _ in range(n)
    ]
