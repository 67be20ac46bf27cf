"""Exporting memory as JSON lines (to keep, diff or re-import elsewhere) or markdown (to read).

Episodes come from the store with everything they hold, learned utility included. Facts are passed in by the
caller as plain records (entity, attribute, value, valid time, transaction, reason): the fact graph lives in an
outer package and the core does not import it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from tempera.core.db import Database
from tempera.core.episodes import EpisodeStore
from tempera.core.errors import InvalidInput
from tempera.core.models import Episode

FORMATS = ("jsonl", "markdown")


@dataclass
class ExportCounts:
    episodes: int = 0
    facts: int = 0


def episode_record(ep: Episode) -> dict[str, Any]:
    return {"type": "episode", **ep.model_dump(mode="json"), "scope": str(ep.scope)}


def episodes(db: Database, project_id: str | None = None) -> Iterator[dict[str, Any]]:
    """Project by project, each oldest first, so an export reads (and re-imports) in the order things happened."""
    store = EpisodeStore(db)
    for pid in [project_id] if project_id else [p["id"] for p in store.projects.listing()]:
        for ep in store.iter_episodes(pid, newest_first=False):
            yield episode_record(ep)


def write_jsonl(
    out: TextIO, episode_records: Iterable[dict[str, Any]], fact_records: Iterable[dict[str, Any]]
) -> ExportCounts:
    counts = ExportCounts()
    for rec in episode_records:
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        counts.episodes += 1
    for fact in fact_records:
        out.write(json.dumps({"type": "fact", **fact}, ensure_ascii=False, default=str) + "\n")
        counts.facts += 1
    return counts


def _md_cell(value: Any) -> str:
    return " ".join(str("" if value is None else value).split()).replace("|", "\\|")


def _md_episode(rec: dict[str, Any]) -> list[str]:
    intent, ctx, outcome, util = rec["intent"], rec["context"], rec["outcome"], rec["utility"]
    lines = [
        f"### {_md_cell(rec['summary'])[:120]}",
        "",
        f"- id: `{rec['id']}` · {rec['created_at'][:19]} · session `{rec['session_id'] or '-'}`",
        f"- task: {intent['task_type']} · scope: {rec['scope']} · outcome: {outcome['status']} · "
        f"verification: {outcome['verification']} · utility: {util['value']:.3f}",
    ]
    if intent["raw_prompt"]:
        lines.append(f"- prompt: {_md_cell(intent['raw_prompt'])[:500]}")
    for label, key in (("files modified", "files_modified"), ("files read", "files_read"), ("commands", "commands")):
        if ctx[key]:
            lines.append(f"- {label}: " + ", ".join(f"`{_md_cell(x)}`" for x in ctx[key][:30]))
    lines += [
        f"- error{' (resolved)' if e['resolved'] else ''}: {_md_cell(e['message'])[:300]}" for e in ctx["errors"][:20]
    ]
    if rec["tags"]:
        lines.append("- tags: " + ", ".join(rec["tags"]))
    return lines + [""]


def write_markdown(
    out: TextIO, episode_records: Iterable[dict[str, Any]], fact_records: Iterable[dict[str, Any]]
) -> ExportCounts:
    """One section per project (episodes oldest first), then the fact history as a table."""
    counts = ExportCounts()
    out.write("# Tempera memory export\n\n")
    project = None
    for rec in episode_records:
        if rec["project_name"] != project:
            project = rec["project_name"]
            out.write(f"## Project {project}\n\n")
        out.write("\n".join(_md_episode(rec)) + "\n")
        counts.episodes += 1
    header = False
    for fact in fact_records:
        if not header:
            out.write(
                "## Facts\n\n| entity | op | attribute | value | valid from | valid to | tx | at | reason |\n"
                "|---|---|---|---|---|---|---|---|---|\n"
            )
            header = True
        out.write(
            "| "
            + " | ".join(
                _md_cell(fact.get(k))
                for k in ("entity", "op", "attribute", "value", "valid_from", "valid_to", "tx", "at", "reason")
            )
            + " |\n"
        )
        counts.facts += 1
    return counts


def export(
    out: TextIO, fmt: str, episode_records: Iterable[dict[str, Any]], fact_records: Iterable[dict[str, Any]]
) -> ExportCounts:
    if fmt == "jsonl":
        return write_jsonl(out, episode_records, fact_records)
    if fmt == "markdown":
        return write_markdown(out, episode_records, fact_records)
    raise InvalidInput(f"format must be one of {', '.join(FORMATS)}")
