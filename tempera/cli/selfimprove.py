"""Self-improvement commands: the mistakes and should-have-asked logs, ask-backs, templates, calibration, brief.

They mirror the v0.8-v0.10 CLI of the original Tempera
(github.com/anvanster/tempera). None of them needs the embedding model, so they open memory without it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from tempera.cli.common import all_projects_option, emit, json_option, open_memory, project_option
from tempera.core.models import TASK_TYPES
from tempera.core.selfimprove import askbacks, asks, calibration, mistakes, templates

files_option = click.option(
    "--files",
    default="",
    help="Comma-separated files concerned (relative to the current "
    "directory, or absolute); stored relative to the project root.",
)


def _stack(*options: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Apply several click options as one decorator (first listed = first in --help)."""

    def apply(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return apply


anchored_options = _stack(
    files_option,
    click.option(
        "--scope",
        default=None,
        help="project (default: stays in this project) | forever | language:X | crate:X@V | domain:X | workaround:REF.",
    ),
    click.option("--episode", default=None, help="Episode id (8+ chars) this belongs to."),
    click.option("--session-id", default=None, help="Claude Code session id."),
    project_option,
    json_option,
)
log_read_options = _stack(
    click.option(
        "--top", type=click.IntRange(1, 100), default=None, help="Show the N most frequent instead of the raw list."
    ),
    click.option(
        "--limit", "-n", type=click.IntRange(1, 10_000), default=50, show_default=True, help="Rows in the raw list."
    ),
    all_projects_option,
    json_option,
)


def _project_id(mem: Any, project: str | None) -> str | None:
    return mem.store.projects.resolve(project).id if project else None


def _log(item: Any, log_fn: Callable[..., int | None], what: str, as_json: bool) -> None:
    with open_memory(use_model=False) as mem:
        row_id = log_fn(mem.store, item, cwd=os.getcwd())
    emit(
        {"id": row_id, "logged": row_id is not None, "what": what},
        as_json,
        lambda d: click.echo(f"Logged {d['what']} #{d['id']}." if d["logged"] else f"Already logged: {d['what']}."),
    )


def _emit_rows(rows: list[dict[str, Any]], as_json: bool, line: Callable[[dict[str, Any]], str], empty: str) -> None:
    """Rows as JSON, or one formatted block per row (`empty` when there are none)."""
    emit(rows, as_json, lambda rs: click.echo("\n".join(line(r) for r in rs) if rs else empty))


def _show(
    top_fn: Callable[..., list[dict[str, Any]]],
    list_fn: Callable[..., list[Any]],
    columns: tuple[str, str, str],
    top: int | None,
    limit: int,
    project: str | None,
    as_json: bool,
) -> None:
    """A log's raw list (newest first), or with --top its most frequent values of columns[0]."""
    key, head, body = columns
    with open_memory(use_model=False) as mem:
        pid = _project_id(mem, project)
        if top:
            rows = top_fn(mem.db, project_id=pid, limit=top)
            _emit_rows(rows, as_json, lambda r: _top_line(r, key), "Nothing logged.")
            return
        rows = [e.as_dict() for e in list_fn(mem.db, project_id=pid, limit=limit)]
    _emit_rows(rows, as_json, lambda r: _entry_lines(r, head, body), "Nothing logged.")


def _entry_lines(r: dict[str, Any], head: str, body: str) -> str:
    files = f"  files: {', '.join(r['files'])}" if r["files"] else ""
    scope = f"  scope: {r['scope']}" if r["scope"] != "project" else ""
    return (
        f"#{r['id']}  {r['created_at'][:10]}  [{r['project']}]  {r[head]}{scope}{files}\n    {r[body]}"
        + (f"\n    -> {r['correction']}" if r.get("correction") else "")
        + (f"\n    answer: {r['answer']}" if r.get("answer") else "")
    )


def _top_line(r: dict[str, Any], key: str) -> str:
    where = f", {r['projects']} projects" if r["projects"] > 1 else ""
    return f"{r['count']:>4}x  {r[key]}  (last {r['last_seen'][:10]}{where})"


@click.command("log-correction")
@click.option("--category", required=True, help="Short key of the kind of mistake, e.g. validation_skipped.")
@click.option("--description", required=True, help="What was done or assumed that was wrong.")
@click.option("--correction", default="", help="What is right instead.")
@anchored_options
def log_correction(as_json: bool, **fields: Any) -> None:
    """Log a correction the user made; briefs for the same files will show its category."""
    _log(mistakes.CorrectionInput(**fields), mistakes.log_correction, "correction", as_json)


@click.command("mistakes")
@log_read_options
def mistakes_cmd(top: int | None, limit: int, project: str | None, as_json: bool) -> None:
    """The correction log (every project unless --project), or its top categories with --top N."""
    _show(
        mistakes.top_categories,
        mistakes.mistakes,
        ("category", "category", "description"),
        top,
        limit,
        project,
        as_json,
    )


@click.command("log-should-have-asked")
@click.option("--trigger", required=True, help="The situation where the question belongs, e.g. 'edit auth middleware'.")
@click.option("--question", required=True, help="The question that should have been asked up front.")
@click.option("--answer", default="", help="The answer it eventually got.")
@anchored_options
def log_should_have_asked(as_json: bool, **fields: Any) -> None:
    """Log a question that should have been asked before acting; briefs for the same files will show it."""
    _log(asks.ShouldHaveAskedInput(**fields), asks.log_should_have_asked, "should-have-asked", as_json)


@click.command("asks")
@log_read_options
def asks_cmd(top: int | None, limit: int, project: str | None, as_json: bool) -> None:
    """The should-have-asked log (every project unless --project), or its most repeated questions with --top N."""
    _show(asks.top_questions, asks.asks, ("question", "trigger", "question"), top, limit, project, as_json)


@click.command("session-start")
@project_option
@click.option("--session-id", default=None, help="Claude Code session id (recorded as the consumer).")
@json_option
def session_start_cmd(project: str | None, session_id: str | None, as_json: bool) -> None:
    """Show and consume this project's pending ask-back(s), with its project-level brief."""
    from tempera.core.brief import session_start

    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project)
        brief = session_start(mem, ref.id, by=session_id or "cli")
        text = brief.render(mem.config.inject.budget_chars)
    emit(brief.as_dict(), as_json, lambda _: click.echo(text or f"Nothing pending for {ref.name}."))


