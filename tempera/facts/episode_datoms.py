"""Episodes as datoms: a read-only view of the `episodes` and `projects` tables for Datalog, not a copy.

Each attribute below is a subquery with the columns of `fact_datoms` (e, a, vt, v, valid_from, valid_to, tx,
retracted_tx). The compiler reads it instead of `fact_datoms` for a pattern whose attribute is that constant, so
`[?e :episode/file "src/auth.py"]` joins with stored facts in one SQL statement and always shows the episodes
as they are now (an edited or forgotten episode changes the answer at once; nothing is kept in step).

The entity is the episode's id as a #uuid, which is also what `:stated-in` edges of per-turn facts point at.
An episode is valid from its creation time, so `:valid-at` before it leaves it out; it has no transaction
(tx 0), so every `:as-of` sees it. Only patterns that name the attribute see the view: `[?e ?a ?v]` reads the
stored facts alone. Episode files are stored relative to the project root, like git-ingested :path values.
"""

from __future__ import annotations

from tempera.facts.values import VT

_ID_SHAPE = "length(ep.id) = 36"  # every id is a UUID; the guard keeps a hand-made one from breaking decoding
_VALID_FROM_MS = "CAST(round((julianday(ep.created_at) - 2440587.5) * 86400000) AS INTEGER)"
_INSTANT = "strftime('%Y-%m-%dT%H:%M:%f', ep.created_at) || '000+00:00'"  # values.format_instant's shape
_PROJECT = "episodes ep JOIN projects p ON p.id = ep.project_id"


def _view(attribute: str, value: str, vt: VT, source: str = "episodes ep", where: str = "") -> str:
    condition = f"{_ID_SHAPE} AND {where}" if where else _ID_SHAPE
    return (
        f"(SELECT ep.id AS e, '{attribute}' AS a, {vt:d} AS vt, {value} AS v, {_VALID_FROM_MS} AS valid_from, "
        f"NULL AS valid_to, 0 AS tx, NULL AS retracted_tx FROM {source} WHERE {condition})"
    )


def _files(attribute: str, keys: str) -> str:
    """One datom per file path listed under `context.files_modified` / `files_read` (as `keys` selects)."""
    source = "episodes ep, json_each(ep.data, '$.context') c, json_each(c.value) f"
    return _view(attribute, "f.value", VT.STRING, source, f"c.key IN ({keys}) AND f.type = 'text'")


EPISODE_VIEWS: dict[str, str] = {
    ":episode/summary": _view(":episode/summary", "ep.summary", VT.STRING),
    ":episode/outcome": _view(":episode/outcome", "ep.outcome", VT.STRING),
    ":episode/task-type": _view(":episode/task-type", "ep.task_type", VT.STRING),
    ":episode/verification": _view(":episode/verification", "ep.verification", VT.STRING),
    ":episode/created-at": _view(":episode/created-at", _INSTANT, VT.INSTANT),
    ":episode/session": _view(":episode/session", "ep.session_id", VT.STRING, where="ep.session_id IS NOT NULL"),
    ":episode/commit": _view(
        ":episode/commit",
        "json_extract(ep.data, '$.outcome.commit')",
        VT.STRING,
        where="json_type(ep.data, '$.outcome.commit') = 'text'",
    ),
    ":episode/project": _view(":episode/project", "p.name", VT.STRING, _PROJECT),
    ":episode/project-id": _view(":episode/project-id", "ep.project_id", VT.STRING),
    ":episode/project-path": _view(":episode/project-path", "p.path", VT.STRING, _PROJECT, "p.path IS NOT NULL"),
    ":episode/file": _files(":episode/file", "'files_modified', 'files_read'"),
    ":episode/file-modified": _files(":episode/file-modified", "'files_modified'"),
    ":episode/file-read": _files(":episode/file-read", "'files_read'"),
}
