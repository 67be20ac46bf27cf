"""patterns: themes that keep coming back. Per project, the reflections and live episodes of the last
`dream.patterns_lookback_days` are clustered (average linkage on their embeddings, see clustering.py); a cluster
with at least `patterns_min_evidence` items from at least two days is a theme, kept as a row in `patterns` and a
markdown page under DATA_DIR/patterns/ with its evidence.

A theme keeps its identity across cycles: a new cluster that shares at least half its evidence with an active
pattern updates that pattern (its label stays, so no call is made); an unchanged one is not touched; an active
pattern no cluster matches any more is retired (row kept, page removed). Labels come from the better model, or,
without the LLM, from the cluster's distinctive terms; a term label is replaced once the LLM can be used.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tempera.core import paths
from tempera.core.learning.retire import retired_ids
from tempera.core.textsearch import jaccard
from tempera.dream.budget import json_reply
from tempera.dream.clustering import MAX_ITEMS, average_linkage
from tempera.dream.digest import day_start_utc, local_day
from tempera.dream.pages import project_dir, remove_page, slug, write_page
from tempera.dream.phase import DreamContext, Phase, PhaseReport, Plan
from tempera.dream.vectors import TextItem, distinctive_terms, item_vectors, terms

LABEL_TOKENS = 300
MATCH_OVERLAP = 0.5
MIN_DAYS = 2  # a theme recurs: one busy day is not a pattern
LABEL_SYSTEM = (
    "You name a theme that keeps recurring in an AI coding agent's work on one project, from the items "
    'that share it. Answer with JSON only: {"label": "<at most 8 words>", "summary": "<2 or 3 '
    'sentences: what keeps coming back and what the agent should know about it>"}'
)


@dataclass
class Evidence:
    kind: str  # episode | reflection
    id: str
    day: str
    text: str
    line: str  # one line for the page
    outcome: str = ""  # an episode's
    files: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


@dataclass
class Theme:
    project_id: str
    project_name: str
    evidence: list[Evidence]
    terms: list[str]
    match: dict[str, Any] | None  # the active pattern it continues
    needs_llm: bool
    cost: float = 0.0

    @property
    def keys(self) -> list[str]:
        return sorted(e.key for e in self.evidence)

    def prompt(self) -> str:
        lines = [f"Project: {self.project_name}", f"Distinctive terms: {', '.join(self.terms)}", "Items:"]
        lines += [f"- {e.day} {e.kind}: {e.line}" for e in self.evidence[:20]]
        return "\n".join(lines)


def _evidence(ctx: DreamContext, project_id: str, since: str) -> list[Evidence]:
    """The project's reflections and live episodes in the window, newest first, at most MAX_ITEMS."""
    out = [
        Evidence("reflection", str(rid), day, f"{title}\n{body}", title)
        for rid, day, title, body in ctx.mem.db.query(
            "SELECT id, day, title, body FROM reflections WHERE project_id = ? AND day >= ? ORDER BY day DESC",
            (project_id, since[:10]),
        )
    ]
    rowids = [
        r[0]
        for r in ctx.mem.db.query(
            "SELECT rowid FROM episodes WHERE project_id = ? AND created_at >= ? ORDER BY created_at DESC LIMIT ?",
            (project_id, since, MAX_ITEMS),
        )
    ]
    retired = retired_ids(ctx.mem.db)
    for ep in sorted(ctx.mem.store.get_many_by_rowid(rowids).values(), key=lambda e: e.created_at, reverse=True):
        if ep.id not in retired:
            out.append(
                Evidence(
                    "episode",
                    ep.id,
                    local_day(ep.created_at).isoformat(),
                    ep.embed_text(),
                    f"`{ep.id[:8]}` [{ep.outcome.status}] {ep.summary.splitlines()[0][:160]}",
                    ep.outcome.status,
                    ep.context.files_modified,
                )
            )
    return out[:MAX_ITEMS]


