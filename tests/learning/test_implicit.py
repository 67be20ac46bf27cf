"""Implicit feedback: use is recognised from what the agent did, and each verdict becomes an evidence row."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from learnbook import NOW, Book

from tests.conftest import TRANSCRIPTS
from tests.support.longsession import write_long_session
from tempera.core.learning.explain import explain
from tempera.core.learning.implicit import ImplicitResult, Routine, apply_implicit_feedback, score_injection_use
from tempera.transcripts.pipeline import capture_and_learn

FIX = "Fixed the login redirect loop by validating return_url with is_safe_redirect() in auth/middleware.py"


def test_citing_the_id_is_use(book: Book) -> None:
    memory = book.add(FIX)
    turn = book.add(f"Applied the fix from memory {memory.id[:8]} to the signup flow", outcome="success")
    verdict = score_injection_use(memory, turn)
    assert verdict.used and any("cited its id" in r for r in verdict.reasons)


def test_same_file_and_distinctive_phrase_is_use(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    turn = book.add(
        "Wrapped the next parameter in is_safe_redirect() before redirecting",
        outcome="success",
        modified=[str(book.root / "auth" / "middleware.py")],
        prompt="users loop on the login page",
    )
    verdict = score_injection_use(memory, turn)
    assert verdict.used, verdict
    assert {r.split(":")[0] for r in verdict.reasons} == {"modified the same file", "repeated a distinctive phrase"}


def test_a_real_turn_that_edits_the_injected_episodes_file_again_is_use(book: Book, tmp_path: Path) -> None:
    """A real transcript, captured by the one pipeline: its second turn writes decorator_example.py (moved into the
    project: the session wrote it in /tmp), the file the injected memory changed, in words that share nothing with
    the memory. Changing a memory's (non-routine) file again is use on its own: on the entire-cli replay, 68 % of
    the injected episodes whose files the session changed again were relevant to a later session, against 38 % of
    those it did not touch."""
    memory = book.add("Wrote the greeting helper module", at=-48, modified=["decorator_example.py"])
    other = book.add("Added keyset pagination to the orders API endpoint", at=-47, modified=["api/orders.py"])
    src = TRANSCRIPTS / "claude-code-log" / "representative_messages.jsonl"
    transcript = write_long_session(src, tmp_path / "t" / "s9.jsonl", 1, session_id="s9", cwd=book.root)
    transcript.write_text(
        transcript.read_text().replace("/tmp/decorator_example.py", f"{book.root}/decorator_example.py")
    )
    book.inject("s9", memory, other, prompt="Hello Claude! Can you help me understand how Python decorators work?")
    capture_and_learn(book.memory, transcript, project=str(book.root))
    [row] = book.rows(memory, "implicit")
    assert row["signal"] == "helpful" and row["evidence"]["rule"] == "used, and the turn succeeded", row
    assert row["evidence"]["reasons"] == ["modified the same file: decorator_example.py"]
    assert [r["signal"] for r in book.rows(other, "implicit")] == ["unhelpful"]
    assert book.utility(memory) > 0.5 > book.utility(other)


def test_overlap_that_only_echoes_the_prompt_is_not_use(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    turn = book.add(
        "Looked at is_safe_redirect() and return_url, then changed the CSS of the login button",
        prompt="is is_safe_redirect() still used for return_url?",
        modified=["static/login.css"],
    )
    verdict = score_injection_use(memory, turn)
    assert not verdict.used and verdict.score == 0


def test_same_error_and_command_is_use(book: Book) -> None:
    memory = book.add(
        "ECONNREFUSED on startup: wait for the Postgres healthcheck",
        commands=["docker compose up -d db"],
        errors=[("connect ECONNREFUSED 127.0.0.1:5432", "econnrefused-5432")],
    )
    turn = book.add(
        "Started the database first, then the API came up",
        outcome="success",
        commands=["docker compose up -d db", "ls"],
        errors=[("Error: connect ECONNREFUSED 127.0.0.1:5432", "econnrefused-5432")],
    )
    verdict = score_injection_use(memory, turn)
    assert verdict.used and verdict.score >= 1.0


def test_verdicts_become_evidence_and_injections_are_marked(book: Book) -> None:
    used = book.add(FIX, modified=["auth/middleware.py"])
    ignored = book.add("Added keyset pagination to the orders API endpoint", modified=["api/orders.py"])
    book.inject("s1", used, ignored)
    turn = book.add(
        "Called is_safe_redirect() on return_url in the middleware",
        session="s1",
        outcome="success",
        modified=["auth/middleware.py"],
        prompt="login keeps looping",
    )
    results = {r.episode_id: r for r in apply_implicit_feedback(book.memory, "s1", turn)}
    assert results[used.id].signal == "helpful" and results[used.id].weight == 0.7
    assert results[ignored.id].signal == "unhelpful" and results[ignored.id].weight == 0.05
    assert book.utility(used) > 0.5 > book.utility(ignored)
    row = book.rows(used, "implicit")[0]
    assert row["evidence"]["turn"] == turn.id and row["evidence"]["rule"] == "used, and the turn succeeded"
    assert row["evidence"]["reasons"]
    marks = dict(book.memory.db.query("SELECT episode_id, used FROM injections WHERE evaluated_at IS NOT NULL"))
    assert marks == {used.id: 1.0, ignored.id: 0.0}
    again = apply_implicit_feedback(book.memory, "s1", turn)  # only the ignored one is looked at again
    assert [(r.episode_id, r.signal) for r in again] == [(ignored.id, None)]
    assert len(book.rows(used)) == len(book.rows(ignored)) == 1
    assert explain(book.memory, used.id)["by_source"]["implicit"]["helpful"] == 0.7


def test_a_verdict_is_dated_by_its_turn_and_the_last_useful_time_never_goes_back(book: Book) -> None:
    """A session imported late (its turn ten days old) dates its evidence by the turn, and leaves the newer
    session's last-useful time standing: freshness reads when the memory proved useful, not when we learnt it."""
    memory = book.add(FIX, at=-400, modified=["auth/middleware.py"])
    for session, at in (("yesterday", -24.0), ("ten-days-ago", -240.0)):
        book.inject(session, memory)
        turn = book.add(FIX, at=at, session=session, outcome="success", modified=["auth/middleware.py"])
        apply_implicit_feedback(book.memory, session, turn)
        assert book.rows(memory, "implicit")[-1]["created_at"] == turn.created_at.isoformat()
    (last,) = book.memory.db.one("SELECT last_useful_at FROM episodes WHERE id = ?", (memory.id,))
    assert last == (NOW - timedelta(hours=24)).isoformat()