@click.command("ask-backs")
@click.option("--pending", is_flag=True, help="Only those not yet shown to a session.")
@all_projects_option
@json_option
def ask_backs_cmd(pending: bool, project: str | None, as_json: bool) -> None:
    """History of the clarifying questions drafted after failed or partial turns with a vague intent."""
    with open_memory(use_model=False) as mem:
        rows = [
            a.as_dict() for a in askbacks.ask_backs(mem.db, project_id=_project_id(mem, project), pending_only=pending)
        ]
    _emit_rows(
        rows,
        as_json,
        lambda r: (
            f"#{r['id']}  {r['created_at'][:10]}  [{r['project']}]  {r['status']} "
            f"({r['drafted_by']})\n    {r['question']}\n    {r['context']}"
        ),
        "No ask-backs.",
    )


@click.group("templates")
def templates_group() -> None:
    """Reasoning templates: the steps verified successes of one (task type, domain) had in common."""


def _template_lines(t: dict[str, Any]) -> str:
    head = (
        f"{t['task_type']}/{t['domain'] or '-'}  [{t['project']}]  {t['title']}  "
        f"({len(t['evidence'])} episodes, {t['extracted_by']}{', transferable' if t['transferable'] else ''})"
    )
    return "\n".join([head] + [f"    {n}. {step}" for n, step in enumerate(t["steps"], 1)])


@templates_group.command("list")
@all_projects_option
@json_option
def templates_list(project: str | None, as_json: bool) -> None:
    """Stored templates (every project unless --project)."""
    with open_memory(use_model=False) as mem:
        rows = [t.as_dict() for t in templates.list_templates(mem.db, project_id=_project_id(mem, project))]
    _emit_rows(rows, as_json, _template_lines, "No templates yet.")


