"""The table of shared kinds (`tempera.team.kinds.KINDS`): every team table a pull follows is in it, in the order
its rows depend on each other."""

from __future__ import annotations

from teamdb import Team

from tempera.team.kinds import ASSERTIONS, FACTS, KINDS, RETRACTIONS


def test_every_team_table_with_change_numbers_is_one_kind(team: Team) -> None:
    """A table a pull follows (it has the `seq` change number) that no kind names would never reach a teammate."""
    followed = {
        r[0]
        for r in team.admin.execute(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = 'tempera' AND column_name = 'seq'"
        )
    }
    assert sorted(k.table for k in KINDS) == sorted(followed)


def test_the_declared_order_puts_each_row_after_what_it_needs() -> None:
    """Episodes first (a pull applies evidence and links only of episodes it has), a retraction after the datom it
    retracts (it is selected from the marks the assertion push writes), tombstones pulled last."""
    tables = [k.table for k in KINDS]
    assert tables[0] == "episodes" and tables[-1] == "tombstones"
    assert FACTS.pushes == (ASSERTIONS, RETRACTIONS)
    assert not KINDS[-1].pushes  # tombstones leave by `TeamSync.bury`, before any project, paused ones too
