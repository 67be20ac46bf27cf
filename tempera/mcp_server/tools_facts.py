"""Fact-graph tools: Datalog queries, transact/retract with a reason, schema audit, and git ingestion.

Values travel as EDN text, as on the `tempera facts` command line: JSON has no keyword type, and `:alice` versus
`":alice"` is the difference between an entity and a string.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from tempera.core import paths, processes
from tempera.mcp_server import render
from tempera.mcp_server.project import client_workdir
from tempera.mcp_server.state import ToolResult, reply, with_facts, with_memory

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.facts import FactStore

MAX_EDN = 200_000

Reason = Annotated[
    str, Field(description="Why this change is made; stored with the transaction.", min_length=1, max_length=2000)
]
Facts = Annotated[
    str,
    Field(
        description='EDN facts: [[:entity :attribute value] ...], e.g. [[:project/db :name "tempera"]].',
        min_length=2,
        max_length=MAX_EDN,
    ),
]
Moment = Annotated[str | None, Field(description="ISO date or date-time.", min_length=4, max_length=40)]


def _tx_text(result: dict[str, Any], verb: str) -> str:
    if result["tx"] is None:
        return f"No change: {result['unchanged']} fact(s) already in that state."
    return f"tx {result['tx']} at {result['at']}: {result[verb]} {verb}, {result['unchanged']} unchanged."


async def tempera_query(
    ctx: Context,
    query: Annotated[
        str,
        Field(
            description="Datalog: [:find ?x :where [?e :attr ?x]], with optional :as-of "
            'N|"ISO time", :valid-at "ISO date"|:any-valid-time, :in, '
            ":order-by, :limit.",
            min_length=2,
            max_length=MAX_EDN,
        ),
    ],
    params: Annotated[
        dict[str, Annotated[str, Field(max_length=MAX_EDN)]] | None,
        Field(
            description='Values for :in variables and $slots, each as EDN text, e.g. {"name": "\\"Alice\\"", '
            '"ids": "[:a :b]"}.',
            max_length=50,
        ),
    ] = None,
) -> ToolResult:
    """Call to ask the bi-temporal fact graph what is (or was) true: decisions, code structure, dependencies.
    Without :as-of it sees the current state; :as-of an earlier transaction shows what was believed then, and
    :valid-at a date shows what held at that date."""
    from tempera.facts.edn import to_edn
    from tempera.facts.parser import parse_value

    def work(store: "FactStore") -> ToolResult:
        values = {name: parse_value(text) for name, text in (params or {}).items()}
        result = store.query(query, values or None)
        return reply(
            result.to_json(), render.rows_text(result.columns, [[to_edn(v) for v in row] for row in result.rows])
        )

    return await with_facts(ctx, work)


async def tempera_transact(
    ctx: Context, facts: Facts, reason: Reason, valid_from: Moment = None, valid_to: Moment = None
) -> ToolResult:
    """Call to record facts worth keeping beyond this session (a decision and its rationale, an ownership, a
    constraint). Each transaction keeps its reason; valid_from/valid_to bound when the facts hold in the world
    (default: from now, open). Asserting a fact that is already current changes nothing."""

    def work(store: "FactStore") -> ToolResult:
        data = store.transact(facts, reason=reason, valid_from=valid_from, valid_to=valid_to).to_json()
        return reply(data, _tx_text(data, "added"))

    return await with_facts(ctx, work)


async def tempera_retract(ctx: Context, facts: Facts, reason: Reason) -> ToolResult:
    """Call when recorded facts stopped being true or were wrong. They leave the current state but stay in the
    history, queryable with :as-of an earlier transaction."""

    def work(store: "FactStore") -> ToolResult:
        data = store.retract(facts, reason=reason).to_json()
        return reply(data, _tx_text(data, "retracted"))

    return await with_facts(ctx, work)


async def tempera_audit(
    ctx: Context,
    fix: Annotated[bool, Field(description="Retract the invalid facts in one transaction (history is kept).")] = False,
) -> ToolResult:
    """Call to check typed entities (:decision/..., :module/..., :commit/...) against their schema, e.g. after
    transacting by hand. Reports only unless fix=true."""
    from tempera.facts.audit import audit

    def work(store: "FactStore") -> ToolResult:
        data = audit(store, fix=fix).to_json()
        return reply(data, render.audit_text(data))

    return await with_facts(ctx, work)


def _start_ingestion(db_path: Path, repo: Path, since: str | None) -> int:
    """Run the ingestion in its own process (it outlives this server; progress goes to the status file)."""
    command = [sys.executable, "-m", "tempera.facts.ingest_git", "--db", str(db_path), str(repo)]
    with (db_path.parent / paths.FACTS_INGEST_LOG_NAME).open("ab") as log:
        process = processes.start_detached(
            command + ([f"--since={since}"] if since else []), stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
    return process.pid


async def tempera_ingest_git(
    ctx: Context,
    path: Annotated[
        str | None,
        Field(
            description="A directory inside the git repository; default the "
            "client's root (or the server's working directory).",
            min_length=1,
            max_length=4096,
        ),
    ] = None,
    since: Annotated[
        str | None,
        Field(
            description="Start after this revision; default after the last ingested commit.",
            min_length=1,
            max_length=200,
        ),
    ] = None,
) -> ToolResult:
    """Call once per repository (and again after new commits) to load its code structure from git history into
    the fact graph: commits, files, modules and their imports, functions, methods, classes, interfaces, types and
    calls of Python, Go, TypeScript, JavaScript, Rust and Java, each valid from the commit that added it to the one
    that removed it (so :valid-at asks what called a function before a date). Runs in the background; follow it
    with tempera_ingest_status."""
    from tempera.core.gitrepo import work_tree
    from tempera.facts.ingest_git import read_status, status_path

    where = path or await client_workdir(ctx)

    def work(mem: "Memory") -> ToolResult:
        root, dotgit = work_tree(where)
        if dotgit is None:
            raise ToolError(f"{where} is not inside a git repository; pass the path of one")
        repo = Path(root)
        if read_status(status_path(mem.db.path)).get("state") == "running":
            raise ToolError("an ingestion is already running; call tempera_ingest_status to follow it")
        pid = _start_ingestion(mem.db.path, repo, since)
        return reply(
            {"started": True, "pid": pid, "repository": str(repo)},
            f"Ingestion of {repo} started (pid {pid}); call tempera_ingest_status to follow it.",
        )

    return await with_memory(ctx, work)


async def tempera_ingest_status(ctx: Context) -> ToolResult:
    """Call to follow a git ingestion started with tempera_ingest_git: progress while it runs, else the outcome
    of the last one (time taken, last commit, or the error)."""
    from tempera.facts.ingest_git import read_status, status_path

    def work(mem: "Memory") -> ToolResult:
        status = read_status(status_path(mem.db.path))
        return reply(status, render.ingest_status_text(status))

    return await with_memory(ctx, work)


TOOLS = [tempera_query, tempera_transact, tempera_retract, tempera_audit, tempera_ingest_git, tempera_ingest_status]
