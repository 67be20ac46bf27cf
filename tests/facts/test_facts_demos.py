"""Every minigraf demo script runs, and every query's answer is what its `# Expected:` comment states.

Origin of the scripts: project-minigraf/minigraf @ 5450e945 : demos/*.txt (see tests/data/README.md).
Answers are compared as sets: Tempera returns sets, so the :with demo's "two rows" ["eng" 50] ["eng" 50]
is the one distinct row ["eng" 50].

A few comments cannot be taken literally; each exception below says why. Two kinds:
- the demo tells the reader to adjust an :as-of number to the transaction counter (rules take no number);
- the comment disagrees with what the script itself implies, and minigraf 2.0.11 gives our answer too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tempera.facts import FactStore, Keyword, QueryResult
from tempera.facts.parser import parse_value
from tests.conftest import DIALECT

K = Keyword


@dataclass
class Step:
    text: str
    comments: list[str] = field(default_factory=list)

    @property
    def expected(self) -> str | None:
        found = [c for c in self.comments if re.match(r"#\s*Expected\b", c)]
        return found[-1] if found else None


def script_steps(path: Path) -> list[Step]:
    """Split a demo script into commands, each with the comment lines just above it; stop at EXIT."""
    steps: list[Step] = []
    comments: list[str] = []
    buf: list[str] = []
    depth = 0
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if depth == 0:
            if stripped == "EXIT":
                break
            if not stripped or stripped.startswith("#"):
                if stripped:
                    comments.append(stripped)
                continue
        buf.append(line)
        depth += _depth_change(line)
        if depth == 0:
            steps.append(Step("\n".join(buf), comments))
            buf, comments = [], []
    return steps


def _depth_change(line: str) -> int:
    change, in_string, escaped = 0, False, False
    for ch in line:
        if in_string:
            escaped, in_string = (False, in_string) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "([{":
            change += 1
        elif ch in ")]}":
            change -= 1
    return change


def parse_expected(comment: str) -> set[tuple]:
    """`# Expected: ...` in the demos' few styles -> a set of rows."""
    text = re.sub(r"^#\s*Expected[^:]*:\s*", "", comment)
    if text.startswith("no results"):
        return set()
    if text.startswith("["):
        return {tuple(row) if isinstance(row, list) else (row,) for row in parse_value(text[: _balanced_end(text)])}
    text = re.split(r"\s+—\s+|\s+-\s+", re.sub(r"\([^)]*\)", "", text))[0]
    if '"' in text or ":" in text:
        return {(parse_value(tok),) for tok in re.findall(r'"[^"]*"|:[\w/\-?]+', text)}
    words = [w.strip() for w in text.split(",")]  # bare names are entities (B -> :b), anything else a string
    return {(K(w.lower()) if re.fullmatch(r"[A-Za-z][\w-]*", w) else w,) for w in words}


def _balanced_end(text: str) -> int:
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in "([{") - (ch in ")]}")
        if depth == 0:
            return i + 1
    return len(text)


# (script, query number counted from 1) -> what to do instead, and why
AS_OF = {
    ("demo_aggregation", 17): (
        ":as-of 8",
        ":as-of 9",
        "the demo says to use the counter of the first hire transact: tx 9",
    ),
    ("demo_recursive", 9): (
        ":as-of 9",
        ":as-of 5",
        "the demo says to use the counter of the alpha->beta transact: tx 5 (rules take no transaction number)",
    ),
    ("demo_disjunction", 10): (":as-of 1", ":as-of 10", "the :login event is the 10th transact of this script"),
    ("demo_disjunction", 11): (":as-of 2", ":as-of 11", "the :logout event is the 11th transact of this script"),
}
EXCEPTIONS = {
    ("demo_aggregation", 3): ({(3,)}, "one comment states the answers of queries 3 and 4"),
    ("demo_aggregation", 4): ({(2,)}, "one comment states the answers of queries 3 and 4"),
    ("demo_bitemporal", 5): ({("Alice", "Engineering"), ("Bob", "Design")}, 'pairs written as "a"/"b"'),
    ("demo_recursive", 3): ({(K("y"),), (K("z"),), (K("x"),)}, "written as 'Y, Z, and X itself'"),
    ("demo_recursive", 10): (
        {(K("hub-b"),)},
        "hub-b->hub-c has no :valid-from, so it is valid from its "
        "transaction (today), not in mid-2024; minigraf agrees",
    ),
    ("demo_negation", 11): (
        set(),
        "Alice's name was transacted without :valid-from, so it is not valid in 2025; minigraf agrees",
    ),
    ("demo_disjunction", 4): (
        {(K(x),) for x in ("p1", "p3", "u1", "u2")},
        ":u1 and :u2 from section 3 are active and not banned as well; minigraf agrees",
    ),
    ("demo_expr", 3): (
        {("Alice",), ("Carol",)},
        'the query is (!= ?name "Bob"), which Carol passes too; minigraf agrees',
    ),
    ("demo_expr", 9): (
        {(K("v1"), False), (K("v2"), True), (K("v3"), False)},
        "one row per entity: only :v2 holds an integer",
    ),
}
SCRIPTS = sorted(p.stem for p in (DIALECT / "demos").glob("*.txt"))


def run_script(store: FactStore, name: str) -> list[tuple[int, Step, QueryResult]]:
    answers = []
    number = 0
    for step in script_steps(DIALECT / "demos" / f"{name}.txt"):
        text = step.text
        if text.lstrip().startswith("(query"):
            number += 1
            if (name, number) in AS_OF:
                old, new, _why = AS_OF[(name, number)]
                assert old in text
                text = text.replace(old, new)
            answers.append((number, step, store.execute(text)))
        else:
            store.execute(text, reason=f"demo {name}")
    return answers


def test_demo_scripts_are_present() -> None:
    assert len(SCRIPTS) >= 8, f"minigraf demo scripts missing under {DIALECT / 'demos'}"


@pytest.mark.parametrize("name", SCRIPTS)
def test_demo_script(store: FactStore, name: str) -> None:
    checked = 0
    for number, step, result in run_script(store, name):
        if (name, number) in EXCEPTIONS:
            expected = EXCEPTIONS[(name, number)][0]
        elif step.expected is not None:
            expected = parse_expected(step.expected)
        else:
            continue
        assert set(result.rows) == expected, f"{name} query {number}: {step.text}\n{step.expected}"
        checked += 1
    minimum = {"demo_commands": 0, "tutorial_corestore_setup": 0}.get(name, 10)
    assert checked >= minimum


def test_every_exception_names_a_real_query(store: FactStore) -> None:
    counts = {
        name: sum(s.text.lstrip().startswith("(query") for s in script_steps(DIALECT / "demos" / f"{name}.txt"))
        for name in SCRIPTS
    }
    for name, number in [*EXCEPTIONS, *AS_OF]:
        assert 1 <= number <= counts[name]
