"""Transaction time (:as-of) and valid time (:valid-at), alone and combined, and set semantics."""

from __future__ import annotations

import time

import pytest

from tempera.core.errors import InvalidInput
from tempera.facts import DatalogError, FactStore, Keyword

K = Keyword
EMPLOYER = "[:find ?c {opts} :where [:alice :works-at ?c]]"


@pytest.fixture
def jobs(store: FactStore) -> FactStore:
    store.execute(
        '(transact {:valid-from "2020-01-01" :valid-to "2023-06-01"} [[:alice :works-at :techcorp]])',
        reason="hired at TechCorp",
    )  # tx 1
    store.execute(
        '(transact {:valid-from "2023-06-01"} [[:alice :works-at :startupco]])', reason="moved to StartupCo"
    )  # tx 2
    store.retract("[[:alice :works-at :startupco]]", reason="the move was recorded by mistake")  # tx 3
    return store


def employers(store: FactStore, opts: str) -> set:
    return {row[0] for row in store.query(EMPLOYER.format(opts=opts)).rows}


def test_as_of_before_and_after_a_retraction(jobs: FactStore) -> None:
    assert employers(jobs, ":as-of 2 :any-valid-time") == {K(":techcorp"), K(":startupco")}
    assert employers(jobs, ":as-of 3 :any-valid-time") == {K(":techcorp")}
    assert employers(jobs, ":any-valid-time") == {K(":techcorp")}
    assert employers(jobs, ":as-of 0 :any-valid-time") == set()


def test_valid_at_inside_outside_and_on_the_boundaries(jobs: FactStore) -> None:
    assert employers(jobs, ':as-of 2 :valid-at "2021-06-01"') == {K(":techcorp")}
    assert employers(jobs, ':as-of 2 :valid-at "2019-12-31"') == set()
    assert employers(jobs, ':as-of 2 :valid-at "2020-01-01"') == {K(":techcorp")}  # valid-from is inclusive
    assert employers(jobs, ':as-of 2 :valid-at "2023-06-01"') == {K(":startupco")}  # valid-to is exclusive
    assert employers(jobs, ':as-of 2 :valid-at "2023-05-31T23:59:59.999Z"') == {K(":techcorp")}


def test_both_axes_combined(jobs: FactStore) -> None:
    assert employers(jobs, ':as-of 1 :valid-at "2024-01-01"') == set()  # StartupCo not yet recorded
    assert employers(jobs, ':as-of 2 :valid-at "2024-01-01"') == {K(":startupco")}  # recorded and valid
    assert employers(jobs, ':valid-at "2024-01-01"') == set()  # retracted since
    assert employers(jobs, "") == set()  # nothing is valid today


def test_as_of_a_wall_clock_time(store: FactStore) -> None:
    first = store.transact('[[:db :name "PostgreSQL"]]', reason="initial choice")
    time.sleep(0.01)
    store.transact('[[:db :name "SQLite"]]', reason="second store")
    rows = store.query(f'[:find ?n :as-of "{first.at}" :where [:db :name ?n]]').rows
    assert rows == [("PostgreSQL",)]
    assert store.query('[:find ?n :as-of "2000-01-01T00:00:00Z" :where [:db :name ?n]]').rows == []


def test_default_valid_time_is_from_the_transaction_on(store: FactStore) -> None:
    store.transact("[[:flag :on true]]", reason="now")
    store.execute('(transact [[:flag :later true {:valid-from "2999-01-01"}]])', reason="future")
    assert store.query("[:find ?a :where [:flag ?a _]]").rows == [(K(":on"),)]
    assert store.query('[:find ?a :valid-at "2020-01-01" :where [:flag ?a _]]').rows == []
    assert set(store.query('[:find ?a :valid-at "2999-06-01" :where [:flag ?a _]]').rows) == {
        (K(":on"),),
        (K(":later"),),
    }


