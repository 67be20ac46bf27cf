"""What the facts channel would show on a project's real prompts: replay its sessions in time order; before each
prompt, ask the facts channel for the facts it names (`facts/promptfacts.py`, the session's own repeats left out,
a fact found by words alone held back as `inject/injectlog.py` `worn_facts` says, its lines logged as the hook
logs them), then store the turn's stances (`facts/turnfacts.py` `extract_turn_facts`) as capture would, in one
project. Prints, per project, how many prompts got a fact, how many lines, and the lines shown most often.

Run: python evals/fact_replay.py [--projects entire-cli,cipher-box] [--show]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from collections import Counter
from pathlib import Path

from tempera.core.memory import Memory
from tempera.facts import FactStore
from tempera.facts.promptfacts import prompt_facts
from tempera.facts.turnfacts import extract_turn_facts
from tempera.inject import injectlog
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import segment_turns

DATA = Path("/work/shared/data/transcripts")
PROJECT = "0123456789abcdef"  # one project for all of a data set's sessions


def replay(project: str, *, show: bool) -> None:
    sessions = sorted(
        csv.DictReader(open(DATA / project / "sessions.tsv", encoding="utf-8"), delimiter="\t"),
        key=lambda r: r["first_ts"],
    )
    prompts, with_fact, shown = 0, 0, Counter[str]()
    with tempfile.TemporaryDirectory() as tmp, Memory(db_path=Path(tmp) / "t.db", use_model=False) as mem:
        store, key = FactStore(mem.db), PROJECT[:8]
        for row in sessions:
            given: set[str] = set()
            for turn in segment_turns(read_transcript(DATA / project / "sessions" / f"{row['session_id']}.jsonl")):
                if turn.kind == "prompt" and turn.prompt.strip():
                    prompts += 1
                    found = prompt_facts(mem, turn.prompt, project_id=PROJECT, now=turn.started_at)
                    worn = injectlog.worn_facts(mem.db.conn, PROJECT)
                    lines = [f.text for f in found if f.text not in given and (f.named or f.text not in worn)]
                    injectlog.record(
                        mem.db.conn,
                        session_id=row["session_id"],
                        project_id=PROJECT,
                        event="UserPromptSubmit",
                        prompt=turn.prompt,
                        hits=[],
                        facts=lines,
                    )
                    given |= set(lines)
                    shown.update(lines)
                    with_fact += bool(lines)
                    if lines and show:
                        print("  prompt:", " ".join(turn.prompt.split())[:160], "=>", lines)
                for c in extract_turn_facts(turn):
                    e = f":{c.kind}/{c.slug}.{key}"
                    facts = [(e, ":description", c.description), (e, ":project", PROJECT)]
                    store.transact(facts, reason="replay", valid_from=turn.started_at or turn.ended_at)
    print(
        f"{project}: {prompts} prompts, {with_fact} with a fact, {sum(shown.values())} fact lines, "
        f"{len(shown)} distinct; most shown: {shown.most_common(3)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--projects", default="entire-cli,cipher-box")
    ap.add_argument("--show", action="store_true", help="print each prompt that got a fact, with its lines")
    args = ap.parse_args()
    for project in args.projects.split(","):
        replay(project, show=args.show)


if __name__ == "__main__":
    main()
