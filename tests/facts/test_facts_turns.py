"""Per-turn facts from real Claude Code transcripts: polarity and the whole phrase kept, valid time from the turn,
superseding that closes the older statement (still visible in the past), idempotent re-runs, no flip-flop, and
stances kept per project: one project's statement never closes another's."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tempera.core.forget import Selector, forget
from tempera.core.memory import Memory
from tempera.core.models import Episode
from tempera.core.project import project_for_path
from tempera.facts import FactStore, Keyword
from tempera.facts.audit import audit
from tempera.facts.entity_types import project_key
from tempera.facts.turnfacts import AGAINST, FOR, extract_turn_facts, process_capture_facts, store_turn_facts
from tempera.transcripts.capture import CaptureResult, capture_transcript
from tempera.transcripts.reader import read_transcript
from tempera.transcripts.turns import Turn, segment_turns

sys.path.append(str(Path(__file__).resolve().parents[1] / "transcripts"))
from transcript_writer import SessionWriter  # noqa: E402

K = Keyword
FEB_1 = datetime(2026, 2, 1, 9, 0, tzinfo=timezone.utc)
MAR_5 = datetime(2026, 3, 5, 9, 0, tzinfo=timezone.utc)
SHOP = project_for_path("/nonexistent/work/shop")  # SessionWriter's default cwd: the project of write_session's turns
OTHER_SHOP = project_for_path("/nonexistent/elsewhere/shop")  # another project of the same name, at another path


def keyed(name: str, project_id: str = SHOP.id) -> Keyword:
    """The entity of stance `name` (":constraint/mysql") in a project."""
    return K(f"{name}.{project_key(project_id)}")


def write_session(path: Path, turns: list[tuple[datetime, str, str]], **writer_args: Any) -> Path:
    """A transcript with one turn per (time, prompt, reply); the agent edits src/auth.py in each turn. In the
    project SHOP unless `writer_args` give SessionWriter another cwd."""
    writer = SessionWriter(path, **writer_args)
    for moment, prompt, reply in turns:
        writer.clock = moment
        writer.prompt(prompt)
        writer.tool("Edit", {"file_path": f"{writer.cwd}/src/auth.py", "old_string": "a", "new_string": "b"}, "ok")
        writer.say(reply)
    return path


def turns_of(path: Path) -> list[Turn]:
    return segment_turns(read_transcript(path))


def capture(memory: Memory, path: Path) -> CaptureResult:
    """Capture the transcript as the Stop hook does, then store the facts of what it captured."""
    result = capture_transcript(memory, path)
    process_capture_facts(memory, result.session_turns(), result.learning)
    return result


def one_turn(tmp_path: Path, prompt: str, reply: str = "Done.") -> Turn:
    return turns_of(write_session(tmp_path / "s.jsonl", [(FEB_1, prompt, reply)]))[0]


def stances(tmp_path: Path, prompt: str, reply: str = "Done.") -> set[tuple[str, str, str]]:
    return {(c.name, str(c.polarity), c.description) for c in extract_turn_facts(one_turn(tmp_path, prompt, reply))}


# -- extraction ------------------------------------------------------------------------------------------------


def test_polarity_is_kept(tmp_path: Path) -> None:
    assert stances(tmp_path / "a", "Never use MySQL.") == {(":constraint/mysql", ":against", "Never use MySQL")}
    assert stances(tmp_path / "b", "Use MySQL.") == {(":decision/mysql", ":for", "Use MySQL")}


@pytest.mark.parametrize(
    "prompt, expected",
    [
        (
            "Please never use MySQL for the billing service, it doesn't scale.",
            {(":constraint/mysql", ":against", "never use MySQL for the billing service")},
        ),
        ("OK, we'll use Postgres for the queue.", {(":decision/postgres", ":for", "we'll use Postgres for the queue")}),
        (
            "We decided to use Kafka because the volume is high.",
            {(":decision/kafka", ":for", "We decided to use Kafka because the volume is high")},
        ),
        ("Always run ruff before commit.", {(":constraint/run-ruff", ":for", "Always run ruff before commit")}),
        ("The API service depends on redis.", {(":dependency/redis", ":for", "The API service depends on redis")}),
        (
            "Prefer pathlib over os.path.",
            {
                (":preference/pathlib", ":for", "Prefer pathlib over os.path"),
                (":preference/os-path", ":against", "Prefer pathlib over os.path"),
            },
        ),
        ("Don't add new dependencies.", {(":constraint/new-dependencies", ":against", "Don't add new dependencies")}),
        ("We no longer depend on requests.", {(":dependency/requests", ":against", "We no longer depend on requests")}),
    ],
)
def test_the_whole_phrase_is_the_description(tmp_path: Path, prompt: str, expected: set[tuple[str, str, str]]) -> None:
    assert stances(tmp_path, prompt) == expected


@pytest.mark.parametrize(
    "prompt",
    [
        "Use grep to find the function.",
        "I don't know why it fails.",
        "Don't worry about the tests.",
        "Should we use MySQL?",
        "If we use MySQL, we need a migration.",
        "It depends on whether the cache is warm.",
        "The test always fails on CI.",
    ],
)
def test_no_stance_is_read_into_ordinary_sentences(tmp_path: Path, prompt: str) -> None:
    assert stances(tmp_path, prompt) == set()


# Stances the extraction stored from the real sessions in /work/shared/data/transcripts (entire-cli, cipher-box) and
# from the TypeScript project measured in the same review, each the sentence it came from.
@pytest.mark.parametrize(
    "prompt",
    [
        "Decision: keep existing).",  # unbalanced bracket
        "- keep the grouping by session (should be default) and allow switchting to by checkpoint view t",  # cut off
        "The places where we use go-git's in-memory tree operations are for things like:",  # trailing ':'
        "I think we should use a kind of green color.",  # a hedge
        "cannot use checkpointID (variable of type string) as id.CheckpointID value in argument to paths.Path",
        "Use SilentError**: When we print custom messages (not git repo, strategy not supported)",  # markup left
        "TrackCommandDetached returns early and never executes the defaulting logic.",  # a description, not a rule
        "1. if error is SilentError, do not print anything.\n2. if there is error, always exit with os.Exit(1)",
        "use the reviewer superpower on this",  # this task's instruction
        "Using a common format that both agents understand",  # a gerund, not an imperative
        "This is human-readable and doesn't depend on line numbers.",  # no subject
    ],
)
def test_a_fragment_hedge_or_error_is_no_stance(tmp_path: Path, prompt: str) -> None:
    assert stances(tmp_path, prompt) == set()


def test_a_pasted_plans_steps_are_no_stances(tmp_path: Path) -> None:
    plan = "Implement the following plan:\n\n# Review\n\n- Keep REMEDIATION_BATCH_SIZE (used by copy-paste endpoint).\n"
    assert stances(tmp_path / "a", plan + "- Use Add() method\n") == set()
    said = "Keep REMEDIATION_BATCH_SIZE for the copy-paste endpoint."  # the same step, said by the user
    assert stances(tmp_path / "b", said) == {
        (":decision/keep-remediation-batch-size", ":for", "Keep REMEDIATION_BATCH_SIZE for the copy-paste endpoint")
    }


def test_the_agent_states_facts_only_for_the_team(tmp_path: Path) -> None:
    found = stances(
        tmp_path,
        "Set up the worker.",
        "I'll use grep to find it. Never use eval. We'll use Celery for the jobs. The worker now depends on redis.",
    )
    assert found == {
        (":decision/celery", ":for", "We'll use Celery for the jobs"),
        (":dependency/redis", ":for", "The worker now depends on redis"),
    }


def test_one_turn_keeps_one_direction_per_subject(tmp_path: Path) -> None:
    found = stances(tmp_path, "Never use MySQL.", "Understood. We'll use MySQL only for reports.")
    assert found == {(":constraint/mysql", ":against", "Never use MySQL")}


def test_secrets_are_redacted_before_extraction(tmp_path: Path) -> None:
    [fact] = extract_turn_facts(one_turn(tmp_path, "Never commit the token ghp_abcdefghijklmnopqrstuvwxyz0123456789."))
    assert "ghp_" not in fact.description and "[REDACTED:github_token]" in fact.description


# -- storing ---------------------------------------------------------------------------------------------------


def _session(tmp_path: Path) -> Path:
    return write_session(
        tmp_path / "s.jsonl",
        [(FEB_1, "Never use MySQL.", "Noted."), (MAR_5, "Use MySQL after all, the DBA insists.", "OK.")],
    )


def test_a_later_statement_closes_the_contradicting_one_and_history_stays(memory: Memory, tmp_path: Path) -> None:
    capture(memory, _session(tmp_path))
    store = FactStore(memory.db)
    now = store.query("[:find ?e ?d ?p :where [?e :description ?d] [?e :polarity ?p]]").rows
    assert now == [(keyed(":decision/mysql"), "Use MySQL after all, the DBA insists", FOR)]
    then = store.query('[:find ?e ?d ?p :valid-at "2026-02-15" :where [?e :description ?d] [?e :polarity ?p]]').rows
    assert then == [(keyed(":constraint/mysql"), "Never use MySQL", AGAINST)]
    constraint = keyed(":constraint/mysql")
    first_tx = min(r[0] for r in store.history(constraint).rows)
    believed = store.query(f"[:find ?d :as-of {first_tx} :where [{constraint} :description ?d]]").rows
    assert believed == [("Never use MySQL",)]
    closed = [r for r in store.history(constraint).rows if r[2] == "assert" and r[6]]
    assert {r[6] for r in closed} == {"2026-03-05T09:00:05.000Z"}  # valid until the second turn began
    reason = store.history(constraint).rows[0][-1]
    assert reason.startswith("User: Never use MySQL.") and "Assistant: Noted." in reason
    assert audit(store).violations == []


def test_rerunning_adds_nothing_and_an_older_turn_never_flips_back(memory: Memory, tmp_path: Path) -> None:
    path = _session(tmp_path)
    result = capture(memory, path)
    store = FactStore(memory.db)
    before = store.current_tx()
    assert process_capture_facts(memory, result.session_turns(), result.learning) == 0
    first, second = turns_of(path)
    episode_of = {ep.source.record_uuids[0]: ep for ep in result.added}
    assert store_turn_facts(memory, first, episode_of[first.prompt_uuid]) == []
    assert store_turn_facts(memory, second, episode_of[second.prompt_uuid]) == []
    assert store.current_tx() == before


def test_a_late_backfill_ends_where_the_newer_statement_begins(memory: Memory, tmp_path: Path) -> None:
    path = _session(tmp_path)
    first, second = turns_of(path)
    episode = Episode(project_id="p", project_name="shop", summary="backfill")
    memory.store.add(episode)
    assert len(store_turn_facts(memory, second, episode)) == 1
    assert len(store_turn_facts(memory, first, episode)) == 1
    store = FactStore(memory.db)
    assert store.query("[:find ?e :where [?e :description _]]").rows == [(keyed(":decision/mysql", "p"),)]
    spans = {(r[5], r[6]) for r in store.history(keyed(":constraint/mysql", "p")).rows}
    assert spans == {("2026-02-01T09:00:05.000Z", "2026-03-05T09:00:05.000Z")}
    assert store_turn_facts(memory, first, episode) == [] and store_turn_facts(memory, second, episode) == []


def test_a_new_phrase_replaces_the_old_description_of_the_same_entity(memory: Memory, tmp_path: Path) -> None:
    capture(
        memory,
        write_session(
            tmp_path / "s.jsonl",
            [
                (FEB_1, "Never use MySQL in production because of licensing.", "Noted."),
                (MAR_5, "Never use MySQL.", "Noted."),
            ],
        ),
    )
    store = FactStore(memory.db)
    constraint = keyed(":constraint/mysql")
    assert store.query(f"[:find ?a ?v :where [{constraint} ?a ?v] [(string? ?v)]]").rows == [
        (K(":description"), "Never use MySQL"),
        (K(":project"), SHOP.id),
        (K(":subject"), "MySQL"),
    ]
    old = store.query(f'[:find ?r :valid-at "2026-02-15" :where [{constraint} :rationale ?r]]').rows
    assert old == [("of licensing",)]


def test_forgetting_the_episode_undoes_its_facts(memory: Memory, tmp_path: Path) -> None:
    result = capture(memory, _session(tmp_path))
    linked = memory.db.query("SELECT episode_id, count(*) FROM episode_facts GROUP BY episode_id")
    assert sorted(n for _, n in linked) == [1, 1]
    later = max(result.added, key=lambda ep: ep.created_at)
    forget(memory.db, Selector("episode", later.id))
    rows = FactStore(memory.db).query("[:find ?e ?d :where [?e :description ?d]]").rows
    assert rows == [(keyed(":constraint/mysql"), "Never use MySQL")]


# -- per project -----------------------------------------------------------------------------------------------


def _two_projects(
    memory: Memory, tmp_path: Path, *, a: list[tuple[datetime, str, str]], b: list[tuple[datetime, str, str]]
) -> None:
    """Project SHOP says `a`, then project OTHER_SHOP (the same name at another path) says `b`."""
    capture(memory, write_session(tmp_path / "a.jsonl", a))
    capture(
        memory,
        write_session(tmp_path / "b.jsonl", b, cwd=OTHER_SHOP.path, session_id="5f0e6a2c-1d3b-4c8e-9a7f-2b6d4e8c0a13"),
    )


def _current(store: FactStore) -> list[tuple[Keyword, str, Keyword, str]]:
    return store.query("[:find ?e ?d ?p ?pid :where [?e :description ?d] [?e :polarity ?p] [?e :project ?pid]]").rows


def test_a_stance_entity_is_named_by_kind_subject_and_project(memory: Memory, tmp_path: Path) -> None:
    capture(memory, write_session(tmp_path / "s.jsonl", [(FEB_1, "Never use MySQL.", "Noted.")]))
    store = FactStore(memory.db)
    entity = K(f":constraint/mysql.{SHOP.id[:8]}")
    assert store.query(f"[:find ?s ?pid :where [{entity} :subject ?s] [{entity} :project ?pid]]").rows == [
        ("MySQL", SHOP.id)
    ]
    assert audit(store).violations == []
    assert project_key(SHOP.id) == SHOP.id[:8] != project_key(OTHER_SHOP.id)
    assert project_key("p") == project_key("p") and len(project_key("Not Hex!")) == 8  # hand-made ids are hashed
    assert project_key("p").isalnum() and project_key("p") != project_key("q")


def test_another_projects_statement_closes_nothing(memory: Memory, tmp_path: Path) -> None:
    _two_projects(
        memory, tmp_path, a=[(FEB_1, "Never use MySQL.", "Noted.")], b=[(MAR_5, "Use MySQL, the DBA insists.", "OK.")]
    )
    store = FactStore(memory.db)
    assert sorted(_current(store)) == sorted(
        [
            (keyed(":constraint/mysql"), "Never use MySQL", AGAINST, SHOP.id),
            (keyed(":decision/mysql", OTHER_SHOP.id), "Use MySQL, the DBA insists", FOR, OTHER_SHOP.id),
        ]
    )
    assert [r for r in store.history(keyed(":constraint/mysql")).rows if r[2] == "retract" or r[6]] == []
    joined = store.query(
        "[:find ?d ?name ?path :where [?s :description ?d] [?s :project ?pid] "
        "[?ep :episode/project-id ?pid] [?ep :episode/project ?name] "
        "[?ep :episode/project-path ?path]]"
    ).rows
    assert sorted(joined) == [
        ("Never use MySQL", "shop", SHOP.path),
        ("Use MySQL, the DBA insists", "shop", OTHER_SHOP.path),
    ]


def test_within_a_project_the_later_statement_still_closes_the_earlier(memory: Memory, tmp_path: Path) -> None:
    apr_1 = datetime(2026, 4, 1, 9, 0, tzinfo=timezone.utc)
    _two_projects(
        memory,
        tmp_path,
        a=[(FEB_1, "Never use MySQL.", "Noted."), (apr_1, "Use MySQL after all.", "OK.")],
        b=[(MAR_5, "Never use MySQL.", "Noted.")],
    )
    store = FactStore(memory.db)
    assert sorted(_current(store)) == sorted(
        [
            (keyed(":decision/mysql"), "Use MySQL after all", FOR, SHOP.id),
            (keyed(":constraint/mysql", OTHER_SHOP.id), "Never use MySQL", AGAINST, OTHER_SHOP.id),
        ]
    )
    spans = {(r[5], r[6]) for r in store.history(keyed(":constraint/mysql")).rows if r[4] == "Never use MySQL"}
    assert ("2026-02-01T09:00:05.000Z", "2026-04-01T09:00:05.000Z") in spans


def test_a_late_backfill_is_bounded_only_by_its_own_project(memory: Memory, tmp_path: Path) -> None:
    path = _session(tmp_path)
    first, second = turns_of(path)
    mine, theirs = (
        Episode(project_id="p", project_name="shop", summary="a"),
        Episode(project_id="q", project_name="shop", summary="b"),
    )
    memory.store.add(mine)
    memory.store.add(theirs)
    assert len(store_turn_facts(memory, second, theirs)) == 1  # q says "use MySQL" on 5 March
    assert len(store_turn_facts(memory, first, mine)) == 1  # p's older "never use MySQL" is stored afterwards
    store = FactStore(memory.db)
    spans = {(r[3], r[5], r[6]) for r in store.history(keyed(":constraint/mysql", "p")).rows}
    assert (K(":description"), "2026-02-01T09:00:05.000Z", None) in spans  # open: q's statement is not p's
    assert len(_current(store)) == 2
