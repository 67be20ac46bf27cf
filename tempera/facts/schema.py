"""Tables of the fact graph, as named migrations applied when a FactStore is opened (the core never imports facts).

fact_tx       one row per transaction: monotonic number, wall-clock time, the required reason.
fact_datoms   one row per asserted fact. Retraction sets `retracted_tx` and keeps the row, so any earlier
              transaction can still be queried. Valid time is [valid_from, valid_to) in ms; NULL valid_to = open.
fact_rules    Datalog rules, one clause per row, kept as canonical EDN text.
"""

from __future__ import annotations

from tempera.core.db import Connection, Database, Migration, run_script
from tempera.facts.entity_types import PROJECT, STANCES, STATED_IN, project_key
from tempera.facts.values import VT


def m001_fact_graph(conn: Connection) -> None:
    run_script(
        conn,
        """
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
    """,
    )


def m002_stances_per_project(conn: Connection) -> None:
    """Per-turn stances used to be global entities named by kind and subject (`:constraint/mysql`), so one
    project's statement closed another project's stance. Each such entity whose `:stated-in` episodes all belong
    to one project becomes that project's, as turnfacts.py now names them (`:constraint/mysql.3f2a9c1b`): renamed
    wherever it stands (entity, or keyword value of a reference), and given a `:project` datom beside each of its
    `:description` datoms (same valid time, same transactions, so `:as-of` and `forget` see it with the rest of
    what the turn said). A closing that a turn of another project made is undone the way `forget` undoes a
    transaction (the closed copy goes, the original is current again), unless the stance's own project has said
    something about that subject since. An entity stated in several projects stays a global stance: which of its
    facts came from which project cannot be told reliably."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"episodes", "episode_facts"} <= tables:
        return
    kinds = ", ".join(f"'{k}'" for k in STANCES)
    legacy = conn.execute(
        f"SELECT d.e, min(ep.project_id) FROM fact_datoms d JOIN episodes ep ON ep.id = d.v WHERE d.a = '{STATED_IN}' "
        f"AND d.vt = {VT.UUID:d} AND d.retracted_tx IS NULL AND substr(d.e, 2, instr(d.e, '/') - 2) IN ({kinds}) "
        f"AND d.e NOT IN (SELECT e FROM fact_datoms WHERE a = '{PROJECT}') "
        "GROUP BY d.e HAVING count(DISTINCT ep.project_id) = 1"
    ).fetchall()
    renames = [(old, f"{old}.{project_key(pid)}", pid) for old, pid in legacy]
    renames = [r for r in renames if not conn.execute("SELECT 1 FROM fact_datoms WHERE e = ?", r[1:2]).fetchone()]
    reopen = [(old, tx) for old, _, pid in renames for tx in _closed_by_another_project(conn, old, pid)]
    for old, tx in reopen:
        conn.execute(f"DELETE FROM fact_datoms WHERE id IN ({_CLOSED_COPIES} AND c.tx = ?)", (old, tx))
        conn.execute("UPDATE fact_datoms SET retracted_tx = NULL WHERE e = ? AND retracted_tx = ?", (old, tx))
    for old, new, pid in renames:
        rename_entity(conn, old, new)
        conn.execute(
            "INSERT INTO fact_datoms(e, a, vt, v, valid_from, valid_to, tx, retracted_tx) "
            f"SELECT e, '{PROJECT}', {VT.STRING:d}, ?, valid_from, valid_to, tx, retracted_tx "
            "FROM fact_datoms WHERE e = ? AND a = ':description'",
            (pid, new),
        )


def has_fact_graph(db: Database) -> bool:
    """Has any code made the fact tables in this database yet? (Readers that must not create them ask.)"""
    return db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fact_datoms'") is not None


def rename_entity(conn: Connection, old: str, new: str) -> None:
    """Rename an entity wherever it stands: the entity of its datoms, and the keyword value of a reference."""
    conn.execute("UPDATE fact_datoms SET e = ? WHERE e = ?", (new, old))
    conn.execute(f"UPDATE fact_datoms SET v = ? WHERE vt = {VT.KEYWORD:d} AND v = ?", (new, old))


# copies ending in valid time that a transaction made of an entity's datoms it retracted (FactStore.change)
_CLOSED_COPIES = (
    "SELECT c.id FROM fact_datoms c JOIN fact_datoms o ON o.e = c.e AND o.a = c.a AND o.vt = c.vt "
    "AND o.v IS c.v AND o.valid_from = c.valid_from AND o.retracted_tx = c.tx "
    "WHERE c.e = ? AND c.valid_to IS NOT NULL AND c.retracted_tx IS NULL"
)


def _closed_by_another_project(conn: Connection, entity: str, project_id: str) -> list[int]:
    """The transactions that closed `entity` from a turn of another project, when its own project has stated
    nothing about the subject from that moment on."""
    subject = entity.split("/", 1)[1]
    group = [f":{kind}/{subject}" for kind in STANCES]
    out = []
    for tx, at in conn.execute(
        f"SELECT DISTINCT c.tx, c.valid_to FROM fact_datoms c WHERE c.id IN ({_CLOSED_COPIES})", (entity,)
    ).fetchall():
        projects = {
            p
            for (p,) in conn.execute(
                "SELECT ep.project_id FROM episode_facts f JOIN episodes ep ON ep.id = f.episode_id WHERE f.tx = ?",
                (tx,),
            )
        }
        since = conn.execute(
            f"SELECT 1 FROM fact_datoms d JOIN episodes ep ON ep.id = d.v WHERE d.a = '{STATED_IN}' AND d.e IN "
            "(?, ?, ?, ?) AND d.retracted_tx IS NULL AND ep.project_id = ? AND d.valid_from >= ?",
            (*group, project_id, at),
        ).fetchone()
        if projects and project_id not in projects and not since:
            out.append(tx)
    return out


MIGRATIONS: list[Migration] = [
    ("facts.001_fact_graph", m001_fact_graph),
    ("facts.002_stances_per_project", m002_stances_per_project),
]
