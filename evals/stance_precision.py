"""Precision of the stances capture would store: run the real extraction over real sessions and score it on labels.

Capture hands each session's turns (`transcripts/turns.py` `segment_turns` over `transcripts/reader.py`
`read_transcript`, as `CaptureResult.session_turns` does) to `facts/turnfacts.py`; this script does the same with
`extract_turn_facts` and lists what it would store, per project. Labels live in
`evals/fixtures/stance_labels.jsonl` (one JSON object a line: project, session, text, label "good" or "bad"; good
= a well-formed, standing decision, constraint, preference or dependency a later session could use; bad = a
fragment, a hedge, error text or a passing remark). Precision is counted on the labelled stances that the
extraction still yields, so labelling the output of an older extraction and re-running shows what a change removed.

Run: python evals/stance_precision.py [--projects entire-cli,cipher-box] [--dump out.jsonl] [--unlabelled N]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tempera.facts.turnfacts import extract_turn_facts
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import segment_turns

DATA = Path("/work/shared/data/transcripts")
LABELS = Path(__file__).parent / "fixtures" / "stance_labels.jsonl"


def stances(project: str) -> list[dict[str, str]]:
    """Every stance the extraction yields on a project's sessions, one row each (project, session, kind, text)."""
    rows = []
    for path in sorted((DATA / project / "sessions").glob("*.jsonl")):
        for turn in segment_turns(read_transcript(path)):
            for c in extract_turn_facts(turn):
                rows.append({"project": project, "session": path.stem, "kind": c.kind, "text": c.description})
    return rows


def labels() -> dict[tuple[str, str], str]:
    """(project, text) -> "good" | "bad"."""
    if not LABELS.exists():
        return {}
    out = {}
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[(row["project"], row["text"])] = row["label"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default="entire-cli,cipher-box")
    ap.add_argument("--dump", type=Path, help="write every stance found (JSONL) to this file")
    ap.add_argument("--unlabelled", type=int, default=0, help="print a random sample of this many unlabelled stances")
    args = ap.parse_args()
    known = labels()
    dumped = []
    for project in args.projects.split(","):
        found = stances(project)
        dumped += found
        texts = {r["text"] for r in found}
        judged = [known[(project, t)] for t in texts if (project, t) in known]
        good = judged.count("good")
        precision = f"{good / len(judged):.3f}" if judged else "-"
        labelled_all = sum(1 for p, _ in known if p == project)
        print(
            f"{project}: {len(found)} stances ({len(texts)} distinct); labelled and still found {len(judged)} "
            f"of {labelled_all}, good {good}, precision {precision}"
        )
        rest = sorted(t for t in texts if (project, t) not in known)
        for text in random.Random(0).sample(rest, min(args.unlabelled, len(rest))):
            print("  ?", json.dumps(text))
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in dumped), encoding="utf-8")


if __name__ == "__main__":
    main()
