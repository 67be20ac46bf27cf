"""Facts for a prompt: the current stance on what the prompt names, the one valid at a date it asks about, facts
about named code entities, plain lines only, a slug index that follows new transactions, and only the prompt's
project's stances (and global ones)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from test_facts_turns import FEB_1, MAR_5, OTHER_SHOP, SHOP, capture, write_session

from tempera.core.memory import Memory
from tempera.facts import FactStore
from tempera.facts.entity_types import project_key
from tempera.facts.promptfacts import FactLine, prompt_moment, prompt_words
from tempera.facts.promptfacts import prompt_facts as fact_lines
from tempera.facts.values import ms_to_iso

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def prompt_facts(memory: Memory, prompt: str, **kwargs: Any) -> list[str]:
    """The lines `prompt_facts` gives, as the agent reads them."""
    return [f.text for f in fact_lines(memory, prompt, **kwargs)]


@pytest.fixture
def superseded(memory: Memory, tmp_path: Path) -> Memory:
    """MySQL forbidden on 1 February, allowed again on 5 March; Postgres chosen for the queue on 1 February."""
    capture(
        memory,
        write_session(
            tmp_path / "s.jsonl",
            [
                (FEB_1, "Never use MySQL. We'll use Postgres for the queue.", "Noted."),
                (MAR_5, "Use MySQL after all, the DBA insists.", "OK."),
            ],
        ),
    )
    return memory


def test_the_current_fact_about_a_named_entity(superseded: Memory) -> None:
    assert prompt_facts(superseded, "Can the reports go to mysql?", now=NOW) == [
        "Decision (since 2026-03-05): Use MySQL after all, the DBA insists."
    ]
    assert prompt_facts(superseded, "Move the queue workers to postgres", now=NOW) == [
        "Decision (since 2026-02-01): We'll use Postgres for the queue."
    ]


def test_a_dated_prompt_gets_the_fact_valid_then(superseded: Memory) -> None:
    assert prompt_facts(superseded, "What was the rule on MySQL before 2026-03-01?", now=NOW) == [
        "Before 2026-03-01: Constraint (2026-02-01 to 2026-03-05): Never use MySQL."
    ]
    assert prompt_facts(superseded, "mysql as of March 10, 2026", now=NOW) == [
        "As of 2026-03-10: Decision (since 2026-03-05): Use MySQL after all, the DBA insists."
    ]
    assert prompt_facts(superseded, "mysql before 2026-01-01", now=NOW) == []


def test_a_dated_prompt_naming_only_a_kind_gets_that_kind_valid_then(superseded: Memory) -> None:
    assert prompt_facts(superseded, "What did we decide on 2026-02-10?", now=NOW) == [
        "As of 2026-02-10: Decision (since 2026-02-01): We'll use Postgres for the queue."
    ]


def test_unrelated_prompts_get_nothing(superseded: Memory) -> None:
    assert prompt_facts(superseded, "Fix the flaky login test", now=NOW) == []
    assert prompt_facts(superseded, "please use it and do that now", now=NOW) == []


def test_code_entities_named_by_path_name_or_keyword(memory: Memory) -> None:
    store = FactStore(memory.db)
    store.transact(
        """[[:module/shop.auth :path "src/shop/auth.py"] [:module/shop.auth :depends-on :package/jwt]
                       [:function/shop.auth.login :name "login"] [:service/payment :name "Payments"]]""",
        reason="git ingest",
        valid_from="2026-01-02",
    )
    assert prompt_facts(memory, "Why does src/shop/auth.py import jwt?", now=NOW) == [
        ":module/shop.auth (since 2026-01-02): depends-on :package/jwt; path src/shop/auth.py."
    ]
    assert prompt_facts(memory, "The payment service is down", now=NOW) == [
        ":service/payment (since 2026-01-02): name Payments."
    ]
    assert prompt_facts(memory, "rename login", now=NOW) == [
        ":function/shop.auth.login (since 2026-01-02): name login."
    ]


def test_lines_are_limited_and_new_facts_show_up_at_once(memory: Memory) -> None:
    store = FactStore(memory.db)
    assert prompt_facts(memory, "redis cache", now=NOW) == []
    for i in range(5):
        store.transact(
            f'[[:decision/redis-cache-{i} :description "we use redis cache {i}"]]',
            reason="t",
            valid_from=f"2026-01-0{i + 1}",
        )
    lines = prompt_facts(memory, "redis cache", now=NOW, limit=3)
    assert lines == [f"Decision (since 2026-01-0{i}): we use redis cache {i - 1}." for i in (5, 4, 3)]
    assert prompt_facts(memory, "redis cache", now=NOW, limit=0) == []


@pytest.mark.parametrize(
    "prompt, at, label",
    [
        ("what did we use before 2026-03-01?", "2026-02-28T23:59:59.999Z", "before 2026-03-01"),
        ("as of 2026-01-15 which db", "2026-01-15T23:59:59.999Z", "as of 2026-01-15"),
        ("on March 3 2026 we had", "2026-03-03T23:59:59.999Z", "as of 2026-03-03"),
        ("on the 3rd of March, 2026", "2026-03-03T23:59:59.999Z", "as of 2026-03-03"),
        ("after 2026-02-01", "2026-02-02T00:00:00.000Z", "after 2026-02-01"),
        ("at 2026-02-01T10:30", "2026-02-01T10:30:00.000Z", "as of 2026-02-01 10:30"),
    ],
)
def test_prompt_moments(prompt: str, at: str, label: str) -> None:
    moment = prompt_moment(prompt)
    assert moment is not None and (ms_to_iso(moment.ms), moment.label) == (at, label)


@pytest.mark.parametrize("prompt", ["ERROR 2026-01-01 12:00 worker died", "on 2026-02-30", "in May"])
def test_no_moment_without_a_signal_and_a_real_date(prompt: str) -> None:
    assert prompt_moment(prompt) is None


def test_prompt_words_are_slug_parts_without_stop_words() -> None:
    assert prompt_words("Should we move the Queue to MySQL? See os.path and C++") == [
        "move",
        "queue",
        "mysql",
        "path",
        "cpp",
    ]


@pytest.fixture
def two_projects(memory: Memory, tmp_path: Path) -> Memory:
    """SHOP forbids MySQL on 1 February; OTHER_SHOP (the same name at another path) chooses it on 5 March; a
    hand-written global decision about MySQL replicas holds for both."""
    capture(memory, write_session(tmp_path / "a.jsonl", [(FEB_1, "Never use MySQL.", "Noted.")]))
    capture(
        memory,
        write_session(
            tmp_path / "b.jsonl",
            [(MAR_5, "Use MySQL, the DBA insists.", "OK.")],
            cwd=OTHER_SHOP.path,
            session_id="5f0e6a2c-1d3b-4c8e-9a7f-2b6d4e8c0a13",
        ),
    )
    FactStore(memory.db).transact(
        '[[:decision/mysql-replicas :description "MySQL replicas are read-only"]]',
        reason="by hand",
        valid_from="2026-01-10",
    )
    return memory


def test_a_project_gets_its_own_stances_and_the_global_ones(two_projects: Memory) -> None:
    shared = "Decision (since 2026-01-10): MySQL replicas are read-only."
    assert prompt_facts(two_projects, "Can the reports go to mysql?", project_id=SHOP.id, now=NOW) == [
        "Constraint (since 2026-02-01): Never use MySQL.",
        shared,
    ]
    assert prompt_facts(two_projects, "Can the reports go to mysql?", project_id=OTHER_SHOP.id, now=NOW) == [
        "Decision (since 2026-03-05): Use MySQL, the DBA insists.",
        shared,
    ]
    assert prompt_facts(two_projects, "Can the reports go to mysql?", project_id="unknown", now=NOW) == [shared]
    assert len(prompt_facts(two_projects, "Can the reports go to mysql?", now=NOW)) == 3  # no project: every one


def test_a_dated_kind_only_prompt_keeps_to_the_project(two_projects: Memory) -> None:
    asked = "What did we decide on 2026-03-10?"
    assert prompt_facts(two_projects, asked, project_id=SHOP.id, now=NOW) == [
        "As of 2026-03-10: Decision (since 2026-01-10): MySQL replicas are read-only."
    ]
    assert prompt_facts(two_projects, asked, project_id=OTHER_SHOP.id, now=NOW) == [
        "As of 2026-03-10: Decision (since 2026-03-05): Use MySQL, the DBA insists.",
        "As of 2026-03-10: Decision (since 2026-01-10): MySQL replicas are read-only.",
    ]


def test_the_project_key_is_no_subject_word(two_projects: Memory) -> None:
    key = project_key(SHOP.id)
    assert prompt_words(f"what about {key}") == [key]
    assert prompt_facts(two_projects, f"what about {key}", project_id=SHOP.id, now=NOW) == []
    assert prompt_facts(two_projects, f"what about {key}", now=NOW) == []


@pytest.mark.parametrize("module", ["tempera.facts.promptfacts", "tempera.facts.turnfacts"])
def test_the_fact_graph_loads_no_transcript_code(module: str) -> None:
    """promptfacts runs per prompt and turnfacts takes turns as plain values (its TurnText), so neither drags the
    transcript reader into a process: a fresh interpreter importing either has no `tempera.transcripts` module."""
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('tempera.transcripts')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# Stances as main stored them on real sessions (the review of injected text on entire-cli and a TypeScript
# project), written by hand here as global stances, so every project's prompts may see them.
STORED = [
    ("decision/go-git-s-in-memory-tree-operations", "The places where we use go-git's in-memory tree operations"),
    ("decision/kind-of-green-color", "I think we should use a kind of green color"),
    ("constraint/always-visible-once-plan-event-received", "always visible once plan event received):"),
    ("decision/existing", "keep existing)"),
    ("decision/keep-remediation-batch-size", "Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint)"),
    ("constraint/mysql", "Never use MySQL for the billing service"),
    ("decision/true-false", "let's use true/false and not on/off for the skip-push-sessions"),
]


@pytest.fixture
def full(memory: Memory) -> Memory:
    FactStore(memory.db).transact(
        "[" + " ".join(f'[:{e} :description "{d}"]' for e, d in STORED) + "]", reason="t", valid_from="2026-01-30"
    )
    return memory


def test_a_prompt_that_names_nothing_stored_gets_no_fact(full: Memory) -> None:
    """main matched `s` of "what's" to `go-git-s`: a word under three letters or a stop word names nothing."""
    assert fact_lines(full, "what's the capital of Australia?", now=NOW) == []
    assert fact_lines(full, "what is it for?", now=NOW) == []
    assert fact_lines(full, "the endpoint is slow", now=NOW) == []  # one plain word of a subject is no mention
    # two words of `true/false` far apart in a pasted log: no mention either (entire-cli showed it on such prompts)
    assert fact_lines(full, "TestSkip returned true, expected it to keep the old default of false", now=NOW) == []


def test_a_prompt_naming_an_identifier_or_a_name_gets_the_stance_as_named(full: Memory) -> None:
    keep = "Decision (since 2026-01-30): Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint)."
    assert fact_lines(full, "raise REMEDIATION_BATCH_SIZE to 200", now=NOW) == [FactLine(keep, True)]
    mysql = "Constraint (since 2026-01-30): Never use MySQL for the billing service."
    assert fact_lines(full, "can billing read from mysql?", now=NOW) == [FactLine(mysql, True)]
    # two words of its subject, no identifier: found, but not as named (the hook may hold it back, see warm.py)
    assert fact_lines(full, "how big is the remediation batch?", now=NOW) == [FactLine(keep, False)]
    flags = "Decision (since 2026-01-30): let's use true/false and not on/off for the skip-push-sessions."
    assert fact_lines(full, "make the telemetry flag true/false", now=NOW) == [FactLine(flags, False)]
