"""Commands that write and read episodes: capture, retrieve, feedback."""

from __future__ import annotations

import json
from pathlib import Path
from datetime import datetime
from typing import Any

import click
from pydantic import ValidationError

from tempera.cli.common import emit, json_option, open_memory, project_option, read_stdin_text, validation_message
from tempera.core.capture_input import CaptureInput
from tempera.core.errors import InvalidInput
from tempera.core.models import OUTCOMES, TASK_TYPES
from tempera.core.retrieve import MODES, Hit


def _parse_capture_stdin(text: str) -> list[CaptureInput]:
    """One JSON object, or JSON lines; every item is validated before anything is stored."""
    text = text.strip()
    if not text:
        raise InvalidInput("stdin is empty: send one JSON object or JSON lines with at least a `summary`")
    try:
        docs: list[Any] = [json.loads(text)]
    except json.JSONDecodeError:
        docs = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                docs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"stdin line {n}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
    items = []
    for n, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise InvalidInput(f"stdin item {n}: expected a JSON object with a `summary`, got {type(doc).__name__}")
        try:
            items.append(CaptureInput.model_validate(doc))
        except ValidationError as exc:
            raise InvalidInput(f"stdin item {n}: {validation_message(exc)}") from exc
    return items


@click.command()
@click.option("--summary", "-s", help="What was done and what worked. Omit to read JSON from stdin.")
@click.option("--task-type", type=click.Choice(TASK_TYPES), default="other", show_default=True)
@click.option("--outcome", type=click.Choice(OUTCOMES[:3]), default="success", show_default=True)
@click.option("--files", "files_modified", default="", help="Comma-separated files modified.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--errors-resolved", default="", help="Comma-separated error messages this work resolved.")
@click.option("--alternatives", default="", help="Comma-separated alternatives considered.")
@click.option(
    "--scope",
    "validity_scope",
    help="project | forever | language:X | crate:X@V | domain:X | workaround:REF[@YYYY-MM-DD]",
)
@click.option("--session-id", help="Claude Code session id to link with.")
@click.option(
    "--session",
    "session_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Capture every turn of one Claude Code transcript (JSONL).",
)
@project_option
@json_option
def capture(
    summary: str | None,
    task_type: str,
    outcome: str,
    files_modified: str,
    tags: str,
    errors_resolved: str,
    alternatives: str,
    validity_scope: str | None,
    session_id: str | None,
    session_file: Path | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Save an episode from flags, or from stdin (one JSON object or JSON lines with tempera_capture fields).

    \b
    tempera capture -s "Fixed the login redirect by validating return URLs" --task-type bugfix
    echo '{"summary": "...", "outcome": "partial"}' | tempera capture
    """
    if session_file is not None:
        from tempera.cli.transcripts import capture_session

        capture_session(session_file, project, as_json)
        return
    if summary is not None:
        items = [
            CaptureInput(
                summary=summary,
                task_type=task_type,
                outcome=outcome,
                files_modified=files_modified,
                tags=tags,
                errors_resolved=errors_resolved,
                alternatives_considered=alternatives,
                validity_scope=validity_scope,
                session_id=session_id,
                project=project,
            )
        ]
    else:
        items = _parse_capture_stdin(read_stdin_text())
        if project:
            items = [i.model_copy(update={"project": i.project or project}) for i in items]
    from tempera.transcripts.pipeline import learn_from_episodes

    with open_memory() as mem:
        episodes = mem.capture_many(items)
        learn_from_episodes(mem, episodes)
    out = [{"id": e.id, "project": e.project_name, "summary": e.summary} for e in episodes]
    emit(
        out,
        as_json,
        lambda rows: [click.echo(f"captured {r['id']}  [{r['project']}] {r['summary'][:80]}") for r in rows],
    )


def _render_hits(hits: list[dict[str, Any]]) -> None:
    if not hits:
        click.echo("No matching episodes.")
        return
    for n, h in enumerate(hits, 1):
        click.echo(
            f"{n}. {h['id'][:8]}  score {h['score']:.3f}  (relevance {h['relevance']:.2f}, "
            f"salience {h['salience']:.2f}, utility {h['utility']:.2f})  "
            f"{h['task_type']}/{h['outcome']}  [{h['project']}] {h['created_at'][:10]}"
        )
        click.echo(f"   {h['summary'][:200]}")


def _render_episode(d: dict[str, Any]) -> None:
    click.echo(f"Episode {d['id']}  [{d['project_name']}]  {d['created_at'][:19]}")
    click.echo(f"Summary:  {d['summary']}")
    intent = d["intent"]
    domains = ", ".join(intent["domains"]) or "-"
    click.echo(f"Task:     {intent['task_type']}   scope: {d['scope']}   domains: {domains}")
    o = d["outcome"]
    click.echo(f"Outcome:  {o['status']}   verification: {o['verification']}")
    u = d["utility"]
    click.echo(
        f"Utility:  {u['value']:.3f} (helpful {u['helpful']:.2f}, unhelpful {u['unhelpful']:.2f}, "
        f"retrieved {u['retrieval_count']}x)"
    )
    ctx = d["context"]
    for label, key in (("Modified", "files_modified"), ("Read", "files_read"), ("Commands", "commands")):
        if ctx[key]:
            click.echo(f"{label}: {', '.join(ctx[key][:15])}")
    for err in ctx["errors"][:10]:
        click.echo(f"Error:    {'[resolved] ' if err['resolved'] else ''}{err['message'][:160]}")
    if d["tags"]:
        click.echo(f"Tags:     {', '.join(d['tags'])}")
    if d["session_id"]:
        click.echo(f"Session:  {d['session_id']}")
    if d["source"]["transcript_path"]:
        click.echo(f"Source:   {d['source']['transcript_path']} ({len(d['source']['record_uuids'])} records)")


def _episode_dict(ep: Any) -> dict[str, Any]:
    d = ep.model_dump(mode="json")
    d["scope"] = str(ep.scope)
    return d


@click.command()
@click.argument("query", required=False)
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(1, 1000),
    default=None,
    help="Hits per query (default 5); with --all, how many to list (default all).",
)
@project_option
@click.option(
    "--cross-project", is_flag=True, help="Also return transferable (non-project-scoped) episodes of other projects."
)
@click.option("--mode", type=click.Choice(MODES), default=None, help="Default: retrieval.mode from config (hybrid).")
@click.option("--all", "list_all", is_flag=True, help="List episodes (newest first) instead of searching.")
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Batch: JSON lines {"id", "query", "project"?, "now"?} in, one JSON line of hits per query out '
    '("now": when the query is asked, ISO 8601).',
)
@json_option
def retrieve(
    query: str | None,
    limit: int | None,
    project: str | None,
    cross_project: bool,
    mode: str | None,
    list_all: bool,
    queries: Path | None,
    as_json: bool,
) -> None:
    """Search memories, list them (--all), show one (an id prefix of 8+ hex chars), or run a batch (--queries)."""
    with open_memory() as mem:
        if queries is not None:
            _batch(mem, queries, limit or 5, project, cross_project, mode)
            return
        if list_all:
            ref = mem.store.projects.resolve(project) if project else None
            eps = list(mem.store.iter_episodes(ref.id if ref else None, limit=limit))
            rows = [
                {
                    "id": e.id,
                    "created_at": e.created_at.isoformat(),
                    "project": e.project_name,
                    "task_type": e.intent.task_type,
                    "outcome": e.outcome.status,
                    "utility": e.utility.value,
                    "summary": e.summary,
                    "session_id": e.session_id,
                    "source": e.source.model_dump(),
                }
                for e in eps
            ]
            emit(
                rows,
                as_json,
                lambda rs: (
                    [
                        click.echo(
                            f"{r['id'][:8]}  {r['created_at'][:10]}  [{r['project']}] "
                            f"{r['task_type']}/{r['outcome']}  {r['summary'][:90]}"
                        )
                        for r in rs
                    ]
                    or click.echo("No episodes.")
                ),
            )
            return
        if query is None or not query.strip():
            raise InvalidInput("give a QUERY, an episode id prefix, --all or --queries FILE")
        if _looks_like_id(query):
            ep = mem.store.get(query)
            emit(_episode_dict(ep), as_json, _render_episode)
            return
        hits = mem.retrieve(query, project=project, limit=limit or 5, mode=mode, cross_project=cross_project)
        emit([h.as_dict() for h in hits], as_json, _render_hits)


def _looks_like_id(text: str) -> bool:
    """One token of 8+ hex digits (dashes allowed): an episode id or its prefix, shown or refused, never searched
    ("deadbeef" searched found nothing and said only that). No English word of 8+ letters is all a-f."""
    t = text.strip().lower()
    return len(t.replace("-", "")) >= 8 and all(c in "0123456789abcdef-" for c in t)


def _batch(mem: Any, path: Path, limit: int, project: str | None, cross: bool, mode: str | None) -> None:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            if not isinstance(q, dict) or not str(q.get("query", "")).strip():
                raise ValueError("needs a non-empty `query`")
        except ValueError as exc:
            raise InvalidInput(f"{path}:{n}: {exc}") from exc
        hits: list[Hit] = mem.retrieve(
            str(q["query"]),
            project=q.get("project") or project,
            limit=limit,
            mode=mode,
            cross_project=bool(q.get("cross_project", cross)),
            via="batch",
            now=_asked(q.get("now"), path, n),
        )
        click.echo(
            json.dumps(
                {"id": q.get("id", n), "query": q["query"], "hits": [h.as_dict() for h in hits]}, ensure_ascii=False
            )
        )


def _asked(value: Any, path: Path, n: int) -> datetime | None:
    """A batch query's `now` (ISO 8601 with a zone): when it is asked, for decay and words like "yesterday"."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidInput(f"{path}:{n}: `now` is not an ISO 8601 time: {value!r}") from exc
    if when.tzinfo is None:
        raise InvalidInput(f"{path}:{n}: `now` needs a time zone (e.g. 2023-05-08T13:56:00+00:00)")
    return when


@click.command()
@click.argument("signal", type=click.Choice(["helpful", "unhelpful"]))
@click.option("--episodes", "-e", required=True, help="Comma-separated episode ids or prefixes (8+ chars).")
@click.option("--note", default=None, help="Why (kept with the evidence).")
@json_option
def feedback(signal: str, episodes: str, note: str | None, as_json: bool) -> None:
    """Mark episodes helpful or unhelpful; their learned utility (and so their rank) moves accordingly."""
    ids = [e.strip() for e in episodes.split(",") if e.strip()]
    with open_memory(use_model=False) as mem:
        values = mem.feedback(signal, ids, evidence={"note": note} if note else None)
    emit(values, as_json, lambda v: [click.echo(f"{eid[:8]}  utility now {u:.3f}") for eid, u in v.items()])


COMMANDS = [capture, retrieve, feedback]
