"""`tempera import`: fill memory from existing Claude Code transcripts; and `tempera capture --session FILE`."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory
from tempera.core.errors import InvalidInput, NotFound
from tempera.transcripts.capture import CaptureResult, capture_transcript
from tempera.transcripts.importer import ImportReport, claude_projects_dir, find_sessions, import_transcripts


def _parse_since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise InvalidInput(f"--since {text!r}: use a date like 2025-06-01 or 2025-06-01T14:00") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _result_line(path: Path, result: CaptureResult | None) -> str:
    if result is None:
        return f"{path}: no activity since the given date, skipped"
    c = result.counts()
    return (f"{path}: {c['turns']} turns, +{c['added']} added, {c['updated']} updated, {c['skipped']} skipped"
            + (f", {c['lines_skipped']} bad lines" if c["lines_skipped"] else ""))


def _render_table(report: ImportReport) -> None:
    t = report.totals()
    rows = [("files", t["files"]), ("sessions", t["sessions"]), ("turns", t["turns"]),
            ("episodes added", t["episodes_added"]), ("episodes updated", t["episodes_updated"]),
            ("episodes skipped", t["episodes_skipped"]), ("lines skipped", t["lines_skipped"]),
            ("seconds", f"{t['seconds']:.2f}")]
    if t["files_skipped_since"]:
        rows.insert(1, ("files before --since", t["files_skipped_since"]))
    if t["unknown_types"]:
        rows.append(("unknown record types", ", ".join(f"{k} {v}" for k, v in sorted(t["unknown_types"].items()))))
    click.echo(("Dry run (nothing stored)\n" if report.dry_run else "") + "-" * 34)
    for label, value in rows:
        click.echo(f"{label:<22}{value:>12}")


def _run_import(mem: Any, files: list[Path], project: str | None, since: datetime | None, dry_run: bool,
                as_json: bool) -> ImportReport:
    """Plain lines (or nothing, with --json) when not on a terminal; a progress bar when on one."""
    if as_json or not sys.stdout.isatty():
        echo = None if as_json else (lambda p, r: click.echo(_result_line(p, r)))
        return import_transcripts(mem, files, project=project, since=since, dry_run=dry_run, on_file=echo)
    with click.progressbar(length=len(files), label="Importing", show_pos=True,
                           item_show_func=lambda p: p.name[:40] if p else None) as bar:
        return import_transcripts(mem, files, project=project, since=since, dry_run=dry_run,
                                  on_file=lambda p, r: bar.update(1, p))


@click.command("import")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--project", "-p", default=None, help="Store every episode under this project (path, name or id) "
                                                     "instead of each session's working directory.")
@click.option("--since", default=None, metavar="DATE", help="Only sessions with activity on or after DATE "
                                                            "(YYYY-MM-DD or an ISO timestamp).")
@click.option("--dry-run", is_flag=True, help="Read and count, store nothing.")
@click.option("--no-embed", is_flag=True, help="Store without vectors (faster); `tempera index` adds them later.")
@json_option
def import_(paths: tuple[Path, ...], project: str | None, since: str | None, dry_run: bool, no_embed: bool,
            as_json: bool) -> None:
    """Import Claude Code transcripts into memory: one episode per user request turn.

    PATHS are transcript files or folders (searched recursively for *.jsonl); the default is Claude Code's
    projects folder ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects). Each session keeps a cursor, so
    importing again adds only turns that are new since, and updates a last turn that grew. Secrets are
    redacted before anything is stored.

    \b
    tempera import                        # everything Claude Code has kept
    tempera import ~/.claude/projects/-home-me-shop --since 2025-06-01
    tempera import session.jsonl --project shop --dry-run
    """
    roots = list(paths) or [claude_projects_dir()]
    missing = [str(p) for p in roots if not p.expanduser().exists()]
    if missing:
        raise NotFound(f"no such file or folder: {', '.join(missing)}"
                       + ("" if paths else " (Claude Code has not written transcripts here; set CLAUDE_CONFIG_DIR "
                                        "or pass a path)"))
    files = find_sessions(roots)
    with open_memory(use_model=not no_embed) as mem:
        report = _run_import(mem, files, project, _parse_since(since), dry_run, as_json)
    emit(report.totals(), as_json, lambda _: _render_table(report))


def capture_session(session_file: Path, project: str | None, as_json: bool) -> None:
    """`tempera capture --session FILE`: capture one transcript through its cursor."""
    if not session_file.expanduser().is_file():
        raise NotFound(f"no transcript at {session_file}")
    with open_memory() as mem:
        result = capture_transcript(mem, session_file, project=project)
    out = result.counts() | {"episodes": [{"id": e.id, "summary": e.summary.splitlines()[0][:120]}
                                          for e in result.added + result.updated]}
    emit(out, as_json, lambda o: [click.echo(_result_line(session_file, result))]
         + [click.echo(f"  {e['id'][:8]}  {e['summary']}") for e in o["episodes"]])


COMMANDS = [import_]
