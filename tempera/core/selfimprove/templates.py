"""Reasoning templates per (task_type, domain): the steps successful, verified episodes of a project had in common.

Without an LLM the template is mined: each episode becomes an ordered action list (tests run before, files read,
files edited, other commands, tests run after); an action kept by at least half of the episodes becomes a step,
named as specifically as the evidence allows (`edit src/auth/login.py`, else `edit src/auth/*.py`, else
`edit a .py file`), and steps are ordered by their mean relative position. With an LLM the same evidence is
summarised into prose steps, and the mined steps remain the fallback.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.db import Database
from tempera.core.models import Episode
from tempera.core.selfimprove.anchors import relative_path
from tempera.core.selfimprove.drafting import Drafter, drafter_for

if TYPE_CHECKING:
    from tempera.core.memory import Memory

TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|cargo (?:test|nextest)|go test|(?:npm|yarn|pnpm|bun)"
    r"(?: run)? test|jest|vitest|mocha|mix test|rspec|phpunit|make (?:test|check)|ctest)\b"
)
MAX_STEPS = 10


@dataclass
class Template:
    project_id: str
    project: str
    task_type: str
    domain: str
    title: str
    steps: list[str]
    evidence: list[str]
    transferable: bool
    extracted_by: str
    updated_at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _command_step(command: str) -> str:
    m = TEST_COMMAND.search(command)
    if m:
        return f"run the tests ({m.group(1)})"
    words = [w for w in command.split() if not re.fullmatch(r"\w+=\S*", w)][:2]
    return "run " + " ".join(words)


def actions(ep: Episode) -> list[tuple[str, str]]:
    """The episode's ordered (verb, object) actions, with paths relative to its project root."""

    def rel(path: str) -> str:
        return relative_path(path, ep.project_path)

    out = [("run", _command_step(t.command)) for t in ep.outcome.tests_before]
    out += [("read", rel(f)) for f in ep.context.files_read]
    out += [("edit", rel(f)) for f in ep.context.files_modified]
    out += [("run", _command_step(c)) for c in ep.context.commands if not TEST_COMMAND.search(c)]
    out += [("run", _command_step(t.command)) for t in ep.outcome.tests_after]
    return list(dict.fromkeys(out))


def _generalisations(verb: str, obj: str) -> list[str]:
    """From the action itself to ever looser names for it (commands are already general)."""
    if verb == "run":
        return [obj]
    directory, ext = posixpath.dirname(obj), posixpath.splitext(obj)[1]
    forms = [f"{verb} {obj}"]
    if directory and ext:
        forms.append(f"{verb} {directory}/*{ext}")
    if ext:
        forms.append(f"{verb} a {ext} file")
    return forms


def mine_steps(episodes: list[Episode]) -> list[str]:
    """The common ordered action sequence of the episodes (see the module docstring).

    Forms are tried from the most specific; a looser form only counts the actions no chosen step explains yet,
    so `edit src/auth/*.py` appears only when the episodes edit different files of that folder.
    """
    need = max(2, math.ceil(len(episodes) / 2))
    per_episode = [actions(ep) for ep in episodes]
    matches: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    level: dict[str, int] = {}
    for n, acts in enumerate(per_episode):
        for i, act in enumerate(acts):
            for lvl, form in enumerate(_generalisations(*act)):
                matches[form][n].append(i)
                level[form] = lvl
    explained: set[tuple[int, int]] = set()
    chosen: list[tuple[float, str]] = []
    for form in sorted(matches, key=lambda f: (level[f], -len(matches[f]), f)):
        residual = {n: [i for i in idx if (n, i) not in explained] for n, idx in matches[form].items()}
        residual = {n: idx for n, idx in residual.items() if idx}
        if len(residual) < need:
            continue
        position = sum(idx[0] / max(1, len(per_episode[n]) - 1) for n, idx in residual.items()) / len(residual)
        chosen.append((position, form))
        explained |= {(n, i) for n, idx in residual.items() for i in idx}
    return [form for _, form in sorted(chosen)][:MAX_STEPS]


def _groups(episodes: list[Episode]) -> dict[tuple[str, str], list[Episode]]:
    """Every episode counts for its task type in general ('') and for each of its domains."""
    out: dict[tuple[str, str], list[Episode]] = defaultdict(list)
    for ep in episodes:
        for domain in dict.fromkeys(["", *(d.strip().lower() for d in ep.intent.domains if d.strip())]):
            out[(ep.intent.task_type, domain)].append(ep)
    return out


LLM_SYSTEM = (
    "You turn what several successful coding episodes had in common into a short reusable procedure. "
    'Answer with JSON only: {"title": "...", "steps": ["...", "..."]}, 2 to 8 steps, each one line.'
)