def _active(ctx: DreamContext, project_id: str) -> list[dict[str, Any]]:
    rows = ctx.mem.db.query(
        "SELECT id, label, summary, labelled_by, evidence, path FROM patterns WHERE project_id = ? AND active = 1",
        (project_id,),
    )
    return [
        {
            "id": r[0],
            "label": r[1],
            "summary": r[2],
            "labelled_by": r[3],
            "keys": sorted(json.loads(r[4])),
            "path": r[5],
        }
        for r in rows
    ]


def _themes(
    ctx: DreamContext, project_id: str, project_name: str, since: str, active: list[dict[str, Any]]
) -> tuple[list[Theme], list[dict[str, Any]]]:
    """(themes that need writing, active patterns no cluster continues)."""
    cfg, llm_on = ctx.mem.config.dream, ctx.budget.llm_on
    items = _evidence(ctx, project_id, since)
    if len(items) < cfg.patterns_min_evidence:
        return [], active
    vectors, _ = item_vectors(ctx.mem, [TextItem(e.text, e.id if e.kind == "episode" else None) for e in items])
    corpus = [terms(e.text) for e in items]
    themes: list[Theme] = []
    matched: set[int] = set()
    for members in average_linkage(vectors, cfg.patterns_cluster_threshold):
        evidence = [items[i] for i in members]
        if len(evidence) < cfg.patterns_min_evidence or len({e.day for e in evidence}) < MIN_DAYS:
            continue
        theme = Theme(
            project_id, project_name, evidence, distinctive_terms([corpus[i] for i in members], corpus), None, False
        )
        best = max(active, key=lambda p: jaccard(p["keys"], theme.keys), default=None)
        if best is not None and best["id"] not in matched and jaccard(best["keys"], theme.keys) >= MATCH_OVERLAP:
            matched.add(best["id"])
            theme.match = best
        upgrade = llm_on and (theme.match is None or theme.match["labelled_by"] == "terms")
        if theme.match is not None and theme.match["keys"] == theme.keys and not upgrade:
            continue
        theme.needs_llm = upgrade
        if upgrade:
            theme.cost = ctx.budget.estimate(cfg.reflect_model, LABEL_SYSTEM + theme.prompt(), LABEL_TOKENS)
        themes.append(theme)
    return themes, [p for p in active if p["id"] not in matched]


def plan(ctx: DreamContext) -> Plan:
    since = day_start_utc(local_day(ctx.now) - timedelta(days=ctx.mem.config.dream.patterns_lookback_days))
    themes: list[Theme] = []
    stale: list[dict[str, Any]] = []
    for pid, name in ctx.mem.db.query(
        "SELECT DISTINCT p.id, p.name FROM projects p JOIN episodes e "
        "ON e.project_id = p.id WHERE e.created_at >= ? ORDER BY p.name",
        (since,),
    ):
        found, unmatched = _themes(ctx, pid, name, since, _active(ctx, pid))
        themes += found
        stale += unmatched
    themes.sort(key=lambda t: -len(t.evidence))
    items, deferred, estimate = ctx.budget.take(themes, lambda t: t.cost)
    retire = stale if not deferred else []  # a deferred cluster may still continue one of them
    return Plan(
        [*items, *retire],
        estimate,
        deferred,
        f"{len(items)} theme(s) to write ({sum(t.needs_llm for t in items)} to label), {len(retire)} to retire"
        + (f"; {deferred} wait for budget" if deferred else ""),
    )


def _label(ctx: DreamContext, theme: Theme) -> tuple[str, str, str, float]:
    """(label, summary, labelled_by, cost): the model's, else the continued pattern's, else distinctive terms."""
    cost = 0.0
    if theme.needs_llm:
        before = ctx.budget.spent
        data = json_reply(
            ctx.budget.ask(
                LABEL_SYSTEM, theme.prompt(), model=ctx.mem.config.dream.reflect_model, max_tokens=LABEL_TOKENS
            )
        )
        cost = ctx.budget.spent - before
        label, summary = (" ".join(str(data.get(k, "")).split()) for k in ("label", "summary")) if data else ("", "")
        if label and summary:
            return label[:80], summary[:1200], "llm", cost
    if theme.match is not None and theme.match["labelled_by"] == "llm":
        return theme.match["label"], theme.match["summary"], "llm", cost
    return _term_label(theme) + ("terms", cost)


