"""Commands of the learning loop: propagate, decay, advance-verification, review, prune, trends, explain,
refit-gate, refit-fusion."""

from __future__ import annotations

import os
from typing import Any

import click

from tempera.cli.common import all_projects_option, emit, json_option, open_memory
from tempera.core.models import VerificationState


def _project_id(mem: Any, project: str | None) -> str | None:
    return mem.store.projects.resolve(project).id if project else None


@click.command()
@click.option("--temporal", is_flag=True, help="Also recompute temporal credit (successes credit what led to them).")
@all_projects_option
@json_option
def propagate(temporal: bool, project: str | None, as_json: bool) -> None:
    """Spread value from episodes with strong evidence to similar ones (multi-hop Bellman propagation).

    Neighbours move toward their source's utility; propagated evidence is recomputed on every run, never
    piled up, so running it again changes nothing unless the evidence changed.
    """
    from tempera.core.learning.propagation import propagate as run

    with open_memory() as mem:
        report = run(mem, project_id=_project_id(mem, project), temporal=temporal)

    def render(r: dict[str, Any]) -> None:
        if r["skipped"]:
            click.echo(f"propagation skipped: {r['skipped']} (link shares refreshed: {r['link_shares']})")
            return
        click.echo(
            f"sources {r['sources']}, updated {r['updated_episodes']} episode(s) with "
            f"{r['evidence_rows']} evidence row(s); {'converged' if r['converged'] else 'NOT converged'} "
            f"({r['stopped_by']})"
        )
        for h in r["hops"]:
            click.echo(f"  hop {h['hop']}: {h['updates']} update(s), largest change {h['max_change']:.5f}")
        if r["temporal_rows"] is not None:
            click.echo(f"temporal credit rows: {r['temporal_rows']}")

    emit(report.as_dict(), as_json, render)


@click.command()
@all_projects_option
@click.option("--dry-run", is_flag=True, help="Report only; do not retire expired workarounds.")
@click.option("--restore", "restore_id", default=None, help="Put a retired episode (id or prefix) back into retrieval.")
@json_option
def decay(project: str | None, dry_run: bool, restore_id: str | None, as_json: bool) -> None:
    """Report what has faded (scope-aware decay) and retire workarounds past their expiry date.

    Retired episodes leave search but keep their row and evidence; --restore brings one back.
    """
    from tempera.core.learning.scope_decay import run_decay
    from tempera.core.learning.retire import restore

    with open_memory() as mem:
        if restore_id:
            episode_id = mem.store.resolve_id(restore_id)
            restore(mem.store, episode_id)
            emit({"restored": episode_id}, as_json, lambda d: click.echo(f"restored {d['restored']}"))
            return
        report = run_decay(mem, project_id=_project_id(mem, project), dry_run=dry_run).as_dict()

    def render(r: dict[str, Any]) -> None:
        click.echo(f"checked {r['checked']} episode(s); {r['faded_total']} faded below half freshness")
        for kind, s in r["by_scope"].items():
            click.echo(f"  {kind:<10} {s['episodes']:>6}  mean freshness {s['mean_freshness']:.3f}  faded {s['faded']}")
        for f in r["faded"][:20]:
            click.echo(f"  faded {f['id'][:8]}  {f['freshness']:.3f}  {f['scope']:<14} {f['summary'][:70]}")
        verb = "would retire" if r["dry_run"] else "retired"
        for f in r["cut"]:
            click.echo(f"  {verb} expired workaround {f['id'][:8]} ({f['scope']}) {f['summary'][:70]}")

    emit(report, as_json, render)


