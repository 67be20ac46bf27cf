"""Tables of the fact graph, as named migrations applied when a FactStore is opened (the core never imports facts).

fact_tx       one row per transaction: monotonic number, wall-clock time, the required reason.
fact_datoms   one row per asserted fact. Retraction sets `retracted_tx` and keeps the row, so any earlier
              transaction can still be queried. Valid time is [valid_from, valid_to) in ms; NULL valid_to = open.
fact_rules    Datalog rules, one clause per row, kept as canonical EDN text.
"""

from __future__ import annotations

from tempera.core.db import Connection, Migration, run_script


def m001_fact_graph(conn: Connection) -> None:
    run_script(conn, """
    CREATE TABLE fact_tx (
        tx INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0)
    );
    CREATE INDEX fact_tx_at ON fact_tx(at);
    CREATE TABLE fact_datoms (
        id INTEGER PRIMARY KEY,
        e TEXT NOT NULL,
        a TEXT NOT NULL,
        vt INTEGER NOT NULL,
        v,
        valid_from INTEGER NOT NULL,
        valid_to INTEGER,
        tx INTEGER NOT NULL REFERENCES fact_tx(tx),
        retracted_tx INTEGER REFERENCES fact_tx(tx)
    );
    CREATE INDEX fact_datoms_ea ON fact_datoms(e, a);
    CREATE INDEX fact_datoms_av ON fact_datoms(a, v);
    CREATE INDEX fact_datoms_tx ON fact_datoms(tx);
    CREATE INDEX fact_datoms_retracted ON fact_datoms(retracted_tx) WHERE retracted_tx IS NOT NULL;
    CREATE TABLE fact_rules (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        arity INTEGER NOT NULL,
        text TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX fact_rules_name ON fact_rules(name);
    """)


MIGRATIONS: list[Migration] = [
    ("facts.001_fact_graph", m001_fact_graph),
]
