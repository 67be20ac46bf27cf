"""LoCoMo retrieval eval through the product's own paths: conversations become Claude Code transcripts, go in
through `tempera import`, and questions come back through batch retrieval (`tempera retrieve --queries`).

    python evals/locomo.py --data ../shared/data/locomo/locomo-dev5.json [--k 5,10,20]
                           [--modes keyword,vector,hybrid] [--json OUT]

Each conversation is one project (cwd /locomo/<sample_id>); each session one transcript, speaker A as the user
and speaker B as the assistant, timestamps from the session date, record uuids derived from `dia_id`. Every
message reads "<speaker name>: <text>" (questions name people; user/assistant roles alone would lose who said
what), and the baseline indexes exactly the same text. A session
that speaker B opens gets a one-line opening prompt carrying the session date (a transcript starts with a user
record). Retrieval units are the stored episodes (one per user turn); a hit covers the dia_ids of its records.
recall_any@k: some evidence turn is in the top k; recall_all@k: all are. Categories 1-4 (5 has no answer).
Questions are asked at the start of the conversation's last session (the batch's `now`): decay and time words
("in June", "last week") are relative to it, and episodes carry their session's date from the records' timestamps.
A plain BM25 (k1 1.2, b 0.75, lowercase \\w+ tokens, one index per conversation) over the same units, built from
the original utterance texts, is computed in this script as the baseline.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tempera.core.project import project_for_path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
NAMESPACE = uuid.UUID("6f1c9a52-3e0b-4c7d-9a58-2b1e4d7c0f11")
TEMPERA = [sys.executable, "-m", "tempera.cli"]


def record_uuid(sample: str, dia_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{sample}/{dia_id}"))


def session_start(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime (UTC)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def sessions(conversation: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]], str]]:
    keys = [k for k in conversation if re.fullmatch(r"session_\d+", k)]
    out = []
    for k in sorted(keys, key=lambda k: int(k.split("_")[1])):
        if conversation[k]:
            out.append((int(k.split("_")[1]), conversation[k], conversation.get(f"{k}_date_time", "")))
    return out


def asked_at(conversation: dict[str, Any]) -> datetime:
    """When the questions are asked: the start of the conversation's last session (what "in June" is relative to)."""
    return session_start(sessions(conversation)[-1][2])


def write_transcripts(sample: dict[str, Any], root: Path) -> tuple[str, dict[str, str], dict[str, str]]:
    """One JSONL per session; returns the project cwd, uuid -> dia_id and dia_id -> text."""
    sid, conv = sample["sample_id"], sample["conversation"]
    cwd = f"/locomo/{sid}"
    folder = root / sid
    folder.mkdir(parents=True, exist_ok=True)
    by_uuid, texts = {}, {}
    for number, turns, when in sessions(conv):
        session_id = str(uuid.uuid5(NAMESPACE, f"{sid}/session_{number}"))
        clock = session_start(when)
        parent: str | None = None
        lines = []

        def record(kind: str, text: str, rec_uuid: str) -> None:
            nonlocal parent, clock
            clock += timedelta(seconds=30)
            rec: dict[str, Any] = {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": cwd,
                "sessionId": session_id,
                "version": "2.1.197",
                "type": kind,
                "uuid": rec_uuid,
                "timestamp": clock.isoformat().replace("+00:00", "Z"),
            }
            if kind == "user":
                rec["message"] = {"role": "user", "content": text}
            else:
                rec["message"] = {
                    "id": "msg_" + rec_uuid.replace("-", "")[:24],
                    "type": "message",
                    "role": "assistant",
                    "model": "locomo",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                }
            lines.append(json.dumps(rec, ensure_ascii=False))
            parent = rec_uuid

        if turns[0]["speaker"] != conv["speaker_a"]:
            record("user", f"[{when}]", str(uuid.uuid5(NAMESPACE, f"{sid}/session_{number}/opening")))
        for t in turns:
            rec_uuid = record_uuid(sid, t["dia_id"])
            line = f"{t['speaker']}: {t['text']}"
            by_uuid[rec_uuid], texts[t["dia_id"]] = t["dia_id"], line
            record("user" if t["speaker"] == conv["speaker_a"] else "assistant", line, rec_uuid)
        (folder / f"{session_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return cwd, by_uuid, texts


def evidence_ids(item: dict[str, Any], known: set[str]) -> list[str]:
    """Split malformed evidence ("D8:6; D9:17") and drop ids that do not exist ("D:11:26")."""
    ids = [e.strip() for ev in item.get("evidence") or [] for e in re.split(r"[;, ]+", str(ev)) if e.strip()]
    return [e for e in dict.fromkeys(ids) if e in known]


def tempera(args: list[str], env: dict[str, str]) -> str:
    r = subprocess.run([*TEMPERA, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"tempera {' '.join(args[:2])} failed: {r.stderr.strip()}")
    return r.stdout


# -- the in-script BM25 baseline ---------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class BM25:
    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.docs, self.k1, self.b = [Counter(d) for d in docs], k1, b
        self.lengths = [len(d) for d in docs]
        self.avg = sum(self.lengths) / max(1, len(docs))
        df = Counter(t for d in self.docs for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: list[str]) -> list[int]:
        scores = []
        for i, doc in enumerate(self.docs):
            s = 0.0
            for t in set(query):
                tf = doc.get(t, 0)
                if tf:
                    s += (
                        self.idf[t]
                        * tf
                        * (self.k1 + 1)
                        / (tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg))
                    )
            scores.append(s)
        return [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i] > 0]


