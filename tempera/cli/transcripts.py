"""`tempera import`: fill memory from existing Claude Code transcripts; and `tempera capture --session FILE`."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory
from tempera.core.errors import InvalidInput, NotFound
from tempera.transcripts.capture import PAUSED
from tempera.transcripts.pipeline import capture_and_learn
from tempera.transcripts.importer import (
    FileOutcome,
    ImportReport,
    claude_projects_dir,
    failure_text,
    find_sessions,
    import_transcripts,
    oldest_first,
)


def _parse_since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInput(f"--since {text!r}: use a date like 2025-06-01 or 2025-06-01T14:00") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _result_line(path: Path, result: FileOutcome) -> str:
    if result is None:
        return f"{path}: no activity since the given date, skipped"
    if isinstance(result, Exception):
        return f"{path}: failed ({failure_text(result)}), the other files go on"
    if result.paused:
        return f"{path}: {PAUSED}, nothing stored"
    c = result.counts()
    return (
        f"{path}: {c['turns']} prompts, {c['units']} work units, +{c['added']} added, {c['updated']} updated, "
        f"{c['skipped']} unchanged" + (f", {c['lines_skipped']} bad lines" if c["lines_skipped"] else "")
    )


# What `record_counts` reasons mean to someone reading the table (reader skips and unknown types read as they are).
SKIP_LABELS = {
    "meta": "not a prompt: isMeta expansion",
    "local": "not a prompt: local command",
    "interrupt": "not a prompt: interruption",
    "compact_summary": "not a prompt: compaction summary",
    "hook_stop": "not a prompt: stopped by a hook",
    "notification": "not a prompt: task notification",
    "empty": "not a prompt: empty or IDE notice only",
}


def _render_table(report: ImportReport) -> None:
    t = report.totals()
    rows = [
        ("sessions", t["sessions"]),
        ("prompts", t["turns"]),
        ("work units", t["work_units"]),
        ("episodes created", t["episodes_added"]),
        ("episodes updated", t["episodes_updated"]),
        ("episodes unchanged", t["episodes_skipped"]),
        ("megabytes", f"{t['megabytes']:.1f}"),
        ("seconds", f"{t['seconds']:.2f}"),
        ("MB/s", t["mb_per_second"] or "-"),
    ]
    if t["files_skipped_since"]:
        rows.insert(1, ("files before --since", t["files_skipped_since"]))
    if t["files_paused"]:
        rows.insert(1, ("files paused", t["files_paused"]))
    if report.failures:
        rows.insert(1, ("files failed", len(report.failures)))
    click.echo(("Dry run (nothing stored)\n" if report.dry_run else "") + "-" * 34)
    for label, value in rows:
        click.echo(f"{label:<22}{value:>12}")
    skipped = {SKIP_LABELS.get(k, k): v for k, v in t["records_not_prompts"].items()}
    if skipped:
        click.echo("records skipped, by reason")
        for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            click.echo(f"  {reason:<40}{n:>8}")
    for path, error in report.failures:
        click.echo(f"{path}: failed ({error})")
    _render_projects(t["projects"])  # type: ignore[arg-type]


WHY = {  # why a session went to its project (project_lineage.Decision.kind), as the import summary says it
    "checkout": "ran in its checkout here",
    "folder": "ran in a folder of earlier sessions",
    "new": "ran in a folder not on this machine and matching no project",
    "worktree": "ran in a worktree of it",
    "branch-worktree": "ran in a git worktree beside it",
    "files": "touched its files",
    "project": "assigned with --project",
}


def _render_projects(projects: list[dict[str, Any]]) -> None:
    """The projects stored into, and for those whose checkout is not on this machine the one command that moves
    their memory into the checkout a hook will run in (sessions of several checkouts of one repository, named
    alike, in one command)."""
    if not projects:
        return
    click.echo("projects stored into")
    for p in projects:
        where = p["path"] or "no path"
        flags = ("new" if p["new"] else "existing") + ("" if p["on_this_machine"] else ", path not on this machine")
        click.echo(
            f"  {p['name']} ({p['id'][:8]}): {p['sessions']} sessions, {p['episodes_added']} episodes added, "
            f"{p['episodes_updated']} updated; {flags}; {where}"
        )
        why = ", ".join(f"{n} {WHY.get(kind, kind)}" for kind, n in sorted(p["why"].items(), key=lambda kv: -kv[1]))
        click.echo(f"    sessions: {why}")
    elsewhere: dict[str, list[str]] = {}
    for p in projects:
        if not p["on_this_machine"]:
            elsewhere.setdefault(p["name"], []).append(p["id"][:8])
    for name, ids in elsewhere.items():
        click.echo(
            f"warning: {len(ids)} project(s) named {name} have no checkout on this machine, so no hook here shows "
            f"their memory until one does: a checkout holding most of their files takes it in when first used; "
            f"else run: tempera projects merge {' '.join(ids)} <your checkout>"
        )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _run_import(
    mem: Any, files: list[Path], project: str | None, since: datetime | None, dry_run: bool, as_json: bool, quiet: bool
) -> ImportReport:
    """A progress bar (sessions, MB, rate, ETA) on a terminal; plain lines per file when not on one; nothing with
    --quiet or --json."""
    if as_json or quiet or not sys.stdout.isatty():
        echo = None if as_json or quiet else (lambda p, r: click.echo(_result_line(p, r)))
        return import_transcripts(mem, files, project=project, since=since, dry_run=dry_run, on_file=echo)
    total = sum(_size(f) for f in files)
    started, done = time.perf_counter(), [0, 0]

    def status(_: object) -> str:
        rate = done[1] / 1e6 / max(time.perf_counter() - started, 1e-6)
        return f"{done[0]}/{len(files)} sessions, {done[1] / 1e6:.1f}/{total / 1e6:.1f} MB, {rate:.2f} MB/s"

    def advance(path: Path, _: FileOutcome) -> None:
        size = _size(path)
        done[0], done[1] = done[0] + 1, done[1] + size
        bar.update(size, path)

    with click.progressbar(
        length=max(total, 1),
        label="Importing",
        show_eta=True,
        show_percent=True,
        item_show_func=lambda p: status(p) if p is not None else None,
    ) as bar:
        return import_transcripts(mem, files, project=project, since=since, dry_run=dry_run, on_file=advance)


@click.command("import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--project",
    "-p",
    default=None,
    help="Store every session under this project: a checkout's path, or the name or id of a project in memory "
    "(an unknown name is refused). Default: each session's own, from where it ran; for a folder not on this "
    "machine, the project its worktree layout or its files show (the summary says why).",
)
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Only sessions with activity on or after DATE (YYYY-MM-DD or an ISO timestamp).",
)
@click.option("--dry-run", is_flag=True, help="Read and count, store nothing.")
@click.option(
    "--no-embed", is_flag=True, help="Store without vectors (faster); `tempera memory index` adds them later."
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no line per file; only the final table.")
@json_option
def import_(
    paths: tuple[Path, ...],
    project: str | None,
    since: str | None,
    dry_run: bool,
    no_embed: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Import Claude Code transcripts into memory: one episode per unit of work (a short request is one; a long
    one is cut at compactions, task items, commits, tests turning green and changes of the files worked on).

    PATHS are transcript files or folders (searched recursively for *.jsonl); the default is Claude Code's
    projects folder ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects). Import runs the same steps as the
    Stop hook: episodes, corrections, should-have-asked moments, ask-backs, facts, session links and implicit
    feedback, oldest session first (each learns from the ones before it). Each session keeps a cursor, so
    importing again adds only work that is new since, and updates a last unit that grew. Secrets are redacted
    before anything is stored. The table at the end counts the records that were no prompt, by reason.

    \b
    tempera import                        # everything Claude Code has kept
    tempera import ~/.claude/projects/-home-me-shop --since 2025-06-01
    tempera import ~/old-laptop/-Users-me-shop --project ~/src/shop --dry-run
    """
    roots = list(paths) or [claude_projects_dir()]
    missing = [str(p) for p in roots if not p.expanduser().exists()]
    if missing:
        raise NotFound(
            f"no such file or folder: {', '.join(missing)}"
            + ("" if paths else " (Claude Code has not written transcripts here; set CLAUDE_CONFIG_DIR or pass a path)")
        )
    files = oldest_first(find_sessions(roots))
    with open_memory(use_model=not no_embed) as mem:
        report = _run_import(mem, files, project, _parse_since(since), dry_run, as_json, quiet)
    emit(report.totals(), as_json, lambda _: _render_table(report))


def capture_session(session_file: Path, project: str | None, as_json: bool) -> None:
    """`tempera capture --session FILE`: one transcript through the transcript pipeline, from its cursor."""
    if not session_file.expanduser().is_file():
        raise NotFound(f"no transcript at {session_file}")
    with open_memory() as mem:
        result = capture_and_learn(mem, session_file, project=project)
    out = result.counts() | {
        "episodes": [{"id": e.id, "summary": e.summary.splitlines()[0][:120]} for e in result.added + result.updated]
    }
    emit(
        out,
        as_json,
        lambda o: (
            [click.echo(_result_line(session_file, result))]
            + [click.echo(f"  {e['id'][:8]}  {e['summary']}") for e in o["episodes"]]
        ),
    )


COMMANDS = [import_]
