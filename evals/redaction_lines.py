"""How often redaction fires on a project's real sessions, and on what: every work unit drafted as import drafts
it (`transcripts/draft.py`, redacted inside, no database), its text fields split into lines, and each placeholder
counted by kind. Real sessions hold few secrets, so most placeholders on them are false positives: read them.

    python evals/redaction_lines.py PROJECT [--data DIR] [--lines OUT.txt]

PROJECT is a folder of DIR (default `shared/data/transcripts/`): entire-cli, cipher-box. Printed: episodes, lines,
placeholders per 1,000 lines, and the count of each kind. `--lines` writes every line holding a placeholder (with
its episode id), to read; run it with an older checkout on PYTHONPATH and diff the files for a before → after.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from episode_lines import drafts
from real_sessions import SHARED

from tempera.core.models import OWN_FIELDS
from tempera.core.project import ProjectRef

PLACEHOLDER = re.compile(r"\[REDACTED:(\w+)\]")


def texts(value: Any) -> list[str]:
    """Every string inside an episode's fields but our own (ids, timestamps)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() if k not in OWN_FIELDS for t in texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in texts(v)]
    return []


def measure(sessions: Path, project: str) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    flagged: list[str] = []
    for path, _, ep in drafts(sessions, ProjectRef("0" * 16, project, f"/nonexistent/{project}")):
        lines = [ln for t in texts(ep.model_dump(mode="json")) for ln in t.splitlines() if ln.strip()]
        counts.update(episodes=1, lines=len(lines))
        for ln in lines:
            kinds = PLACEHOLDER.findall(ln)
            counts.update(f"kind:{k}" for k in kinds)
            counts["placeholders"] += len(kinds)
            if kinds:
                flagged.append(f"{path.stem[:8]} {ln}")
    return counts, flagged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "transcripts", help="folder holding PROJECT/")
    parser.add_argument("--lines", type=Path, help="write every line holding a placeholder here")
    args = parser.parse_args()
    counts, flagged = measure(args.data / args.project / "sessions", args.project)
    per_1000 = round(1000 * counts["placeholders"] / max(counts["lines"], 1), 2)
    kinds = {k[5:]: n for k, n in counts.most_common() if k.startswith("kind:")}
    report = {"episodes": counts["episodes"], "lines": counts["lines"], "placeholders": counts["placeholders"]}
    print(args.project, json.dumps({**report, "per_1000_lines": per_1000, "kinds": kinds}))
    if args.lines:
        args.lines.write_text("".join(f"{ln}\n" for ln in flagged), encoding="utf-8")


if __name__ == "__main__":
    main()
