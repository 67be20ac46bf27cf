"""Which episodes changed which file: an index written with every episode, read by the outcome links.

`outcomes.link_session` asks, for each file a captured session changed, which earlier episodes of the project
changed it too. That used to be an FTS5 phrase over the path's words, confirmed by reading every candidate's
stored files with `json_each`: a common path word ("cli", "go") made it read hundreds of candidates, tens to
hundreds of ms per file (docs/experiments/episode-files-index.md). Here each episode's changed files are stored
once, relative to its project's root (`anchors.relative_path`, the form the links compare), so the question is one
index lookup. The rows go with their episode (ON DELETE CASCADE; `forget` sweeps every table with an
`episode_id`) and carry no project: a project merge re-keys the episode, not its files."""

from __future__ import annotations

import json
from collections.abc import Iterable

from tempera.core.db import Connection, Database, run_script
from tempera.core.selfimprove.anchors import anchor_files


def write(conn: Connection, episode_id: str, files: Iterable[str], root: str | None) -> None:
    """Replace the episode's rows with `files` (as stored on the episode) made relative to `root`."""
    replace_rows(conn, "episode_files", "file", episode_id, anchor_files(files, root))


def replace_rows(conn: Connection, table: str, key: str, episode_id: str, values: list[str]) -> None:
    """Replace the episode's rows of a table made by `episode_table` with `values`."""
    conn.execute(f"DELETE FROM {table} WHERE episode_id = ?", (episode_id,))
    conn.execute(
        f"INSERT OR IGNORE INTO {table}({key}, episode_id) SELECT value, ? FROM json_each(?)",
        (episode_id, json.dumps(values)),
    )


def episode_table(table: str, key: str) -> str:
    """The SQL of a table of (`key`, episode) rows, keyed by `key` for the lookup, with an index by episode for the
    cascade and for rewrites: its rows go with their episode (ON DELETE CASCADE)."""
    return f"""
    CREATE TABLE {table} (
        {key} TEXT NOT NULL,
        episode_id TEXT NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
        PRIMARY KEY ({key}, episode_id)
    ) WITHOUT ROWID;
    CREATE INDEX {table}_episode ON {table}(episode_id);
    """


def changed_before(db: Database, project_id: str, path: str, before: str, session_id: str) -> set[str]:
    """The live episodes of the project created before `before`, of other sessions, that changed `path`. Retired
    episodes (consolidated or expired, `learning/retire.py`) are left out: retrieval never returns them."""
    rows = db.query(
        "SELECT e.id FROM episode_files f JOIN episodes e ON e.id = f.episode_id WHERE f.file = ? "
        "AND e.project_id = ? AND e.created_at < ? AND COALESCE(e.session_id, '') != ? "
        "AND NOT EXISTS (SELECT 1 FROM episode_retirements r WHERE r.episode_id = e.id)",
        (path, project_id, before, session_id),
    )
    return {eid for (eid,) in rows}


def m071_episode_files(conn: Connection) -> None:
    """The table, keyed by file for the lookup (with an index by episode for the cascade and for rewrites), filled
    from the episodes already stored. The column is `file`, not `path`: `forget` deletes the files inside the data
    dir that a `path` column of a forgotten row names (the dream cycle's pages), and a project's `config.toml`
    must never name Tempera's own."""
    run_script(conn, episode_table("episode_files", "file"))
    rows = conn.execute(
        "SELECT id, json_extract(data, '$.context.files_modified'), json_extract(data, '$.project_path') FROM episodes"
    ).fetchall()
    for eid, files, root in rows:
        value = json.loads(files) if files else []
        write(conn, eid, [str(f) for f in value] if isinstance(value, list) else [], root)


def of_episodes(db: Database, episode_ids: Iterable[str]) -> dict[str, set[str]]:
    """Each episode's changed files, relative to its project's root (episodes that changed none are absent)."""
    out: dict[str, set[str]] = {}
    for eid, path in db.query(
        "SELECT episode_id, file FROM episode_files WHERE episode_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(episode_ids)),),
    ):
        out.setdefault(eid, set()).add(path)
    return out
