"""Schema audit: the whole current state of each typed entity is validated; --fix retracts with history kept."""

from __future__ import annotations

from tempera.facts import FactStore, Keyword
from tempera.facts.audit import audit
from tempera.facts.entity_types import validate

K = Keyword


def test_adding_an_attribute_to_a_valid_entity_is_allowed(store: FactStore) -> None:
    store.transact('[[:decision/use-redis :description "use Redis for the cache"]]', reason="decided")
    store.transact(
        '[[:decision/use-redis :rationale "latency"] [:decision/use-redis :motivated-by :c/x]]', reason="added the why"
    )
    report = audit(store)
    assert (report.audited, report.violations) == (1, [])


def test_violations_are_reported_and_not_fixed_by_default(store: FactStore) -> None:
    store.transact(
        """[[:decision/orphan :rationale "no description"]
                       [:constraint/no-mysql :description "never use MySQL"] [:constraint/no-mysql :priority "high"]
                       [:commit/abc :hash 42]
                       [:project/anything :whatever 1]]""",
        reason="messy writes",
    )
    report = audit(store)
    kinds = {(str(v.entity), v.kind, v.attribute) for v in report.violations}
    assert kinds == {
        (":decision/orphan", "missing-required", ":description"),
        (":constraint/no-mysql", "unknown-attribute", ":priority"),
        (":commit/abc", "wrong-type", ":hash"),
    }
    assert report.audited == 3 and report.retracted == 0 and report.tx is None
    assert len(store.query("[:find ?e ?a ?v :where [?e ?a ?v]]").rows) == 5


def test_fix_retracts_the_invalid_facts_and_keeps_history(store: FactStore) -> None:
    store.transact(
        """[[:decision/orphan :rationale "no description"]
                       [:constraint/no-mysql :description "never use MySQL"]
                       [:constraint/no-mysql :priority "high"]]""",
        reason="messy writes",
    )
    report = audit(store, fix=True)
    assert report.retracted == 2 and report.tx == 2
    left = store.query("[:find ?e ?a :where [?e ?a _]]").rows
    assert left == [(K(":constraint/no-mysql"), K(":description"))]
    assert len(store.query("[:find ?e ?a :as-of 1 :where [?e ?a _]]").rows) == 3
    reason = store.history(":decision/orphan").rows[-1][-1]
    assert reason.startswith("audit: ") and ":decision/orphan decision needs :description" in reason
    assert audit(store).violations == []


def test_validate_is_usable_before_writing() -> None:
    assert validate(K(":preference/tabs"), {":description": ["tabs"], ":polarity": [K(":for")]}) == []
    assert [v.kind for v in validate(K(":preference/tabs"), {":polarity": ["for"]})] == [
        "missing-required",
        "wrong-type",
    ]
    assert validate(K(":service/payment"), {":anything": [1]}) == []
