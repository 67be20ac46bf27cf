"""The steps after capture have one home (`transcripts/pipeline.py`) and one declared order: a step that reads
another's rows names it in `after`, and a list that runs it earlier is refused. Corrections must be logged
(`self_improve`) and the turn's verdicts made (`learn`) before a logged correction turns those verdicts."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import tempera
from tempera.transcripts.pipeline import STEPS, ordered

# each step's entry point, and the modules that may call it: the pipeline, and the step's own body
STEP_CALLS = {
    "learn_from_capture": {"tempera.transcripts.pipeline"},
    "update_after_capture": {"tempera.transcripts.pipeline", "tempera.transcripts.detect"},
    "process_capture": {"tempera.transcripts.pipeline"},
    "process_capture_facts": {"tempera.transcripts.pipeline"},
    "link_session": {"tempera.transcripts.pipeline", "tempera.core.learning.outcomes"},
    "relink_later": {"tempera.transcripts.pipeline"},
    "apply_correction": {"tempera.transcripts.pipeline"},
}


def test_the_declared_order_holds() -> None:
    names = [s.name for s in STEPS]
    assert ordered(STEPS) == STEPS
    verdicts = next(s for s in STEPS if s.name == "correction_verdicts")
    assert {"self_improve", "learn"} <= set(verdicts.after)
    assert all(names.index(n) < names.index(s.name) for s in STEPS for n in s.after)


def test_a_step_before_what_it_reads_is_refused() -> None:
    by_name = {s.name: s for s in STEPS}
    swapped = [by_name["self_improve"], by_name["correction_verdicts"], by_name["learn"]]
    with pytest.raises(ValueError, match="'correction_verdicts' runs before learn"):
        ordered(swapped)
    reads_links = replace(by_name["learn"], after=("outcome_links",))  # an explicit capture would run it alone
    with pytest.raises(ValueError, match="without a transcript"):
        ordered([by_name["outcome_links"], reads_links])


def test_only_the_pipeline_runs_the_steps() -> None:
    root = Path(tempera.__file__).parent
    callers: dict[str, set[str]] = {name: set() for name in STEP_CALLS}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in callers:
                    callers[name].add(module)
    assert {n: sorted(m - STEP_CALLS[n]) for n, m in callers.items() if m - STEP_CALLS[n]} == {}
