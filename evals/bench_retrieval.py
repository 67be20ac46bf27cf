"""Retrieval latency at scale and capture throughput, with same-run baselines (these machines are noisy).

    python evals/bench_retrieval.py [--sizes 10000,100000] [--queries 100]

For each size: median and p95 of 100 queries per mode inside one process with a warm model, next to the
baseline of a bare FTS5 MATCH and a bare vec0 KNN on the same database, then vector and hybrid again with the
daemon's in-memory vectors (vecindex.py). Then `tempera capture` throughput:
episodes per second through the real CLI (one process, JSON lines on stdin) and one-episode CLI latency.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tempera.daemon  # noqa: E402,F401  (one BLAS thread, as the daemon runs: before numpy is imported)
from tempera.core import paths  # noqa: E402

from synthetic import populate, queries  # noqa: E402

from tempera.core import textsearch  # noqa: E402
from tempera.core.config import load_config  # noqa: E402
from tempera.core.memory import Memory  # noqa: E402
from tempera.core.retrieve import retrieve  # noqa: E402
from tempera.core.vecindex import VectorCache  # noqa: E402


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed(fn, items) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for it in items:
        t = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t) * 1000)
    return out


def bench_size(n: int, nq: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as d:
        os.environ["TEMPERA_DATA_DIR"] = d
        mem = Memory(load_config(), Path(d) / paths.DB_NAME)
        t = time.perf_counter()
        refs = populate(mem, n)
        load_s = time.perf_counter() - t
        qs = queries(nq)
        mem.embedder.embed_one("warm")  # type: ignore[union-attr]
        pid = refs[0].id
        rows = []
        fts = timed(
            lambda q: mem.db.query(
                "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY bm25(episodes_fts) LIMIT 50",
                (textsearch.fts_query(textsearch.query_terms(q)),),
            ),
            qs,
        )
        qv = {q: mem.embedder.embed_one(q).tobytes() for q in qs}  # type: ignore[union-attr]
        knn = timed(
            lambda q: mem.db.query(
                "SELECT rowid FROM episode_vec WHERE embedding MATCH ? AND k = 50 AND project_id = ?", (qv[q], pid)
            ),
            qs,
        )
        embed = timed(lambda q: mem.embedder.embed_one(q), qs)  # type: ignore[union-attr]
        for name, xs in (
            ("baseline: bare FTS5 MATCH", fts),
            ("baseline: bare vec0 KNN (project)", knn),
            ("baseline: embed query", embed),
        ):
            rows.append({"episodes": n, "what": name, "median_ms": statistics.median(xs), "p95_ms": pct(xs, 95)})
        for mode in ("keyword", "vector", "hybrid"):
            xs = timed(
                lambda q: retrieve(mem.store, q, project_id=pid, cfg=mem.config.retrieval, limit=5, mode=mode), qs
            )
            rows.append(
                {"episodes": n, "what": f"retrieve {mode}", "median_ms": statistics.median(xs), "p95_ms": pct(xs, 95)}
            )
        mem.store.vectors.cache = VectorCache()  # as the daemon holds it: the first query loads the project
        retrieve(mem.store, qs[0], project_id=pid, cfg=mem.config.retrieval, limit=5, mode="hybrid")
        for mode in ("vector", "hybrid"):
            xs = timed(
                lambda q: retrieve(mem.store, q, project_id=pid, cfg=mem.config.retrieval, limit=5, mode=mode), qs
            )
            rows.append(
                {
                    "episodes": n,
                    "what": f"retrieve {mode}, in-memory vectors",
                    "median_ms": statistics.median(xs),
                    "p95_ms": pct(xs, 95),
                }
            )
        rows.append({"episodes": n, "what": "bulk load (s)", "median_ms": load_s * 1000, "p95_ms": float("nan")})
        mem.close()
        return rows


def bench_capture(n: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "TEMPERA_DATA_DIR": d}
        lines = "\n".join(
            json.dumps(
                {
                    "summary": f"Fixed flaky test {i} by seeding the RNG in conftest.py",
                    "task_type": "test",
                    "project": "bench",
                }
            )
            for i in range(n)
        )
        cli = [sys.executable, "-m", "tempera.cli"]
        subprocess.run([*cli, "init"], env=env, capture_output=True, check=True)
        t = time.perf_counter()
        subprocess.run([*cli, "capture"], input=lines, text=True, env=env, capture_output=True, check=True)
        batch_s = time.perf_counter() - t
        singles = []
        for i in range(10):
            t = time.perf_counter()
            subprocess.run(
                [*cli, "capture", "-s", f"single capture {i}", "--project", "bench"],
                env=env,
                capture_output=True,
                check=True,
            )
            singles.append((time.perf_counter() - t) * 1000)
        floor = []
        for _ in range(10):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
            floor.append((time.perf_counter() - t) * 1000)
    return [
        {"what": f"capture batch via stdin ({n} episodes)", "episodes_per_s": n / batch_s},
        {
            "what": "capture one episode (new process, model load)",
            "median_ms": statistics.median(singles),
            "p95_ms": pct(singles, 95),
        },
        {"what": "baseline: python -c pass", "median_ms": statistics.median(floor), "p95_ms": pct(floor, 95)},
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--capture", type=int, default=500, help="episodes in the capture throughput run")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [r for n in a.sizes.split(",") for r in bench_size(int(n), a.queries)]
    cap = bench_capture(a.capture)
    if a.json:
        print(json.dumps({"retrieval": rows, "capture": cap}, indent=2))
        return
    print(f"{'episodes':>9}  {'what':<44}{'median ms':>10}{'p95 ms':>9}")
    for r in rows:
        print(f"{r['episodes']:>9}  {r['what']:<44}{r['median_ms']:>10.2f}{r['p95_ms']:>9.2f}")
    for r in cap:
        if "episodes_per_s" in r:
            print(f"{r['what']}: {r['episodes_per_s']:.0f} episodes/s")
        else:
            print(f"{r['what']}: median {r['median_ms']:.0f} ms, p95 {r['p95_ms']:.0f} ms")


if __name__ == "__main__":
    main()
