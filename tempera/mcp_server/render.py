"""The readable text of each tool result, written for an agent: short lines, ids it can pass back, no tables.

Every function takes the same dict the tool returns as structured content, so text and data cannot disagree.
Stored text (summaries, error messages) goes through `guarded` before it is in either: what a web page or
a log said in one session is withheld when it reads like orders to the agent (core/directives.py), as the hooks do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tempera.core.directives import shown

if TYPE_CHECKING:
    from tempera.core.models import Episode


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def template_text(t: dict[str, Any]) -> str:
    head = (
        f"Reasoning template for {t['task_type']}/{t['domain'] or 'any domain'} [{t['project']}]: {t['title']} "
        f"({len(t['evidence'])} verified successes)"
    )
    return "\n".join([head, *(f"  {n}. {step}" for n, step in enumerate(t["steps"], 1))])


def guarded(d: Any) -> Any:
    """A tool result (an episode row, a hit, a full dump, a review) with every recorded string as the agent may see
    it: the summary, error text, test output and evidence all come from what a session read."""
    if isinstance(d, str):
        return shown(d)
    if isinstance(d, dict):
        return {k: guarded(v) for k, v in d.items()}
    if isinstance(d, list):
        return [guarded(v) for v in d]
    return d


def episode_row(e: "Episode") -> dict[str, Any]:
    return guarded(
        {
            "id": e.id,
            "created_at": e.created_at.isoformat(),
            "project": e.project_name,
            "task_type": e.intent.task_type,
            "outcome": e.outcome.status,
            "utility": round(e.utility.value, 4),
            "summary": e.summary,
            "session_id": e.session_id,
        }
    )


def episode_rows(data: dict[str, Any]) -> str:
    rows = data["episodes"]
    if not rows:
        return "No episodes."
    lines = [f"{len(rows)} of {data['total']} episode(s), newest first:"]
    lines += [
        f"- {r['id'][:8]} {r['created_at'][:10]} [{r['project']}] {r['task_type']}/{r['outcome']} "
        f"u={r['utility']:.2f}: {r['summary'][:160]}"
        for r in rows
    ]
    return "\n".join(lines)


def episode_text(d: dict[str, Any]) -> str:
    ctx, outcome, u = d["context"], d["outcome"], d["utility"]
    lines = [
        f"Episode {d['id']} [{d['project_name']}] {d['created_at'][:19]}",
        f"Summary: {d['summary']}",
        f"Task {d['intent']['task_type']}, scope {d['scope']}, outcome {outcome['status']} "
        f"({outcome['verification']}), utility {u['value']:.3f} (retrieved {u['retrieval_count']}x)",
    ]
    for label, key in (("Files modified", "files_modified"), ("Files read", "files_read"), ("Commands", "commands")):
        if ctx[key]:
            lines.append(f"{label}: {', '.join(ctx[key][:15])}")
    lines += [f"Error{' (resolved)' if e['resolved'] else ''}: {e['message'][:200]}" for e in ctx["errors"][:10]]
    lines += [f"Alternative considered: {a}" for a in d["alternatives_considered"][:5]]
    if d["tags"]:
        lines.append(f"Tags: {', '.join(d['tags'])}")
    return "\n".join(lines)


def hits_text(hits: list[dict[str, Any]]) -> str:
    if not hits:
        return "No matching episodes."
    return "\n".join(
        f"{n}. {h['id'][:8]} score {h['score']:.3f} (utility {h['utility']:.2f}) "
        f"{h['task_type']}/{h['outcome']} [{h['project']}] {h['created_at'][:10]}: {h['summary'][:240]}"
        for n, h in enumerate(hits, 1)
    )


def capture_text(d: dict[str, Any]) -> str:
    lines = [f"Captured {d['id']} in {d['project']} (scope {d['scope']})."]
    lines += [
        f"Linked to {(link['src_id'] if link['dst_id'] == d['id'] else link['dst_id'])[:8]} ({link['relationship']})."
        for link in d["links"]
    ]
    if d["temporal_credit"]:
        lines.append(f"Credited {len(d['temporal_credit'])} earlier episode(s) that led to this success.")
    if d["ask_back"]:
        lines.append(f"Drafted a question for the next session: {d['ask_back']['question']}")
    return "\n".join(lines)


def status_text(d: dict[str, Any]) -> str:
    p, c, v = d["project"], d["counts"], d["vectors"]
    return "\n".join(
        [
            f"Project {p['name']} ({p['id'][:8]}, {p['path'] or 'no path'}), data dir {d['data_dir']}",
            f"Episodes {c['episodes']} (retired {c['retired_episodes']}, last {(d['last_capture'] or 'never')[:19]}); "
            f"all projects {d['all_episodes']}",
            f"Corrections {c['corrections']}, should-have-asked {c['should_have_asked']}, templates {c['templates']}, "
            f"pending ask-backs {c['pending_ask_backs']}",
            f"Vectors: {v['state']}"
            + (f" ({v['model']})" if v["model"] else "")
            + (f"; {v['detail']}" if v["detail"] else ""),
        ]
    )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) or "-"


def stats_text(d: dict[str, Any]) -> str:
    u = d["utility"]
    utility = "-" if u["mean"] is None else f"mean {u['mean']:.3f}, min {u['min']:.3f}, max {u['max']:.3f}"
    return "\n".join(
        [
            f"Episodes {d['episodes']}, retrievals {d['retrievals']}, feedback: {_counts(d['feedback'])}",
            f"Outcomes: {_counts(d['by_outcome'])}",
            f"Task types: {_counts(d['by_task_type'])}",
            f"Verification: {_counts(d['by_verification'])}",
            f"Utility: {utility}",
        ]
    )


def trends_text(d: dict[str, Any]) -> str:
    lines = [
        f"{p['period']}: {p['episodes']} episode(s), success {_pct(p['success_rate'])}, helpful "
        f"{_pct(p['helpfulness'])}, injected memories used {_pct(p['use_rate'])}"
        for p in d["periods"]
    ]
    if d["domains"]:
        lines.append("Domains: " + ", ".join(f"{x['domain']} {x['episodes']}" for x in d["domains"]))
    return "\n".join(lines) or "No episodes yet."


def propagation_text(r: dict[str, Any]) -> str:
    if r["skipped"]:
        return f"Propagation skipped: {r['skipped']}."
    hops = "; ".join(
        f"hop {h['hop']}: {h['updates']} update(s), largest change {h['max_change']:.4f}" for h in r["hops"]
    )
    return (
        f"{r['sources']} source(s) updated {r['updated_episodes']} episode(s); "
        f"{'converged' if r['converged'] else 'not converged'} ({r['stopped_by']}). {hops}"
    ).strip()


def review_text(d: dict[str, Any]) -> str:
    lines = []
    merges = d.get("consolidation")
    if merges is not None:
        verb = "would merge" if merges["dry_run"] else "merged"
        lines.append(
            f"Near-duplicates: {merges['skipped']}"
            if merges["skipped"]
            else f"Near-duplicates (similarity >= {merges['threshold']}): {len(merges['merges'])}"
        )
        lines += [
            f"- {verb} {m['absorbed_id'][:8]} into {m['keep_id'][:8]} ({m['similarity']:.3f}): "
            f"{m['absorbed_summary'][:100]}"
            for m in merges["merges"]
        ]
    cleanup = d.get("cleanup")
    if cleanup is not None:
        verb = "deleted" if cleanup["executed"] else "would delete"
        lines.append(
            f"Cleanup (older than {cleanup['older_than_days']:g} days, utility < {cleanup['min_utility']}, "
            f"retrieved >= {cleanup['min_retrievals']}x): {len(cleanup['candidates'])}"
        )
        lines += [
            f"- {verb} {c['id'][:8]} (utility {c['utility']:.3f}): {c['summary'][:100]}" for c in cleanup["candidates"]
        ]
    if d["dry_run"] and d["action"] != "analyze":
        lines.append("Dry run: nothing changed; call again with dry_run=false to act.")
    return "\n".join(lines)


def rows_text(columns: list[str], rows: list[list[str]]) -> str:
    """Query rows as EDN, one per line under a header of the column names."""
    return "\n".join([f"{len(rows)} row(s): {' '.join(columns)}", *("  ".join(row) for row in rows)])


def audit_text(d: dict[str, Any]) -> str:
    lines = [f"Audited {d['audited']} entities: {len(d['violations'])} violation(s)."]
    lines += [f"- {v['entity']} {v['kind']}: {v['detail']}" for v in d["violations"]]
    if d["tx"] is not None:
        lines.append(f"Retracted {d['retracted']} fact(s) in tx {d['tx']}.")
    elif d["violations"]:
        lines.append("Call again with fix=true to retract them.")
    return "\n".join(lines)


def ingest_status_text(s: dict[str, Any]) -> str:
    state = s["state"]
    if state == "running":
        return f"Running: {s.get('processed', 0)} of {s.get('total') or '?'} commits of {s.get('repository')}."
    if state == "done":
        from tempera.facts.ingest_git import skipped_text

        return (
            f"Done: {s['commits']} commit(s) of {s['repository']} in {s['seconds']:.1f} s; last commit "
            f"{s.get('last_commit') or '(none new)'}{skipped_text(s.get('unparsed_files', 0))}."
        )
    if state == "failed":
        return f"Failed: {s.get('error')}"
    return "No ingestion has run."