@click.command("advance-verification")
@click.option("--episode", "-e", default=None, help="Episode id or prefix to set by hand (with --to).")
@click.option(
    "--to", "to", type=click.Choice([s.value for s in VerificationState]), default=None, help="The state to set."
)
@click.option("--commit", default=None, help="The commit that carries the episode's change.")
@click.option("--all", "run_all", is_flag=True, help="Advance every episode from evidence (tests, git).")
@all_projects_option
@json_option
def advance_verification(
    episode: str | None, to: str | None, commit: str | None, run_all: bool, project: str | None, as_json: bool
) -> None:
    """Move episodes along untested -> tests_pass -> merged -> stable_no_revert.

    \b
    tempera learn advance-verification --all            # from evidence: passing tests, default-branch commits, reverts
    tempera learn advance-verification -e abc12345 --to merged --commit 1a2b3c4
    """
    from tempera.core.errors import InvalidInput
    from tempera.core.learning.verification import advance_all, set_state

    if run_all == bool(episode or to):
        raise InvalidInput("give either --all, or --episode ID with --to STATE")
    if not run_all and not (episode and to):
        raise InvalidInput("--episode and --to go together")
    with open_memory(use_model=False) as mem:
        if run_all:
            changes = advance_all(mem, project_id=_project_id(mem, project))
        else:
            changes = [set_state(mem, mem.store.resolve_id(episode or ""), to or "", commit=commit)]

    def render(rows: list[dict[str, Any]]) -> None:
        for c in rows:
            click.echo(f"{c['episode_id'][:8]}  {c['before']} -> {c['after']}  {'; '.join(c['reasons'])}")
        if not rows:
            click.echo("no episode changed state")

    emit([c.as_dict() for c in changes], as_json, render)


@click.command()
@click.option("--consolidate", is_flag=True, help="Merge near-duplicates (without it: list them only).")
@click.option("--dry-run", is_flag=True, help="With --consolidate: show the merges without making them.")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=None,
    help="Cosine similarity that makes a duplicate (default storage.consolidation_threshold).",
)
@all_projects_option
@json_option
def review(consolidate: bool, dry_run: bool, threshold: float | None, project: str | None, as_json: bool) -> None:
    """Find near-duplicate episodes of a project and (with --consolidate) merge them without losing anything.

    The survivor keeps both texts, histories (evidence rows), files, tags and sources, and the better outcome
    and verification; the absorbed episode stays stored, linked as `consolidated`, out of search.
    """
    from tempera.core.learning.consolidate import consolidate as run

    with open_memory() as mem:
        report = run(
            mem, project_id=_project_id(mem, project), dry_run=dry_run or not consolidate, threshold=threshold
        ).as_dict()

    def render(r: dict[str, Any]) -> None:
        if r["skipped"]:
            click.echo(f"review skipped: {r['skipped']}")
            return
        verb = "would merge" if r["dry_run"] else "merged"
        for m in r["merges"]:
            click.echo(f"{verb} {m['absorbed_id'][:8]} into {m['keep_id'][:8]} (similarity {m['similarity']:.3f})")
            click.echo(f"   keep: {m['keep_summary'][:90]}\n   gone: {m['absorbed_summary'][:90]}")
        if not r["merges"]:
            click.echo(f"no near-duplicates at similarity >= {r['threshold']}")

    emit(report, as_json, render)


@click.command()
@click.option("--older-than", "older_than", type=click.FloatRange(min=0), required=True, help="Age in days.")
@click.option(
    "--min-utility",
    "min_utility",
    type=click.FloatRange(0, 1),
    required=True,
    help="Episodes with utility below this go.",
)
@click.option("--execute", is_flag=True, help="Delete them (default: dry run, print what would go).")
@all_projects_option
@json_option
def prune(older_than: float, min_utility: float, execute: bool, project: str | None, as_json: bool) -> None:
    """Delete old, low-utility episodes that were retrieved at least storage.min_retrievals times."""
    from tempera.core.learning.prune import prune as run

    with open_memory(use_model=False) as mem:
        report = run(
            mem,
            older_than_days=older_than,
            min_utility=min_utility,
            execute=execute,
            project_id=_project_id(mem, project),
        ).as_dict()

    def render(r: dict[str, Any]) -> None:
        verb = "deleted" if r["executed"] else "would delete"
        for c in r["candidates"]:
            click.echo(
                f"{verb} {c['id'][:8]}  utility {c['utility']:.3f}  retrieved {c['retrievals']}x  "
                f"{c['created_at'][:10]}  {c['summary'][:70]}"
            )
        click.echo(
            f"{len(r['candidates'])} episode(s) {verb} (older than {r['older_than_days']:g} days, utility "
            f"< {r['min_utility']}, retrieved >= {r['min_retrievals']}x)"
            + ("" if r["executed"] else "; add --execute to delete")
        )

    emit(report, as_json, render)