def test_an_episode_used_once_is_never_chronic(book: Book) -> None:
    """Used in one session, then ignored in three more: each ignore stays a small one (it was what a prompt needed
    once); only an episode ignored in every session it was shown in becomes chronic."""
    memory = book.add(FIX, modified=["auth/middleware.py"])
    for n, changed in enumerate(["auth/middleware.py", "api/orders.py", "api/orders.py", "api/orders.py"]):
        book.inject(f"s{n}", memory)
        turn = book.add(f"Worked on {changed} ({n})", session=f"s{n}", outcome="success", modified=[changed])
        apply_implicit_feedback(book.memory, f"s{n}", turn)
    assert [(r["signal"], r["weight"]) for r in book.rows(memory, "implicit")] == [("helpful", 0.7)] + [
        ("unhelpful", 0.05)
    ] * 3


def test_used_then_corrected_is_unhelpful(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s2", memory)
    turn = book.add(
        "Added is_safe_redirect() to the middleware again",
        session="s2",
        outcome="success",
        modified=["auth/middleware.py"],
    )
    [result] = apply_implicit_feedback(book.memory, "s2", turn, corrected=True)
    assert (result.signal, result.weight) == ("unhelpful", 0.7)
    assert book.utility(memory) < 0.5


def test_used_without_success_gives_no_evidence(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s3", memory)
    turn = book.add(
        "Tried is_safe_redirect() in the middleware; still looping",
        session="s3",
        outcome="failure",
        modified=["auth/middleware.py"],
    )
    [result] = apply_implicit_feedback(book.memory, "s3", turn)
    assert result.verdict.used and result.signal is None
    assert book.rows(memory) == [] and book.utility(memory) == 0.5


def test_a_later_correction_turns_the_verdict(book: Book) -> None:
    from tempera.core.learning.implicit import apply_correction

    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s4", memory)
    turn = book.add(
        "Added is_safe_redirect() to the middleware", session="s4", outcome="success", modified=["auth/middleware.py"]
    )
    apply_implicit_feedback(book.memory, "s4", turn)
    assert book.utility(memory) > 0.5
    assert apply_correction(book.memory, turn) == [memory.id]  # the user's next prompt said it was wrong
    [row] = book.rows(memory)
    assert (row["signal"], row["weight"]) == ("unhelpful", 0.7) and row["evidence"]["was"]["signal"] == "helpful"
    assert book.utility(memory) < 0.5
    assert apply_correction(book.memory, turn) == []


def test_ignored_then_used_later_in_the_session_is_rewritten_not_stacked(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s5", memory)
    first = book.add("Cleared the browser cache", session="s5", outcome="success")
    second = book.add("Still looping, so I refreshed the cookie settings", session="s5", outcome="failure")
    third = book.add(
        "Wrapped next in is_safe_redirect() in the middleware",
        session="s5",
        outcome="success",
        modified=["auth/middleware.py"],
    )
    assert [r.signal for r in apply_implicit_feedback(book.memory, "s5", first)] == ["unhelpful"]
    assert [r.signal for r in apply_implicit_feedback(book.memory, "s5", second)] == [None]  # no second penalty
    assert len(book.rows(memory)) == 1
    [result] = apply_implicit_feedback(book.memory, "s5", third)
    assert result.signal == "helpful" and result.verdict.used
    [row] = book.rows(memory)
    assert (row["signal"], row["weight"], row["evidence"]["turn"]) == ("helpful", 0.7, third.id)
    assert row["evidence"]["was"]["rule"] == "injected, ignored"
    assert book.memory.store.get(memory.id).utility.last_useful_at is not None
    assert apply_implicit_feedback(book.memory, "s5", third) == []  # used: nothing left to judge


def judged_in_busy_project(
    book: Book, memory_commands: list[str], turn_commands: list[str], shared_file: str | None = None
) -> ImplicitResult:
    """Six earlier episodes ran the project's checks (`mise run test`, `mise run lint`); then one injected memory
    is judged against a successful turn."""
    for i in range(6):
        book.add(
            f"Routine change {i} to the cli, then ran the checks",
            commands=["mise run test", "mise run lint"],
            modified=[f"cmd/cli/part{i}.go"],
        )
    memory = book.add(
        "Renamed the checkpoint store", commands=memory_commands, modified=[shared_file or "cmd/cli/checkpoint.go"]
    )
    book.inject("s1", memory)
    turn = book.add(
        "Added a flag to the status command",
        session="s1",
        outcome="success",
        commands=turn_commands,
        modified=[shared_file or "cmd/cli/status.go"],
    )
    [result] = apply_implicit_feedback(book.memory, "s1", turn)
    return result


def test_what_the_project_does_all_the_time_is_no_sign_of_use(book: Book) -> None:
    """Every session runs the tests and lint: an injected memory that ran them too was not thereby used."""
    result = judged_in_busy_project(book, ["mise run test", "mise run lint"], ["mise run test", "mise run lint"])
    assert not result.verdict.used and result.signal == "unhelpful", result
    memory = book.memory.store.get(result.episode_id)
    turn = book.memory.store.get(book.rows(memory, "implicit")[0]["evidence"]["turn"])
    assert score_injection_use(memory, turn).used  # without knowing the project, two shared commands look like use
    assert book.utility(memory) < 0.5


def test_a_distinctive_command_still_counts_in_a_busy_project(book: Book) -> None:
    regen = "go run ./tools/regen-fixtures --all"
    result = judged_in_busy_project(book, [regen], ["mise run test", regen], shared_file="testdata/fixtures.json")
    assert result.verdict.used and result.signal == "helpful", result


def test_output_plumbing_does_not_make_a_routine_command_distinctive(book: Book) -> None:
    result = judged_in_busy_project(book, ["mise run test 2>&1 | tail -30"], ["mise run test 2>&1 | tail -30"])
    assert not result.verdict.used, result


VIEWER = TRANSCRIPTS / "claude-code-viewer"


def test_a_real_sessions_paths_and_look_arounds_are_no_sign_of_use(book: Book) -> None:
    """Two real sessions of one project (the claude-code-viewer fixtures, both in /path/to/Demo), captured by the
    one pipeline: the capture's resolution lines ("after editing /path/to/Demo/..., `...` succeeded") share the
    project's path, and both listed its folders (`ls -la /path/to/Demo`). On the entire-cli replay the same made
    "editing users soph" (a home directory) a phrase that judged memories used; neither says the second session
    used a memory of the first."""
    first, second = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    for name in (first, second):
        capture_and_learn(book.memory, VIEWER / f"{name}.jsonl", project=str(book.root))
    episodes = list(book.memory.store.iter_episodes(book.project.id))
    routine = Routine(book.memory.db, book.project.id)
    verdicts = [
        score_injection_use(memory, turn, routine)
        for memory in episodes
        for turn in episodes
        if (memory.session_id, turn.session_id) == (first, second)
    ]
    reasons = [r for v in verdicts for r in v.reasons]
    assert verdicts and reasons  # the sessions share something: CLAUDE.md, a tool error
    assert not [r for r in reasons if r.startswith("ran") or r.startswith("repeated") and "demo" in r], reasons


def test_a_chain_of_routine_commands_is_routine(book: Book) -> None:
    """`mise run lint && mise run test` is the project's two checks, however they are chained."""
    chain = ["mise run lint && mise run test"]
    assert not judged_in_busy_project(book, chain, chain).verdict.used


def test_what_most_sessions_do_is_routine_however_many_episodes_they_are_cut_into(book: Book) -> None:
    """Twenty sessions of six episodes each; four of them, the memory and the turn ran `go build ./...` and hit
    the lint task's failure: 6 of 122 episodes (not over 5 %), but 6 of 22 sessions. On the entire-cli replay "mise
    run test:ci" (13 of 364 episodes, 6 of 62 sessions) made memories used this way."""
    build, lint = ["go build ./..."], [("[lint] ERROR task failed", "lint-failed")]
    for s in range(20):
        for i in range(6):
            ran = s < 4 and i == 0
            book.add(
                f"Step {i} of task {s}", session=f"past{s}", commands=build if ran else [], errors=lint if ran else []
            )
    memory = book.add("Renamed the checkpoint store", commands=build, errors=lint, modified=["cmd/cli/checkpoint.go"])
    book.inject("s1", memory)
    turn = book.add("Added a flag to the status command", session="s1", outcome="success", commands=build, errors=lint)
    [result] = apply_implicit_feedback(book.memory, "s1", turn)
    assert not result.verdict.used and result.verdict.reasons == [], result


def test_a_file_the_project_changes_often_changed_again_is_still_use(book: Book) -> None:
    """Seven episodes changed cmd/cli/setup.go: running the checks again says nothing, but changing that file again
    says the memory about it was on the task."""
    for i in range(6):
        book.add(f"Reworked step {i} of the setup wizard", modified=["cmd/cli/setup.go"])
    memory = book.add("Added the agent choice to the setup wizard", modified=["cmd/cli/setup.go"])
    book.inject("s1", memory)
    turn = book.add(
        "Made the hook installation optional", session="s1", outcome="success", modified=["cmd/cli/setup.go"]
    )
    [result] = apply_implicit_feedback(book.memory, "s1", turn)
    assert result.verdict.used and result.signal == "helpful", result
    assert result.verdict.reasons == ["modified the same file: cmd/cli/setup.go"]
