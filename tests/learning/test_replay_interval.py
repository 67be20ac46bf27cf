"""evals/learning_replay.py's interval for a lift: a paired bootstrap over sessions, so that the report says
whether a lift on two dozen first prompts is more than a rank swap."""

from __future__ import annotations

from evals.learning_replay import lift_interval


def test_the_same_ranks_lift_nothing() -> None:
    ranks = {"a": 1, "b": 3, "c": None, "c#1": 12}
    assert lift_interval(ranks, dict(ranks)) == (0.0, 0.0, 0, 0)


def test_every_query_up_gives_an_interval_above_zero() -> None:
    lo, hi, up, down = lift_interval({f"s{i}": 1 for i in range(10)}, {f"s{i}": 2 for i in range(10)})
    assert (lo, hi, up, down) == (0.5, 0.5, 10, 0)


def test_a_sessions_later_prompts_are_drawn_with_it() -> None:
    """One session, half its prompts up a whole reciprocal rank: drawn as one unit the lift is exactly its mean.
    Drawn as independent queries, it would spread from well under to well over 0.5."""
    a = {"s": 1, "s#1": None, "s#2": 1, "s#3": None, "s#4": 1, "s#5": None}
    b = dict.fromkeys(a)
    assert lift_interval(a, b) == (0.5, 0.5, 3, 0)


def test_a_mixed_lift_straddles_zero_and_counts_both_ways() -> None:
    a = {"s1": 1, "s2": 1, "s3": 5, "s4": 5, "s5": 2, "s6": 2}
    b = {"s1": 5, "s2": 5, "s3": 1, "s4": 1, "s5": 2, "s6": 2}
    lo, hi, up, down = lift_interval(a, b)
    assert lo < 0 < hi and (up, down) == (2, 2)
    assert lift_interval(a, b) == (lo, hi, up, down)  # seeded: the report is the same run to run
