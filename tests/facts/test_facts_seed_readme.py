"""Every example query of the Temporal Reasoning README (shared/seeds/temporal-reasoning-readme.txt) runs and
answers as the README says, on a small history built to match the transaction numbers it uses."""

from __future__ import annotations

from tempera.facts import FactStore, Keyword

K = Keyword


def pad_to(store: FactStore, tx: int) -> None:
    """Unrelated transactions until the next write gets number `tx`."""
    while store.current_tx() < tx - 1:
        store.transact([(K(":filler/n"), K(":n"), store.current_tx())], reason="filler")


def test_time_travel_before_and_after_a_changed_decision(store: FactStore) -> None:
    pad_to(store, 3)
    assert store.transact('[[:project/db :name "PostgreSQL"]]', reason="Initial choice").tx == 3
    pad_to(store, 11)
    why = "Switching to CockroachDB for geo-distribution"
    assert store.retract('[[:project/db :name "PostgreSQL"]]', reason=why).tx == 11
    store.transact('[[:project/db :name "CockroachDB"]]', reason=why)
    assert store.query("[:find ?name :as-of 10 :where [:project/db :name ?name]]").rows == [("PostgreSQL",)]
    assert store.query("[:find ?name :where [:project/db :name ?name]]").rows == [("CockroachDB",)]
    reasons = {row[2]: row[7] for row in store.history(":project/db").rows if row[4] == "PostgreSQL"}
    assert reasons == {"assert": "Initial choice", "retract": why}


def test_dependency_graph_before_a_refactor(store: FactStore) -> None:
    store.transact(
        "[[:svc/api :calls :svc/auth] [:svc/auth :calls :svc/db] [:svc/api :calls :svc/legacy]]",
        reason="code structure",
    )
    pad_to(store, 31)
    store.retract("[[:svc/api :calls :svc/legacy]]", reason="auth refactor removed the legacy path")
    store.transact("[[:svc/api :calls :svc/session]]", reason="auth refactor")
    before = {(K(":svc/api"), K(":svc/auth")), (K(":svc/auth"), K(":svc/db")), (K(":svc/api"), K(":svc/legacy"))}
    assert set(store.query("[:find ?caller ?callee :as-of 30 :where [?caller :calls ?callee]]").rows) == before
    now = set(store.query("[:find ?caller ?callee :where [?caller :calls ?callee]]").rows)
    assert (K(":svc/api"), K(":svc/session")) in now and (K(":svc/api"), K(":svc/legacy")) not in now


def test_coupling_and_the_decision_that_caused_it(store: FactStore) -> None:
    store.transact(
        """[[:project/service-a :depends-on :project/service-b]
                       [:decision/shared-cache :motivated-by :constraint/latency]
                       [:constraint/latency :description "p99 under 50 ms"]]""",
        reason="architecture review",
    )
    rows = store.query("""[:find ?reason
                           :where [:project/service-a :depends-on :project/service-b]
                                  [?d :motivated-by ?c]
                                  [?c :description ?reason]]""").rows
    assert rows == [("p99 under 50 ms",)]


def test_modules_coupled_to_payment_when_the_db_decision_was_made(store: FactStore) -> None:
    store.transact(
        "[[:module/orders :depends-on :service/payment] [:module/cart :depends-on :service/payment]]", reason="ingest"
    )
    pad_to(store, 15)
    store.transact('[[:decision/db :description "use PostgreSQL"]]', reason="DB decision")
    store.transact("[[:module/billing :depends-on :service/payment]]", reason="later coupling")
    rows = store.query("[:find ?module :as-of 15 :where [?module :depends-on :service/payment]]").rows
    assert set(rows) == {(K(":module/orders"),), (K(":module/cart"),)}


def test_storing_and_querying_a_decision(store: FactStore) -> None:
    store.transact(
        '[[:decision/cache-strategy :decision/description "use Redis"]]',
        reason="Architecture decision for low-latency caching",
    )
    assert store.query("[:find ?d :where [?e :decision/description ?d]]").rows == [("use Redis",)]
    assert store.query("[:find (count ?e) :where [?e :decision/description ?d]]").rows == [(1,)]


def test_basic_and_temporal_queries(store: FactStore) -> None:
    store.transact("[[:x :attr 1]]", reason="first")
    pad_to(store, 6)
    store.transact("[[:y :attr 2]]", reason="later")
    assert set(store.query("[:find ?x :where [?e :attr ?x]]").rows) == {(1,), (2,)}
    assert store.query("[:find ?x :as-of 5 :where [?e :attr ?x]]").rows == [(1,)]


def test_graph_traversal_examples(store: FactStore) -> None:
    store.transact(
        """[[:project/api-gateway :calls :project/auth-service]
                       [:project/api-gateway :calls :project/orders]
                       [:project/auth-service :name "auth-service"]
                       [:project/orders :name "orders"]
                       [:project/token-cache :depends-on :project/key-store]
                       [:project/auth-service :depends-on :project/token-cache]
                       [:project/orders :depends-on :project/auth-service]
                       [:decision/asyncio-choice :motivated-by :constraint/io-bound]
                       [:constraint/io-bound :description "the service is I/O bound"]
                       [:project/auth-service :entity-type :type/component]
                       [:project/orders :entity-type :type/component]
                       [:project/key-store :entity-type :type/store]]""",
        reason="graph",
    )
    single_hop = "[:find ?name :where [:project/api-gateway :calls ?svc] [?svc :name ?name]]"
    assert set(store.query(single_hop).rows) == {("auth-service",), ("orders",)}
    two_hop = "[:find ?svc :where [?mid :depends-on :project/key-store] [?svc :depends-on ?mid]]"
    assert store.query(two_hop).rows == [(K(":project/auth-service"),)]
    why = "[:find ?reason :where [:decision/asyncio-choice :motivated-by ?c] [?c :description ?reason]]"
    assert store.query(why).rows == [("the service is I/O bound",)]
    typed = "[:find ?name :where [?e :entity-type :type/component] [?e :name ?name]]"
    assert set(store.query(typed).rows) == {("auth-service",), ("orders",)}