def _term_label(theme: Theme) -> tuple[str, str]:
    days = sorted({e.day for e in theme.evidence})
    files = Counter(f for e in theme.evidence for f in e.files).most_common(3)
    outcomes = Counter(e.outcome for e in theme.evidence if e.outcome)
    summary = (
        f"{len(theme.evidence)} items over {len(days)} days ({days[0]} to {days[-1]}) share "
        f"{', '.join(theme.terms) or 'their wording'}."
        + (f" Files most touched: {', '.join(f'{f} ({n})' for f, n in files)}." if files else "")
        + (f" Outcomes: {', '.join(f'{n} {s}' for s, n in outcomes.most_common())}." if outcomes else "")
    )
    return " · ".join(theme.terms[:3]) or "recurring work", summary


def _page(theme: Theme, label: str, summary: str, labelled_by: str) -> str:
    days = sorted({e.day for e in theme.evidence})
    by = "labelled by the LLM" if labelled_by == "llm" else "labelled by distinctive terms"
    lines = "\n".join(f"- {e.day} {e.kind}: {e.line}" for e in sorted(theme.evidence, key=lambda e: e.day))
    return (
        f"# {label}\n\n_{theme.project_name} · {len(theme.evidence)} items over {len(days)} days "
        f"({days[0]} to {days[-1]}) · {by}_\n\n{summary}\n\nDistinctive terms: {', '.join(theme.terms)}\n\n"
        f"## Evidence\n{lines}\n"
    )


def _write(ctx: DreamContext, theme: Theme, report: PhaseReport) -> None:
    label, summary, labelled_by, cost = _label(ctx, theme)
    token = hashlib.sha1("\n".join(theme.keys).encode()).hexdigest()[:8]
    path = str(
        project_dir(ctx.data_dir, paths.PATTERNS_DIR, theme.project_name, theme.project_id)
        / f"{slug(label)}-{token}.md"
    )
    if theme.match is not None and theme.match["label"] == label:
        path = theme.match["path"]  # same theme, same label: the page keeps its name
    write_page(Path(path), _page(theme, label, summary, labelled_by))
    now = datetime.now(timezone.utc).isoformat()
    values = (
        label,
        summary,
        json.dumps(theme.terms),
        labelled_by,
        json.dumps(theme.keys),
        json.dumps(sorted({e.day for e in theme.evidence})),
        path,
        cost,
        now,
    )
    with ctx.mem.db.transaction() as conn:
        if theme.match is None:
            conn.execute(
                "INSERT INTO patterns(label, summary, terms, labelled_by, evidence, days, path, cost_usd, "
                "updated_at, project_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, theme.project_id, now),
            )
        else:
            conn.execute(
                "UPDATE patterns SET label = ?, summary = ?, terms = ?, labelled_by = ?, evidence = ?, "
                "days = ?, path = ?, cost_usd = cost_usd + ?, updated_at = ? WHERE id = ?",
                (*values, theme.match["id"]),
            )
    if theme.match is not None and theme.match["path"] != path:
        remove_page(theme.match["path"])
    report.counts["themes updated" if theme.match else f"themes found ({labelled_by} label)"] += 1


def run(ctx: DreamContext, plan: Plan, report: PhaseReport) -> None:
    for item in plan.items:
        ctx.checkpoint()
        if isinstance(item, Theme):
            _write(ctx, item, report)
            continue
        with ctx.mem.db.transaction() as conn:
            conn.execute(
                "UPDATE patterns SET active = 0, updated_at = ? WHERE id = ?",
                (datetime.now(timezone.utc).isoformat(), item["id"]),
            )
        remove_page(item["path"])
        report.counts["themes retired"] += 1


PHASE = Phase(
    "patterns", "cluster recent reflections and episodes into recurring themes (pattern pages)", True, plan, run
)