@templates_group.command("get")
@click.option("--task-type", required=True, type=click.Choice(TASK_TYPES))
@click.option("--domain", default=None, help="Domain tag; without it, the task type's general template.")
@click.option("--cross-project", is_flag=True, help="Fall back to a transferable template of another project.")
@project_option
@json_option
def templates_get(task_type: str, domain: str | None, cross_project: bool, project: str | None, as_json: bool) -> None:
    """The template for (task type, domain) in this project."""
    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project)
        found = templates.get_template(mem.db, ref.id, task_type, domain, cross_project=cross_project)
    emit(
        found.as_dict() if found else None,
        as_json,
        lambda t: click.echo(
            _template_lines(t) if t else f"No template for {task_type}/{domain or '-'} in {ref.name}."
        ),
    )


@templates_group.command("extract")
@click.option(
    "--max-usd",
    type=click.FloatRange(0),
    default=None,
    help="Cost cap of the LLM calls (default dream.default_max_usd); 0 mines without the LLM.",
)
@all_projects_option
@json_option
def templates_extract(max_usd: float | None, project: str | None, as_json: bool) -> None:
    """Build templates now from successful, verified episodes (the dream cycle also does this)."""
    with open_memory(use_model=False) as mem:
        pid = _project_id(mem, project)
        cap = mem.config.dream.default_max_usd if max_usd is None else max_usd
        rows = [t.as_dict() for t in templates.extract_templates(mem, project_id=pid, max_usd=cap)]
    _emit_rows(
        rows,
        as_json,
        _template_lines,
        "No new templates (each needs dream.templates_min_evidence successful, verified episodes).",
    )


@click.command("calibration")
@all_projects_option
@click.option("--task-type", type=click.Choice(TASK_TYPES), default=None)
@json_option
def calibration_cmd(project: str | None, task_type: str | None, as_json: bool) -> None:
    """Declared vs verified successes per (task type, project), with a 95% Wilson interval."""
    with open_memory(use_model=False) as mem:
        rows = [
            b.as_dict() for b in calibration.buckets(mem.db, project_id=_project_id(mem, project), task_type=task_type)
        ]

    _emit_rows(rows, as_json, _bucket_line, "No episodes yet.")


def _bucket_line(r: dict[str, Any]) -> str:
    ratio = "-" if r["ratio"] is None else f"{r['ratio']:.0%}"
    return (
        f"{r['project']:<20} {r['task_type']:<9} verified {r['verified']:>4} / declared {r['declared']:>4}  "
        f"{ratio:>5}  [{r['wilson_low']:.0%}, {r['wilson_high']:.0%}]"
        + (f"  ({r['corrected']} corrected)" if r["corrected"] else "")
    )


@click.command("brief")
@click.option("--files", default="", help="Comma-separated files about to be touched.")
@click.option("--task-type", type=click.Choice(TASK_TYPES), default=None)
@click.option("--domain", default=None, help="Domain tag, e.g. auth-middleware.")
@click.option("--cross-project", is_flag=True, help="Add transferable rows of other projects, tagged [from P].")
@click.option(
    "--budget", type=click.IntRange(200, 9000), default=None, help="Text size cap (default inject.budget_chars)."
)
@project_option
@json_option
def brief_cmd(
    files: str,
    task_type: str | None,
    domain: str | None,
    cross_project: bool,
    budget: int | None,
    project: str | None,
    as_json: bool,
) -> None:
    """Everything Tempera knows about this change: pending ask-back, template, correction categories for these
    files, should-have-asked triggers and a calibration warning. Reads only; consumes nothing."""
    from tempera.core.brief import build_brief
    from tempera.core.selfimprove.anchors import anchor_files

    with open_memory(use_model=False) as mem:
        ref = mem.store.projects.resolve(project)
        paths = anchor_files([f for f in files.split(",") if f.strip()], ref.path, os.getcwd())
        brief = build_brief(mem, ref.id, paths, task_type, domain, cross_project)
        text = brief.render(budget or mem.config.inject.budget_chars)
    emit(brief.as_dict(), as_json, lambda _: click.echo(text or "Nothing to surface for these files yet."))


COMMANDS = [
    log_correction,
    mistakes_cmd,
    log_should_have_asked,
    asks_cmd,
    session_start_cmd,
    ask_backs_cmd,
    templates_group,
    calibration_cmd,
    brief_cmd,
]
