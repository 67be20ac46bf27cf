"""`tempera learn dream`, `tempera learn reflect`, `tempera learn contradict`: the dream cycle by hand, and what it
found."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import click

from tempera.cli.common import emit, json_option, open_memory

max_usd_option = click.option(
    "--max-usd",
    "max_usd",
    type=click.FloatRange(min=0),
    default=None,
    help="USD cap of this run (default dream.default_max_usd); 0 runs on the LLM-free fallbacks.",
)


def _llm_line(report: dict[str, Any]) -> str:
    if report["llm"] == "on":
        return f"LLM on, ${report['spent_usd']:.4f} of ${report['max_usd']:.2f} spent"
    return f"LLM off ({report['llm']}): every phase ran on its LLM-free fallback"


def _render_cycle(r: dict[str, Any]) -> None:
    if r["status"] == "planned":
        total = sum(p["estimate_usd"] for p in r["phases"])
        llm = "LLM on" if r["llm"] == "on" else f"LLM off ({r['llm']}): fallbacks only"
        click.echo(
            f"Plan (dry run: nothing is called or written); {llm}; worst case ${total:.4f} of ${r['max_usd']:.2f}"
        )
    else:
        click.echo(
            f"Dream cycle {r['id']} ({r['trigger']}, started {r['started_at'][:19]}): {r['status']}; {_llm_line(r)}"
        )
    for p in r["phases"]:
        cost = p["estimate_usd"] if r["status"] == "planned" else p["spent_usd"]
        click.echo(f"  {p['phase']:<15}{p['status']:<12}{p['mode']:<9}${cost:.4f}  {p['summary']}")


@click.command()
@max_usd_option
@click.option(
    "--phase",
    "phases",
    multiple=True,
    metavar="PHASE",
    help="Run only this phase (repeatable; they still run in cycle order). See --list.",
)
@click.option("--list", "list_phases", is_flag=True, help="List the phases in order and exit.")
@click.option("--dry-run", is_flag=True, help="Print the plan and its worst-case cost; call nothing, write nothing.")
@click.option("--last", is_flag=True, help="Show the last cycle (run by hand or by the daemon) and exit.")
@json_option
def dream(
    max_usd: float | None, phases: tuple[str, ...], list_phases: bool, dry_run: bool, last: bool, as_json: bool
) -> None:
    """Run the dream cycle: verify_advance -> decay -> reflect -> patterns -> contradict -> templates.

    One USD budget covers the whole cycle; a paid phase takes only the work whose worst case fits what is left,
    and leaves the rest for a later cycle. Every LLM step has an LLM-free fallback, so without ANTHROPIC_API_KEY
    (or with --max-usd 0) the cycle still runs, on fallbacks. The daemon runs it by itself after idle periods
    (dream.idle_minutes) and nightly (dream.nightly_time).
    """
    from tempera.dream.cycle import PHASES, last_cycle, plan_cycle, run_cycle, select_phases

    if list_phases:

        def render(rows: list[dict[str, Any]]) -> None:
            for r in rows:
                click.echo(f"{r['phase']:<15}{'LLM+fallback' if r['paid'] else 'free':<14}{r['summary']}")

        emit([{"phase": p.name, "paid": p.paid, "summary": p.summary} for p in PHASES], as_json, render)
        return
    select_phases(phases)  # a bad name fails before the model loads
    with open_memory(use_model=not last) as mem:
        if last:
            found = last_cycle(mem.db)
            emit(found, as_json, lambda r: _render_cycle(r) if r else click.echo("no dream cycle has run yet"))
            return
        if dry_run:
            report = plan_cycle(mem, max_usd=max_usd, phases=phases or None)
        else:
            report = run_cycle(mem, max_usd=max_usd, phases=phases or None, trigger="manual")
    emit(report.as_dict(), as_json, _render_cycle)


def _day_results(db: Any, day: date) -> list[dict[str, Any]]:
    rows = db.query(
        "SELECT COALESCE(p.name, v.project_id), v.score, v.judged_by, r.written_by, r.title, r.path "
        "FROM dream_verdicts v LEFT JOIN reflections r ON r.project_id = v.project_id AND r.day = v.day "
        "LEFT JOIN projects p ON p.id = v.project_id WHERE v.day = ? ORDER BY 1",
        (day.isoformat(),),
    )
    return [
        {"project": r[0], "score": r[1], "judged_by": r[2], "written_by": r[3], "title": r[4], "path": r[5]}
        for r in rows
    ]


@click.command()
@click.option(
    "--date",
    "day",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="The day to reflect on, YYYY-MM-DD (default: yesterday, local time).",
)
@max_usd_option
@click.option("--dry-run", is_flag=True, help="Show what would be triaged and written, and the worst-case cost.")
@json_option
def reflect(day: datetime | None, max_usd: float | None, dry_run: bool, as_json: bool) -> None:
    """Write the reflection of one day: the cheap model's triage score gates the better model's reflection.

    A project needs dream.reflect_min_episodes episodes that day. Verdicts are cached, so a day is never triaged
    twice; without the LLM the day's signal score decides and the reflection is extractive (outcomes, errors
    resolved, files most touched, corrections). Pages go to DATA_DIR/reflections/.
    """
    from tempera.dream.cycle import plan_cycle, run_cycle

    when = day.date() if day else date.today() - timedelta(days=1)
    with open_memory() as mem:
        if dry_run:
            emit(plan_cycle(mem, max_usd=max_usd, phases=["reflect"], days=[when]).as_dict(), as_json, _render_cycle)
            return
        report = run_cycle(mem, max_usd=max_usd, phases=["reflect"], trigger="reflect", days=[when]).as_dict()
        report["day"], report["results"] = when.isoformat(), _day_results(mem.db, when)
        threshold, min_episodes = mem.config.dream.reflect_min_score, mem.config.dream.reflect_min_episodes

    def render(r: dict[str, Any]) -> None:
        click.echo(f"{r['day']}: {r['phases'][0]['summary']}; {_llm_line(r)}")
        for x in r["results"]:
            if x["written_by"]:
                click.echo(
                    f"  {x['project']}: {x['title']} ({x['written_by']}, score {x['score']:.2f})\n    {x['path']}"
                )
            else:
                click.echo(
                    f"  {x['project']}: triage score {x['score']:.2f} ({x['judged_by']}) is below "
                    f"{threshold}; no reflection"
                )
        if not r["results"]:
            click.echo(f"  no project had {min_episodes}+ episodes with something to learn from that day")

    emit(report, as_json, render)


@click.command()
@click.option("--list", "list_only", is_flag=True, help="Only list what earlier cycles found; probe nothing now.")
@max_usd_option
@json_option
def contradict(list_only: bool, max_usd: float | None, as_json: bool) -> None:
    """Contradictions in memory: pairs of frequently retrieved episodes that disagree, and conflicting facts.

    Without --list the contradict phase runs first (pairs in dream.contradict_min/max_similarity, judged by the
    cheap model or, without it, by opposite outcomes and opposite polarity on the same files). The rate of
    contradicting pairs comes with its Wilson 95% interval.
    """
    from tempera.dream.contradictions import contradiction_rate, episode_conflicts, fact_conflicts
    from tempera.dream.cycle import run_cycle

    with open_memory(use_model=not list_only) as mem:
        if not list_only:
            run_cycle(mem, max_usd=max_usd, phases=["contradict"], trigger="contradict")
        min_conf = mem.config.dream.contradict_min_confidence
        data = {
            "rate": contradiction_rate(mem.db, min_conf),
            "episodes": episode_conflicts(mem.db, min_conf),
            "facts": fact_conflicts(mem.db),
        }

    def render(d: dict[str, Any]) -> None:
        rate = d["rate"]
        if rate["pairs"]:
            click.echo(
                f"Contradiction rate: {rate['contradictions']}/{rate['pairs']} judged pairs "
                f"({rate['rate']:.0%}, 95% CI {rate['ci95'][0]:.0%}-{rate['ci95'][1]:.0%})"
            )
        else:
            click.echo("No episode pairs judged yet (run `tempera learn contradict` or `tempera learn dream`).")
        for c in d["episodes"]:
            click.echo(
                f"[{c['confidence']:.2f} {c['judged_by']}] {c['project']}: {c['claim']}\n"
                f"    {c['a_id'][:8]} [{c['a_outcome']}] {c['a_summary'][:90]}\n"
                f"    {c['b_id'][:8]} [{c['b_outcome']}] {c['b_summary'][:90]}"
            )
        for f in d["facts"]:
            where = f" in {f['project']}" if f.get("project") else ""
            click.echo(f"[facts] {f['subject']}{where}: {f['a']} ({f['a_polarity']}) vs {f['b']} ({f['b_polarity']})")
        if not d["episodes"] and not d["facts"]:
            click.echo("No active contradictions.")

    emit(data, as_json, render)


COMMANDS = [dream, reflect, contradict]
