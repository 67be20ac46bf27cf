"""Implicit feedback: use is recognised from what the agent did, and each verdict becomes an evidence row."""

from __future__ import annotations

from learnbook import Book

from tempera.core.learning.explain import explain
from tempera.core.learning.implicit import apply_implicit_feedback, score_injection_use

FIX = "Fixed the login redirect loop by validating return_url with is_safe_redirect() in auth/middleware.py"


def test_citing_the_id_is_use(book: Book) -> None:
    memory = book.add(FIX)
    turn = book.add(f"Applied the fix from memory {memory.id[:8]} to the signup flow", outcome="success")
    verdict = score_injection_use(memory, turn)
    assert verdict.used and any("cited its id" in r for r in verdict.reasons)


def test_same_file_and_distinctive_phrase_is_use(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    turn = book.add("Wrapped the next parameter in is_safe_redirect() before redirecting", outcome="success",
                    modified=[str(book.root / "auth" / "middleware.py")], prompt="users loop on the login page")
    verdict = score_injection_use(memory, turn)
    assert verdict.used, verdict
    assert {r.split(":")[0] for r in verdict.reasons} == {"modified the same file", "repeated a distinctive phrase"}


def test_overlap_that_only_echoes_the_prompt_is_not_use(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    turn = book.add("Looked at is_safe_redirect() and return_url, then changed the CSS of the login button",
                    prompt="is is_safe_redirect() still used for return_url?", modified=["static/login.css"])
    verdict = score_injection_use(memory, turn)
    assert not verdict.used and verdict.score == 0


def test_same_error_and_command_is_use(book: Book) -> None:
    memory = book.add("ECONNREFUSED on startup: wait for the Postgres healthcheck",
                      commands=["docker compose up -d db"],
                      errors=[("connect ECONNREFUSED 127.0.0.1:5432", "econnrefused-5432")])
    turn = book.add("Started the database first, then the API came up", outcome="success",
                    commands=["docker compose up -d db", "ls"],
                    errors=[("Error: connect ECONNREFUSED 127.0.0.1:5432", "econnrefused-5432")])
    verdict = score_injection_use(memory, turn)
    assert verdict.used and verdict.score >= 1.0


def test_verdicts_become_evidence_and_injections_are_marked(book: Book) -> None:
    used = book.add(FIX, modified=["auth/middleware.py"])
    ignored = book.add("Added keyset pagination to the orders API endpoint", modified=["api/orders.py"])
    book.inject("s1", used, ignored)
    turn = book.add("Called is_safe_redirect() on return_url in the middleware", session="s1", outcome="success",
                    modified=["auth/middleware.py"], prompt="login keeps looping")
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


def test_used_then_corrected_is_unhelpful(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s2", memory)
    turn = book.add("Added is_safe_redirect() to the middleware again", session="s2", outcome="success",
                    modified=["auth/middleware.py"])
    [result] = apply_implicit_feedback(book.memory, "s2", turn, corrected=True)
    assert (result.signal, result.weight) == ("unhelpful", 0.7)
    assert book.utility(memory) < 0.5


def test_used_without_success_gives_no_evidence(book: Book) -> None:
    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s3", memory)
    turn = book.add("Tried is_safe_redirect() in the middleware; still looping", session="s3", outcome="failure",
                    modified=["auth/middleware.py"])
    [result] = apply_implicit_feedback(book.memory, "s3", turn)
    assert result.verdict.used and result.signal is None
    assert book.rows(memory) == [] and book.utility(memory) == 0.5


def test_a_later_correction_turns_the_verdict(book: Book) -> None:
    from tempera.core.learning.implicit import apply_correction

    memory = book.add(FIX, modified=["auth/middleware.py"])
    book.inject("s4", memory)
    turn = book.add("Added is_safe_redirect() to the middleware", session="s4", outcome="success",
                    modified=["auth/middleware.py"])
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
    third = book.add("Wrapped next in is_safe_redirect() in the middleware", session="s5", outcome="success",
                     modified=["auth/middleware.py"])
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