# -- scoring -----------------------------------------------------------------------------------------------------


def recall(ranked_units: list[set[str]], evidence: list[str], k: int) -> tuple[float, float]:
    covered = set().union(*ranked_units[:k]) if ranked_units[:k] else set()
    hit = [e in covered for e in evidence]
    return float(any(hit)), float(all(hit))


def summarize(rows: list[dict[str, Any]], ks: list[int]) -> dict[str, dict[str, dict[str, float]]]:
    """mode -> category -> metric -> mean."""
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["mode"], CATEGORIES[r["category"]])].append(r)
        groups[(r["mode"], "overall")].append(r)
    for (mode, cat), items in groups.items():
        out[mode][cat] = {"n": len(items)} | {
            f"recall_{kind}@{k}": round(sum(i[f"{kind}@{k}"] for i in items) / len(items), 4)
            for k in ks
            for kind in ("any", "all")
        }
    return dict(out)


def print_table(summary: dict[str, dict[str, dict[str, float]]], ks: list[int]) -> None:
    cols = [f"{kind}@{k}" for kind in ("any", "all") for k in ks]
    print(f"{'mode':<9}{'category':<13}{'n':>5} " + " ".join(f"{c:>8}" for c in cols))
    for mode in summary:
        for cat in [*CATEGORIES.values(), "overall"]:
            m = summary[mode].get(cat)
            if m:
                print(f"{mode:<9}{cat:<13}{m['n']:>5} " + " ".join(f"{m['recall_' + c]:>8.3f}" for c in cols))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--k", default="5,10,20")
    ap.add_argument("--modes", default="keyword,vector,hybrid")
    ap.add_argument("--json", type=Path, help="write the per-question rows and the summary here")
    ap.add_argument("--workdir", type=Path, help="keep transcripts and the data dir here (default: a temp dir)")
    a = ap.parse_args()
    ks = sorted({int(k) for k in a.k.split(",")})
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    samples = json.loads(a.data.read_text(encoding="utf-8"))
    work = a.workdir or Path(tempfile.mkdtemp(prefix="locomo-"))
    transcripts = work / "projects"
    convs = {s["sample_id"]: (s, *write_transcripts(s, transcripts)) for s in samples}

    timing = {}
    for label, extra in (("without embeddings", ["--no-embed"]), ("with embeddings", [])):
        env = {**os.environ, "TEMPERA_DATA_DIR": str(work / ("data-" + label.split()[0]))}
        started = time.perf_counter()
        totals = json.loads(tempera(["import", str(transcripts), "--json", *extra], env))
        timing[label] = {
            "turns": totals["turns"],
            "episodes": totals["episodes_added"],
            "seconds": round(time.perf_counter() - started, 2),
            "import_seconds": totals["seconds"],
            "turns_per_second": totals["turns_per_second"],
        }
    # `env` is now the data dir with embeddings: every mode is evaluated on it
    units: dict[str, list[tuple[str, set[str]]]] = {}  # sample -> [(episode id, dia_ids)]
    queries = []
    for sid, (sample, cwd, by_uuid, texts) in convs.items():
        pid = project_for_path(cwd).id
        listed = json.loads(tempera(["retrieve", "--all", "--project", pid, "--json"], env))
        units[sid] = [(e["id"], {by_uuid[u] for u in e["source"]["record_uuids"] if u in by_uuid}) for e in listed]
        for n, item in enumerate(sample["qa"]):
            ev = evidence_ids(item, set(texts))
            if item.get("category") in CATEGORIES and ev:
                queries.append(
                    {
                        "id": f"{sid}#{n}",
                        "query": item["question"],
                        "project": pid,
                        "sample": sid,
                        "category": item["category"],
                        "evidence": ev,
                        "now": asked_at(sample["conversation"]).isoformat(),
                    }
                )
    qfile = work / "queries.jsonl"
    qfile.write_text(
        "\n".join(json.dumps({k: q[k] for k in ("id", "query", "project", "now")}) for q in queries) + "\n"
    )

    rows = []
    for mode in modes:
        out = tempera(["retrieve", "--queries", str(qfile), "--json", "--limit", str(max(ks)), "--mode", mode], env)
        hits = {r["id"]: r["hits"] for r in map(json.loads, out.splitlines())}
        for q in queries:
            dia = dict(units[q["sample"]])
            ranked = [dia.get(h["id"], set()) for h in hits[q["id"]]]
            rows.append(_row(q, mode, ranked, ks))
    for sid, (_, _, _, texts) in convs.items():
        unit_list = units[sid]
        index = BM25([tokens(" ".join(texts[d] for d in sorted(ids))) for _, ids in unit_list])
        for q in (q for q in queries if q["sample"] == sid):
            ranked = [unit_list[i][1] for i in index.rank(tokens(q["query"]))]
            rows.append(_row(q, "bm25", ranked, ks))

    summary = summarize(rows, ks)
    print(
        f"LoCoMo {a.data.name}: {len(samples)} conversations, {len(queries)} questions (categories 1-4), "
        f"{sum(len(u) for u in units.values())} episodes"
    )
    for label, t in timing.items():
        print(
            f"import {label}: {t['turns']} turns in {t['import_seconds']} s = {t['turns_per_second']} turns/s "
            f"({t['seconds']} s with process start)"
        )
    print_table(summary, ks)
    if "hybrid" in summary and 10 in ks:
        h, b = summary["hybrid"]["overall"]["recall_any@10"], summary["bm25"]["overall"]["recall_any@10"]
        print(f"hybrid recall_any@10 {h:.3f} vs BM25 {b:.3f}: {h - b:+.3f} ({(h - b) / b * 100 if b else 0:+.1f}%)")
    if a.json:
        a.json.write_text(json.dumps({"summary": summary, "import": timing, "rows": rows}, indent=1))


def _row(q: dict[str, Any], mode: str, ranked: list[set[str]], ks: list[int]) -> dict[str, Any]:
    row: dict[str, Any] = {"id": q["id"], "mode": mode, "category": q["category"]}
    for k in ks:
        row[f"any@{k}"], row[f"all@{k}"] = recall(ranked, q["evidence"], k)
    return row


if __name__ == "__main__":
    main()