def test_per_fact_valid_time_overrides_the_transaction_default(store: FactStore) -> None:
    store.execute(
        '(transact {:valid-from "2024-01-01"} [[:a :on true {:valid-to "2025-01-01"}] [:b :on true]])', reason="ranges"
    )
    rows = store.query('[:find ?e :valid-at "2026-01-01" :where [?e :on true]]').rows
    assert rows == [(K(":b"),)]
    assert len(store.query('[:find ?e :valid-at "2024-06-01" :where [?e :on true]]').rows) == 2


def test_reasserting_a_current_fact_is_a_no_op(store: FactStore) -> None:
    first = store.transact("[[:alice :likes :tea]]", reason="said so")
    again = store.transact("[[:alice :likes :tea] [:alice :likes :tea]]", reason="said so again")
    assert (first.tx, first.added) == (1, 1)
    assert (again.tx, again.added, again.unchanged) == (None, 0, 2)
    assert store.current_tx() == 1
    store.retract("[[:alice :likes :tea]]", reason="changed mind")
    back = store.transact("[[:alice :likes :tea]]", reason="changed back")
    assert (back.tx, back.added) == (3, 1)
    assert len(store.history(":alice").rows) == 3


def test_answers_have_no_duplicate_rows(store: FactStore) -> None:
    store.execute('(transact {:valid-from "2020-01-01" :valid-to "2021-01-01"} [[:a :tag :x]])', reason="r1")
    store.execute('(transact {:valid-from "2022-01-01" :valid-to "2023-01-01"} [[:a :tag :x]])', reason="r2")
    store.transact("[[:a :tag :y] [:a :other 1]]", reason="r3")
    assert store.query("[:find ?t :any-valid-time :where [:a :tag ?t]]").rows == [(K(":x"),), (K(":y"),)]
    assert store.query("[:find ?e :any-valid-time :where [?e :tag _]]").rows == [(K(":a"),)]


def test_retracting_what_is_not_there_changes_nothing(store: FactStore) -> None:
    result = store.retract('[[:nobody :name "x"]]', reason="cleanup")
    assert (result.tx, result.retracted) == (None, 0)
    assert store.current_tx() == 0


def test_a_reason_is_required(store: FactStore) -> None:
    with pytest.raises(InvalidInput, match="reason"):
        store.execute("(transact [[:a :b 1]])")
    with pytest.raises(InvalidInput, match="reason"):
        store.transact("[[:a :b 1]]", reason="  ")


def test_valid_to_must_follow_valid_from(store: FactStore) -> None:
    with pytest.raises(DatalogError, match="valid-to must be later"):
        store.execute('(transact {:valid-from "2024-01-01" :valid-to "2023-01-01"} [[:a :b 1]])', reason="bad")
    with pytest.raises(DatalogError, match="valid-to must be later"):
        store.execute('(transact [[:a :b 1 {:valid-to "2001-01-01"}]])', reason="ends before now")


def test_change_supersedes_and_keeps_what_we_believed(store: FactStore) -> None:
    store.transact('[[:pref/db :choice "MySQL"]]', reason="first choice", valid_from="2024-01-01")
    result = store.change(
        add=[(":pref/db", ":choice", "PostgreSQL")],
        close=[(":pref/db", ":choice", "MySQL")],
        at="2025-01-01",
        reason="never use MySQL again",
    )
    assert (result.tx, result.added, result.retracted) == (2, 1, 1)
    choice = "[:find ?c {opts} :where [:pref/db :choice ?c]]"
    assert store.query(choice.format(opts=':valid-at "2024-06-01"')).rows == [("MySQL",)]
    assert store.query(choice.format(opts=':valid-at "2025-06-01"')).rows == [("PostgreSQL",)]
    assert store.query(choice.format(opts="")).rows == [("PostgreSQL",)]
    assert store.query(choice.format(opts=':as-of 1 :valid-at "2025-06-01"')).rows == [("MySQL",)]
    nothing = store.change(close=[(":pref/db", ":choice", "MySQL")], at="2026-01-01", reason="again")
    assert (nothing.tx, nothing.unchanged) == (None, 1)
