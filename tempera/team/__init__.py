"""Team memory: the shared part of memory on the team's own PostgreSQL + pgvector.

Local first: every hook reads only the local SQLite. The daemon pushes this machine's episodes, direct evidence,
session links and self-improvement rows of the projects shared with the team, and pulls teammates' into the
local store (sync.py). The database keeps access control (row-level security per project, pgschema.py)."""