def llm_steps(
    llm: Drafter, model: str, key: tuple[str, str], episodes: list[Episode], mined: list[str]
) -> tuple[str, list[str]] | None:
    lines = [f"Task type: {key[0]}; domain: {key[1] or 'any'}", "Episodes:"]
    for ep in episodes[:8]:
        lines.append(f"- {ep.summary[:300]} | actions: {', '.join(f'{v} {o}' for v, o in actions(ep)[:12])}")
    lines.append(f"Actions they share, in order: {'; '.join(mined)}")
    text = llm(LLM_SYSTEM, "\n".join(lines), model=model, max_tokens=500)
    try:
        data = json.loads((text or "").strip().removeprefix("```json").removesuffix("```"))
        title, steps = str(data["title"]).strip(), [" ".join(str(s).split()) for s in data["steps"]]
    except (ValueError, KeyError, TypeError):
        return None
    steps = [s[:200] for s in steps if s]
    return (title[:120], steps[:MAX_STEPS]) if title and 2 <= len(steps) else None


def extract_templates(
    mem: "Memory", *, project_id: str | None = None, llm: Drafter | None = None, max_usd: float | None = None
) -> list[Template]:
    """(Re)build the templates of one project or of all; a group whose evidence has not changed is left alone
    (so a re-run costs nothing). Returns the templates written."""
    cfg = mem.config.dream
    llm = llm or drafter_for(mem.config, max_usd=max_usd)
    project_ids = [project_id] if project_id else [p["id"] for p in mem.store.projects.listing() if p["episodes"]]
    written = []
    for pid in project_ids:
        eligible = [
            ep
            for ep in mem.store.iter_episodes(pid, newest_first=False)
            if ep.outcome.status == "success"
            and ep.outcome.verification.weight >= cfg.templates_min_verification_weight
        ]
        for key, group in _groups(eligible).items():
            evidence = sorted(ep.id for ep in group)
            if len(group) < cfg.templates_min_evidence or _stored_evidence(mem.db, pid, key) == evidence:
                continue
            mined = mine_steps(group)
            if not mined:
                continue
            drafted = llm_steps(llm, cfg.reflect_model, key, group, mined) if llm else None
            title, steps = drafted or (
                f"Common steps of {len(group)} verified {key[0]} successes" + (f" in {key[1]}" if key[1] else ""),
                mined,
            )
            written.append(
                _upsert(
                    mem.db,
                    group[0],
                    key,
                    title,
                    steps,
                    evidence,
                    all(ep.scope.transferable for ep in group),
                    "llm" if drafted else "mined",
                )
            )
    return written


def _stored_evidence(db: Database, project_id: str, key: tuple[str, str]) -> list[str] | None:
    row = db.one(
        "SELECT evidence FROM reasoning_templates WHERE project_id = ? AND task_type = ? AND domain = ?",
        (project_id, *key),
    )
    return json.loads(row[0]) if row else None


def _upsert(
    db: Database,
    ep: Episode,
    key: tuple[str, str],
    title: str,
    steps: list[str],
    evidence: list[str],
    transferable: bool,
    extracted_by: str,
) -> Template:
    now = datetime.now(timezone.utc).isoformat()
    db.execute(
        "INSERT INTO reasoning_templates(project_id, task_type, domain, title, steps, evidence, transferable, "
        "extracted_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(project_id, task_type, domain) DO UPDATE SET title = excluded.title, "
        "steps = excluded.steps, evidence = excluded.evidence, transferable = excluded.transferable, "
        "extracted_by = excluded.extracted_by, updated_at = excluded.updated_at",
        (
            ep.project_id,
            *key,
            title,
            json.dumps(steps),
            json.dumps(evidence),
            int(transferable),
            extracted_by,
            now,
            now,
        ),
    )
    return Template(ep.project_id, ep.project_name, *key, title, steps, evidence, transferable, extracted_by, now)


def _templates(db: Database, where: str, params: tuple[Any, ...]) -> list[Template]:
    rows = db.query(
        "SELECT t.project_id, COALESCE(p.name, t.project_id), t.task_type, t.domain, t.title, t.steps, "
        "t.evidence, t.transferable, t.extracted_by, t.updated_at FROM reasoning_templates t "
        f"LEFT JOIN projects p ON p.id = t.project_id WHERE {where} "
        "ORDER BY t.task_type, t.domain, json_array_length(t.evidence) DESC",
        params,
    )
    return [
        Template(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]), bool(r[7]), r[8], r[9]) for r in rows
    ]


def list_templates(db: Database, *, project_id: str | None = None) -> list[Template]:
    return _templates(db, "t.project_id = ?", (project_id,)) if project_id else _templates(db, "1", ())


def get_template(
    db: Database, project_id: str, task_type: str, domain: str | None = None, *, cross_project: bool = False
) -> Template | None:
    """This project's template for (task_type, domain), else its general one for the task type; with
    `cross_project`, else a transferable one of another project for the same pair."""
    domain = (domain or "").strip().lower()
    for d in dict.fromkeys([domain, ""]):
        found = _templates(db, "t.project_id = ? AND t.task_type = ? AND t.domain = ?", (project_id, task_type, d))
        if found:
            return found[0]
    if cross_project:
        found = _templates(
            db,
            "t.project_id != ? AND t.transferable = 1 AND t.task_type = ? AND t.domain = ?",
            (project_id, task_type, domain),
        )
        return found[0] if found else None
    return None
