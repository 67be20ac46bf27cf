"""Precision of the brief's detectors (corrections, should-have-asked) on real sessions, against hand labels.

The detectors of `tempera/transcripts/detect.py` run over every transcript of a project under
`/work/shared/data/transcripts/<project>/sessions/`, on the turns capture reads (`read_transcript` then
`segment_turns`, as `CaptureResult.session_turns` does for `tempera import`): `detect_corrections` gives what the
mistakes log stores, `detect_questions` what the should-have-asked log stores. No data dir is touched.

    python evals/brief_precision.py dump entire-cli            # every finding with its context, as JSONL
    python evals/brief_precision.py score entire-cli cipher-box  # precision per detector against the labels

Labels live in `evals/fixtures/brief_labels.jsonl`, one line per finding key (`{"project", "detector", "key",
"label", "text", "why"}`); `label` is true when the finding is what its log claims: a correction is the user
telling the agent it got something wrong (not a new request, not "continue", not the user describing their own
setup); a should-have-asked is a case where the agent went ahead and the user then corrected something the agent
could have asked about (a question the agent did ask is none). One file holds the labels of findings made before
and after a change to the detectors (keys are stable), so `score` run with `PYTHONPATH` at either checkout gives
that checkout's precision; findings without a label are listed and counted apart.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tempera.transcripts.detect import CorrectionSeen, QuestionSeen, detect_corrections, detect_questions
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import Turn, segment_turns

DATA = Path("/work/shared/data/transcripts")
LABELS = Path(__file__).parent / "fixtures" / "brief_labels.jsonl"


def _tail(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else "…" + text[-n:]


def _context(turns: list[Turn], turn: Turn) -> dict[str, str]:
    """The corrected turn's request and the agent's last words in it, and the prompt that came next."""
    after = next((t for t in turns if t.index == turn.index + 1), None)
    return {
        "request": _tail(turn.prompt, 300),
        "agent_before": _tail(turn.final_text, 400),
        "next_prompt": (after.prompt[:400] if after else ""),
    }


def findings(project: str) -> Iterator[dict[str, Any]]:
    """Every correction and should-have-asked the detectors find in the project's sessions, with context."""
    for path in sorted((DATA / project / "sessions").glob("*.jsonl")):
        turns = segment_turns(read_transcript(path))
        corrections: list[CorrectionSeen] = detect_corrections(turns)
        questions: list[QuestionSeen] = detect_questions(turns, corrections)
        found: list[tuple[str, CorrectionSeen | QuestionSeen, dict[str, str]]] = [
            ("correction", c, {"category": c.category, "text": c.words[:400]}) for c in corrections
        ]
        found += [("should_have_asked", q, {"question": q.question, "text": q.answer[:400]}) for q in questions]
        for detector, seen, own in found:
            key = f"{path.stem}:{seen.key}"
            context = _context(turns, seen.turn)
            yield {"project": project, "detector": detector, "key": key, "kind": seen.kind, **own, **context}


def load_labels(path: Path = LABELS) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["key"]: r for r in rows}


def score(projects: list[str], labels: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per project and detector: findings, labelled, true, precision over the labelled ones, unlabelled keys."""
    report: dict[str, Any] = {}
    for project in projects:
        per: dict[str, dict[str, Any]] = {}
        for f in findings(project):
            d = per.setdefault(f["detector"], {"found": 0, "labelled": 0, "true": 0, "unlabelled": []})
            d["found"] += 1
            label = labels.get(f["key"])
            if label is None:
                d["unlabelled"].append(f["key"])
                continue
            d["labelled"] += 1
            d["true"] += bool(label["label"])
        for d in per.values():
            d["precision"] = round(d["true"] / d["labelled"], 3) if d["labelled"] else None
        report[project] = per
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump", help="print every finding of the projects with its context, as JSONL")
    dump.add_argument("projects", nargs="+")
    scored = sub.add_parser("score", help="precision per detector per project against the labels")
    scored.add_argument("projects", nargs="+")
    scored.add_argument("--labels", type=Path, default=LABELS)
    args = parser.parse_args(argv)
    if args.command == "dump":
        for project in args.projects:
            for f in findings(project):
                print(json.dumps(f, ensure_ascii=False))
        return 0
    print(json.dumps(score(args.projects, load_labels(args.labels)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