@click.command()
@click.option("--bucket", type=click.Choice(["weekly", "monthly"]), default="weekly", show_default=True)
@all_projects_option
@json_option
def trends(bucket: str, project: str | None, as_json: bool) -> None:
    """Helpfulness over time, injected memories used, success rate (the learning curve), and domains."""
    from tempera.core.learning.trends import trends as run

    with open_memory(use_model=False) as mem:
        data = run(mem, bucket=bucket, project_id=_project_id(mem, project))

    def pct(x: float | None) -> str:
        return "   -" if x is None else f"{x * 100:3.0f}%"

    def render(d: dict[str, Any]) -> None:
        click.echo("period     episodes success helpful-share used-share")
        for p in d["periods"]:
            click.echo(
                f"{p['period']:<10} {p['episodes']:>8} {pct(p['success_rate']):>7} "
                f"{pct(p['helpfulness']):>13} {pct(p['use_rate']):>10}"
            )
        if d["domains"]:
            click.echo("domains: " + ", ".join(f"{x['domain']} {x['episodes']}" for x in d["domains"]))
        click.echo("task types: " + (", ".join(f"{x['task_type']} {x['episodes']}" for x in d["task_types"]) or "-"))

    emit(data, as_json, render)


@click.command()
@click.argument("episode_id")
@json_option
def explain(episode_id: str, as_json: bool) -> None:
    """Why an episode has its utility and rank: every evidence row, links, verification, freshness."""
    from tempera.core.learning.explain import explain as run

    with open_memory(use_model=False) as mem:
        data = run(mem, episode_id)

    def render(d: dict[str, Any]) -> None:
        click.echo(f"Episode {d['id']}  [{d['project']}]  {d['outcome']}\n  {d['summary'][:200]}")
        click.echo(f"Utility {d['utility']:.3f} = {d['posterior']}")
        click.echo(
            f"Salience {d['salience']:.3f} (score = relevance x salience) from utility {d['utility']:.3f}, "
            f"verification {d['verification']}, freshness {d['freshness']:.3f} ({d['scope']}), "
            f"recency {d['recency']:.3f}"
        )
        for line in d["outcome_evidence"]:
            click.echo(f"  outcome evidence: {line}")
        inj = d["injections"]
        click.echo(
            f"Retrieved {d['retrievals']}x; injected {inj['total']}x, judged {inj['judged']}, used {inj['used']}"
        )
        for source, agg in d["by_source"].items():
            click.echo(f"  {source:<12} +{agg['helpful']:.3f} / -{agg['unhelpful']:.3f}  ({agg['rows']:.0f} rows)")
        for r in d["evidence"][-20:]:
            click.echo(
                f"  {r['created_at'][:19]} {r['source']:<12} {r['signal']:<9} {r['weight']:.3f}  "
                f"{_evidence_line(r['evidence'])}"
            )
        for link in d["links"]:
            click.echo(f"  link {link['src_id'][:8]} -> {link['dst_id'][:8]} {link['relationship']} ({link['weight']})")
        for o in d["outcome_links"][-20:]:
            terms = o["prompt_terms"][:70]
            click.echo(
                f'  outcome link {o["src_id"][:8]} ({o["weight"]}): a later turn for "{terms}" changed its files'
            )
        if d["retired"]:
            click.echo(
                f"Retired ({d['retired']['reason']}) at {d['retired']['at'][:19]}"
                + (f" into {d['retired']['into_id']}" if d["retired"]["into_id"] else "")
            )

    emit(data, as_json, render)


def _evidence_line(evidence: dict[str, Any]) -> str:
    keys = ("rule", "note", "origin", "hop", "similarity", "relationship", "steps_back", "reasons")
    return ", ".join(f"{k}={str(evidence[k])[:60]}" for k in keys if k in evidence)


