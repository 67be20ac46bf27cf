"""`tempera facts ...`: query and edit the bi-temporal fact graph from the shell.

Values print as EDN (keywords as :name, strings quoted). Expected errors (a Datalog error with its position,
a missing reason) become one-line messages with exit code 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from tempera.core import paths, processes
from tempera.core.errors import TemperaError

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
reason_option = click.option(
    "--reason", "-r", required=True, help="Why this change is made; stored with the transaction (required)."
)


@contextmanager
def _facts(ctx: click.Context) -> Iterator[Any]:
    """Open the fact store; domain errors become a one-line ClickException (exit 1, no traceback)."""
    from tempera.core.migrations import connect
    from tempera.facts import FactStore

    try:
        db = connect(ctx.obj["db"])
        try:
            yield FactStore(db)
        finally:
            db.close()
    except TemperaError as exc:
        raise click.ClickException(str(exc)) from None


def _text_arg(text: str) -> str:
    return sys.stdin.read() if text == "-" else text


def _table(columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    from tempera.facts.edn import to_edn

    cells = [[to_edn(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    click.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    click.echo(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")


def _emit(data: dict[str, Any], as_json: bool, text: str) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str) if as_json else text)


def _tx_text(result: Any, verb: str) -> str:
    if result.tx is None:
        return f"no change ({result.unchanged} fact{'s' if result.unchanged != 1 else ''} already in that state)"
    count = result.added if verb == "added" else result.retracted
    extra = f", {result.unchanged} unchanged" if result.unchanged else ""
    return f"tx {result.tx} at {result.at}: {count} {verb}{extra}"


@click.group("facts", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Database file (default: the Tempera database in the data dir).",
)
@click.pass_context
def facts_group(ctx: click.Context, db_path: Path | None) -> None:
    """The bi-temporal fact graph: facts with transaction time and valid time, queried with Datalog.

    Queries use minigraf's dialect, e.g.
    tempera facts query '[:find ?name :as-of 10 :where [:project/db :name ?name]]'
    """
    from tempera.core.paths import db_path as default_db_path

    ctx.obj = {"db": db_path or default_db_path()}


@facts_group.command("query")
@click.argument("query")
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="NAME=EDN",
    help="A value for an :in variable or a $slot, e.g. -p name='\"Alice\"' or -p ids='[:a :b]'.",
)
@json_option
@click.pass_context
def query_cmd(ctx: click.Context, query: str, params: tuple[str, ...], as_json: bool) -> None:
    """Run a Datalog QUERY ('[:find ... :where ...]' or '(query [...])'; '-' reads stdin).

    Options inside the query: :as-of N|"ISO time", :valid-at "ISO date"|:any-valid-time, :with, :in,
    :order-by, :limit. Without :as-of the current state is seen; without :valid-at, facts valid now.
    """
    values = {}
    for item in params:
        name, sep, text = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected NAME=EDN, got {item!r}", param_hint="--param")
        values[name] = text
    with _facts(ctx) as store:
        from tempera.facts.parser import parse_value

        result = store.query(_text_arg(query), {k: parse_value(v) for k, v in values.items()} or None)
        if as_json:
            _emit(result.to_json(), True, "")
        else:
            _table(result.columns, result.rows)


@facts_group.command("transact")
@click.argument("facts")
@reason_option
@click.option("--valid-from", help="Start of valid time for these facts (ISO date/time; default: now).")
@click.option("--valid-to", help="End of valid time, exclusive (ISO date/time; default: open).")
@json_option
@click.pass_context
def transact_cmd(
    ctx: click.Context, facts: str, reason: str, valid_from: str | None, valid_to: str | None, as_json: bool
) -> None:
    """Assert FACTS: '[[:entity :attribute value] ...]' or a full '(transact {...} [...])' ('-' reads stdin).

    Re-asserting a fact that is already current changes nothing and records no transaction.
    """
    with _facts(ctx) as store:
        text = _text_arg(facts).strip()
        if text.startswith("("):
            if not text[1:].lstrip().startswith("transact"):
                raise click.UsageError("expected facts '[[e a v] ...]' or a (transact ...) command")
            if valid_from or valid_to:
                raise click.UsageError("put :valid-from/:valid-to inside the (transact {...} ...) command")
            result = store.execute(text, reason=reason)
        else:
            result = store.transact(text, reason=reason, valid_from=valid_from, valid_to=valid_to)
        _emit(result.to_json(), as_json, _tx_text(result, "added"))


@facts_group.command("retract")
@click.argument("facts")
@reason_option
@json_option
@click.pass_context
def retract_cmd(ctx: click.Context, facts: str, reason: str, as_json: bool) -> None:
    """Retract FACTS '[[:entity :attribute value] ...]': they stop being current but stay in the history,
    queryable with :as-of an earlier transaction."""
    with _facts(ctx) as store:
        result = store.retract(_text_arg(facts), reason=reason)
        _emit(result.to_json(), as_json, _tx_text(result, "retracted"))


@facts_group.command("history")
@click.argument("entity")
@json_option
@click.pass_context
def history_cmd(ctx: click.Context, entity: str, as_json: bool) -> None:
    """Every assertion and retraction about ENTITY (e.g. :project/db), with transaction, reason and valid time."""
    with _facts(ctx) as store:
        result = store.history(entity)
        if as_json:
            _emit(result.to_json(), True, "")
        else:
            _table(result.columns, result.rows)


@facts_group.command("audit")
@click.option("--fix", is_flag=True, help="Retract the invalid facts (one transaction; history is kept).")
@json_option
@click.pass_context
def audit_cmd(ctx: click.Context, fix: bool, as_json: bool) -> None:
    """Check typed entities (:decision/..., :module/..., :commit/... ) against their schema.

    Reports only, unless --fix is given.
    """
    from tempera.facts.audit import audit

    with _facts(ctx) as store:
        report = audit(store, fix=fix)
        lines = [f"audited {report.audited} entities: {len(report.violations)} violation(s)"]
        lines += [f"  {v.entity}  {v.kind}  {v.detail}" for v in report.violations]
        if report.tx is not None:
            lines.append(f"retracted {report.retracted} fact(s) in tx {report.tx}")
        elif report.violations and not fix:
            lines.append("run with --fix to retract them")
        _emit(report.to_json(), as_json, "\n".join(lines))


@facts_group.command("rules")
@click.option("--add", "add", metavar="RULE", help="Register a rule: '(rule [(name ?a ?b) clause ...])'.")
@click.option("--drop", "drop", metavar="NAME", help="Remove every clause of the rule NAME.")
@json_option
@click.pass_context
def rules_cmd(ctx: click.Context, add: str | None, drop: str | None, as_json: bool) -> None:
    """List the stored rules (or add / drop one). Rules are checked for stratified negation when added."""
    with _facts(ctx) as store:
        if add:
            added = store.add_rule(_text_arg(add))
            click.echo(f"rule {added.name}/{added.arity} {'added' if added.added else 'was already stored'}")
        if drop:
            click.echo(f"dropped {store.drop_rule(drop)} clause(s) of {drop}")
        if add or drop:
            return
        rules = store.rules()
        if as_json:
            _emit({"rules": [r.to_json() for r in rules]}, True, "")
        else:
            click.echo("\n".join(f"(rule {r.text})" for r in rules) or "no rules")


@facts_group.command("ingest-git")
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--since", metavar="REV", help="Start after this revision (default: after the last ingested commit).")
@click.option("--wait", is_flag=True, help="Run in the foreground and print the result instead of in background.")
@click.pass_context
def ingest_git_cmd(ctx: click.Context, path: str, since: str | None, wait: bool) -> None:
    """Ingest the code structure of the git repository at PATH from its history.

    Commits, files, modules with their imports (:depends-on), functions, methods, classes, interfaces, types and
    calls of Python, Go, TypeScript, JavaScript, Rust and Java, each valid from the commit that added it to the
    commit that removed it, so `:valid-at` asks what called a function before a date. Files of other languages
    are skipped and counted. Incremental. Runs in the background unless --wait; follow it with
    `tempera facts ingest-status`.
    """
    import subprocess
    import time

    from tempera.core import gitrepo
    from tempera.facts.ingest_git import read_status, run_with_status, skipped_text, status_path, write_status

    db_path: Path = ctx.obj["db"]
    if read_status(status_path(db_path)).get("state") == "running":
        raise click.ClickException("an ingestion is already running; see `tempera facts ingest-status`")
    if not gitrepo.inside_repository(path):
        raise click.ClickException(f"{path} is not inside a git repository")
    if wait:
        try:
            report = run_with_status(db_path, path, since)
        except (TemperaError, gitrepo.git_error()) as exc:
            raise click.ClickException(str(exc).strip().splitlines()[0]) from None
        click.echo(
            f"ingested {report.commits} commit(s) of {report.repository} in {report.seconds:.1f} s"
            + skipped_text(report.unparsed_files)
        )
        return
    db_path.parent.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "tempera.facts.ingest_git", "--db", str(db_path), path]
    with (db_path.parent / paths.FACTS_INGEST_LOG_NAME).open("ab") as log:
        process = processes.start_detached(
            args + (["--since", since] if since else []), stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
    # "running" from now on, so that a status asked right away does not read "idle"; the run then takes over
    write_status(
        status_path(db_path),
        state="running",
        processed=0,
        total=None,
        repository=path,
        pid=process.pid,
        started_at=time.time(),
    )
    click.echo(f"ingestion started (pid {process.pid}); follow it with `tempera facts ingest-status`")


@facts_group.command("ingest-status")
@json_option
@click.pass_context
def ingest_status_cmd(ctx: click.Context, as_json: bool) -> None:
    """Progress of the running git ingestion, or the outcome of the last one (time taken, last commit)."""
    from tempera.facts.ingest_git import read_status, skipped_text, status_path

    status = read_status(status_path(ctx.obj["db"]))
    state = status["state"]
    if state == "running":
        text = f"running: {status.get('processed', 0)} of {status.get('total') or '?'} commits"
    elif state == "done":
        text = (
            f"done: {status['commits']} commit(s) of {status['repository']} in {status['seconds']:.1f} s, "
            f"last commit {status.get('last_commit') or '(none new)'}" + skipped_text(status.get("unparsed_files", 0))
        )
    elif state == "failed":
        text = f"failed: {status.get('error')}"
    else:
        text = "no ingestion has run"
    _emit(status, as_json, text)


COMMANDS = [facts_group]
