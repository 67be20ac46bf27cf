"""The per-turn hooks as tools, for clients that run no hooks: `memory_prepare_turn` answers what UserPromptSubmit
would inject, `memory_finalize_turn` runs the capture the Stop hook queues (the names Temporal Reasoning uses).

Both go through the daemon's own code (`tempera.inject.warm.handle_hook`: the hook's gate, then the warm answer
or the capture job's handler), so a turn told through these tools leaves memory as the hooks would have.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from tempera.inject.payload import MAX_PROMPT_CHARS
from tempera.mcp_server import args
from tempera.mcp_server.state import ToolResult, in_project, reply

if TYPE_CHECKING:
    from tempera.core.memory import Memory
    from tempera.inject.payload import HookPayload

TurnSession = Annotated[
    str | None,
    Field(
        description="The client's session id; pass the same one to both turn tools, so what was shown is not shown "
        "again and its use is credited. Default: one id per server process.",
        min_length=1,
        max_length=200,
    ),
]


def _session(session_id: str | None) -> str:
    """One stdio server serves one client session: its pid names that session when the client sends no id."""
    return session_id or f"mcp-{os.getpid()}"


async def memory_prepare_turn(
    ctx: Context,
    prompt: Annotated[
        str,
        Field(
            description="The user's message for this turn, as they wrote it.", min_length=1, max_length=MAX_PROMPT_CHARS
        ),
    ],
    session_id: TurnSession = None,
    project: args.Project = None,
) -> ToolResult:
    """Call at the start of every turn, with the user's message, when this client runs no Tempera hooks (Claude
    Code's hooks already do this): returns what the UserPromptSubmit hook would add to the prompt — related past
    episodes, recorded facts the prompt names, the brief — each shown once per session."""
    from tempera.inject.warm import handle_hook

    def work(mem: "Memory", workdir: str) -> ToolResult:
        cwd = (mem.store.projects.resolve(project, cwd=workdir).path or workdir) if project else workdir
        sid = _session(session_id)
        doc = {"hook_event_name": "UserPromptSubmit", "session_id": sid, "cwd": cwd, "prompt": prompt}
        out = handle_hook(mem, "UserPromptSubmit", doc, enqueue=lambda hp: None)
        context = str(out["hookSpecificOutput"]["additionalContext"]) if out else ""
        return reply({"session_id": sid, "context": context}, context or "Nothing new in memory bears on this prompt.")

    return await in_project(ctx, work)


def _transcript(transcript_path: str | None, session_id: str | None, workdir: str) -> Path:
    from tempera.transcripts.importer import session_transcript

    if transcript_path:
        path = Path(transcript_path).expanduser()
        return path if path.is_absolute() else Path(workdir) / path
    found = session_transcript(session_id or "")
    if found is None:
        raise ToolError(f"no transcript for session {session_id!r} under ~/.claude/projects; pass transcript_path")
    return found


async def memory_finalize_turn(
    ctx: Context,
    transcript_path: Annotated[
        str | None,
        Field(
            description="The session's JSONL transcript (Claude Code's format). Default: the one Claude Code keeps "
            "for session_id.",
            min_length=1,
            max_length=args.MAX_PATH,
        ),
    ] = None,
    session_id: TurnSession = None,
) -> ToolResult:
    """Call at the end of every turn when this client runs no Tempera hooks (Claude Code's Stop hook already does
    this): captures what is new in the session's transcript, as the Stop hook's job does — the episode, decisions
    as facts, corrections, whether the memories shown were used — and says what it stored."""
    from tempera.daemon.worker import handle_capture
    from tempera.inject.warm import handle_hook

    if not transcript_path and not session_id:
        raise ToolError("send transcript_path, or the session_id of a Claude Code session")

    def work(mem: "Memory", workdir: str) -> ToolResult:
        path = _transcript(transcript_path, session_id, workdir)
        done: list[dict[str, Any]] = []

        def capture(hp: "HookPayload") -> None:
            done.append(
                handle_capture(mem, {"transcript_path": hp.transcript_path, "session_id": hp.session_id or None})
            )

        doc = {"hook_event_name": "Stop", "session_id": session_id or "", "transcript_path": str(path), "cwd": workdir}
        handle_hook(mem, "Stop", doc, enqueue=capture)
        outcome = done[0] if done else {"skipped": "Tempera is disabled or paused here"}
        if "skipped" in outcome:
            return reply(outcome, f"Nothing captured: {outcome['skipped']}.")
        return reply(
            outcome,
            f"Captured {path.name}: {outcome['added']} new and {outcome['updated']} updated "
            f"episode(s) from {outcome['turns']} turn(s).",
        )

    return await in_project(ctx, work)


TOOLS = [memory_prepare_turn, memory_finalize_turn]