@click.command("refit-gate")
@click.option("--write", is_flag=True, help="Save the refit weights to config.toml when they beat the current ones.")
@json_option
def refit_gate(write: bool, as_json: bool) -> None:
    """Refit the prompt gate's weights (inject.gate_weights) on your own injections, judged used or ignored.

    Each episode injected at a prompt is logged with the gate's P(relevant) and its features; capturing the turn
    that followed judges it used or ignored. This fits the logistic weights on the earlier sessions and compares
    them with the current ones on the latest (about 30 % of the judged rows): log loss, calibration, accuracy.
    With --write, and only when the refit predicts the held-out verdicts better (log loss) and ranks them at least
    as well (AUC), the weights go to config.toml (its comments and other keys kept); the bar (inject.gate_bar)
    stays, so check how many held-out injections the refit still keeps at it.

    \b
    Selection bias: only hits that cleared the gate were shown, so only they have verdicts. The refit learns to
    rank and calibrate what the gate lets through, not what it keeps out; it is pulled toward the current weights,
    and "used" (the turn touched its files, commands or words) is a proxy for "relevant", not the same thing.
    It needs 70 used and 70 ignored injections to fit on (10 per weight) and 10 of each to check on.
    """
    from tempera.inject.gatefit import refit

    with open_memory(use_model=False) as mem:
        cfg = mem.config.inject
        report = refit(mem.db, list(cfg.gate_weights), cfg.gate_bar)
    saved = _save_refit("inject", {"gate_weights": report.refit}, report.better, write)
    out = {**report.as_dict(), **saved, "env_override": bool(saved["env_overrides"])}

    def render(d: dict[str, Any]) -> None:
        click.echo(
            f"fit on {d['fit_rows']} judged injection(s) of {d['fit_sessions']} session(s); checked on the latest "
            f"{d['held_out_sessions']} session(s)"
            + (
                f"; {d['without_features']} judged without the gate's features (older, or keyword-only), left out"
                if d["without_features"]
                else ""
            )
        )
        click.echo(f"features: intercept, {', '.join(d['features'])}")
        click.echo(f"current: {d['current']}\nrefit:   {d['refit']}")
        click.echo(f"  {'held out, ' + str(d['held_out_current']['rows']) + ' rows':<24}{'current':>9}{'refit':>9}")
        for key, label in (
            ("used_share", "used share"),
            ("mean_p", "mean P"),
            ("calibration_error", "calibration error"),
            ("log_loss", "log loss"),
            ("brier", "Brier"),
            ("accuracy", "accuracy (P >= 0.5)"),
            ("auc", "AUC"),
            ("kept_at_bar", f"kept at bar {d['bar']}"),
            ("used_share_kept", "used share, kept"),
            ("used_share_dropped", "used share, dropped"),
        ):
            cells = [_cell(d[f"held_out_{w}"][key]) for w in ("current", "refit")]
            click.echo(f"  {label:<24}{cells[0]:>9}{cells[1]:>9}")
        _echo_saved(
            d,
            "inject.gate_weights",
            "the refit predicts the held-out verdicts no better, or ranks them worse: the current weights stay",
            "the refit weights",
        )

    emit(out, as_json, render)


@click.command("refit-fusion")
@click.option("--write", is_flag=True, help="Save the refit values to config.toml when they beat the current ones.")
@click.option(
    "--labels",
    type=click.Choice(["both", "verdicts", "links"]),
    default="both",
    show_default=True,
    help="Which label source(s) to fit and check on.",
)
@all_projects_option
@json_option
def refit_fusion(write: bool, labels: str, project: str | None, as_json: bool) -> None:
    """Refit hybrid fusion ([retrieval] hybrid_keyword_max_weight, hybrid_keyword_coverage_power, rrf_k) on your
    own prompts, labelled by two sources kept apart (one row each; the report counts both):

    \b
    - verdicts: a prompt whose injected episodes capture judged; the ones judged used are its relevant episodes.
      The prompt is the injection log's (redacted, its first 500 characters), asked when the hook ran.
    - links: a prompt with outcome links; the earlier episodes that changed a file its turns went on to change are
      its relevant episodes, shown or not. The prompt is the one its episode's turn began with (redacted, whole),
      asked when that episode began. A fresh `tempera import` has these with no injection at all.

    Each labelled prompt is embedded once; every point of a small grid (keyword weight 2-5, coverage power 1.5-3,
    rrf_k 10/20/40: 48 points) ranks it in hybrid mode as the prompt hook would, at the time it was asked, among
    the episodes created before it and not shown earlier in its session (later episodes still take places in the
    BM25 and vector lists fused, since the indexes cannot be asked as of a time). The point with the best MRR@10
    on the earlier sessions is compared with the current values on the latest (about 30 % of the prompts): MRR@10,
    hit@5. Query evidence (retrieval.query_evidence_effect) is off while it ranks: it reads the very verdicts and
    links that are the labels. With --write, and only when the refit's held-out MRR is strictly higher (a tie keeps
    the current values), the keys that changed go to config.toml's [retrieval] (its comments and other keys kept).
    Progress goes to stderr.

    \b
    Selection bias of the verdicts: only episodes the current fusion (and the gate) put in front of the agent have
    verdicts, so every such relevant episode is one the current fusion already ranked high, and one a grid point
    would rank first but that was never shown counts as not relevant: they pull the refit toward the current
    fusion. "Used" (the turn touched the episode's files, commands or words) is a proxy for "relevant", and so is
    "changed the same files" (links), a different one.
    It needs the embedding model the database's vectors were made with, 20 labelled prompts to fit on and 10 to
    check on.
    """
    from tempera.inject.fusionfit import SOURCES, refit, source_counts

    def progress(line: str) -> None:
        click.echo(line, err=True)

    sources = tuple(SOURCES) if labels == "both" else (labels,)
    with open_memory() as mem:
        report = refit(
            mem.store, mem.config.retrieval, project_id=_project_id(mem, project), sources=sources, progress=progress
        )
    out = {**report.as_dict(), **_save_refit("retrieval", report.changed, report.better, write)}

    def render(d: dict[str, Any]) -> None:
        click.echo(
            f"{d['labelled']} labelled prompt(s): {source_counts(d['labelled_by'], d['judged_prompts'])}; "
            f"fit on {d['fit_current']['queries']} prompt(s) of {d['fit_sessions']} session(s), checked on the latest "
            f"{d['held_out_current']['queries']} prompt(s) of {d['held_out_sessions']} session(s)"
        )
        click.echo(f"  {'':<32}{'current':>9}{'refit':>9}")
        for key in d["current"]:
            click.echo(f"  {key:<32}{d['current'][key]:>9g}{d['refit'][key]:>9g}")
        for part, label in (("fit", "fit"), ("held_out", "held out")):
            for key, name in (("mrr", "MRR@10"), ("hit_at_5", "hit@5")):
                cells = [_cell(d[f"{part}_{w}"][key]) for w in ("current", "refit")]
                click.echo(f"  {label + ' ' + name:<32}{cells[0]:>9}{cells[1]:>9}")
        _echo_saved(
            d,
            "retrieval." + ", retrieval.".join(d["changed"]),
            "the refit ranks the held-out prompts' relevant episodes no higher (MRR@10): the current fusion stays",
            "the refit values",
        )

    emit(out, as_json, render)


def _save_refit(section: str, values: dict[str, Any], better: bool, write: bool) -> dict[str, Any]:
    """--write of a refit: `values` go to config.toml's [section] (comments and other keys kept) only when the refit
    did better held out; and which of them the environment sets, since an env var overrides the file."""
    from tempera.core import paths
    from tempera.core.config import set_keys
    from tempera.core.settings import ENV_PREFIX

    written = write and better and bool(values)
    if written:
        set_keys(paths.config_path(), section, values)
    envs = [f"{ENV_PREFIX}{section.upper()}__{key.upper()}" for key in values]
    return {
        "written": written,
        "config": str(paths.config_path()),
        "env_overrides": [e for e in envs if e in os.environ],
    }


def _echo_saved(d: dict[str, Any], keys: str, no_better: str, what: str) -> None:
    """The last lines of a refit's report: written where (and what overrides it), or why not."""
    if d["written"]:
        click.echo(f"written to {d['config']} ({keys})")
        for env in d["env_overrides"]:
            click.echo(f"{env} is set in this environment and overrides the file")
    elif not d["better"]:
        click.echo(no_better)
    else:
        click.echo(f"add --write to save {what} to config.toml")


def _cell(value: float | int | None) -> str:
    return "-" if value is None else str(value) if isinstance(value, int) else f"{value:.3f}"


COMMANDS = [propagate, decay, advance_verification, review, prune, trends, explain, refit_gate, refit_fusion]
