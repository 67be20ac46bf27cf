"""What one project's day held, gathered for the reflect phase: the turns and their outcomes, errors resolved and
left open, the user's corrections, questions that should have been asked first, the files most touched.

One digest serves three readers: its signal score is the free triage (and the gate before a paid one), its text is
the models' input, and rendered as markdown it is the extractive reflection when there is no LLM. Days are local
calendar days, because that is how a person remembers their work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING

from tempera.core.learning.retire import retired_ids
from tempera.core.models import Episode, ErrorRecord

if TYPE_CHECKING:
    from tempera.core.memory import Memory

SCORE_SCALE = 4.0  # signal points that make a day certainly worth a reflection
FAILED = ("failure", "partial")


def local_day(moment: datetime) -> date:
    return moment.astimezone().date()


def day_start_utc(day: date) -> str:
    """Local midnight that starts `day`, as the UTC ISO text episodes are stored with."""
    return datetime.combine(day, time.min).astimezone().astimezone(timezone.utc).isoformat()


def _first_lines(ep: Episode, n: int = 2, limit: int = 220) -> str:
    text = " — ".join(line.strip() for line in ep.summary.splitlines()[:n] if line.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class DayDigest:
    project_id: str
    project_name: str
    day: date
    episodes: list[Episode]
    corrections: list[tuple[str, str]] = field(default_factory=list)  # (category, what the user said)
    missed_questions: list[str] = field(default_factory=list)

    @property
    def evidence(self) -> list[str]:
        return [ep.id for ep in self.episodes]

    def outcomes(self) -> Counter[str]:
        return Counter(ep.outcome.status for ep in self.episodes)

    def errors(self) -> tuple[list[ErrorRecord], list[ErrorRecord]]:
        """(resolved, unresolved), one per error text."""
        seen: dict[str, ErrorRecord] = {}
        for ep in self.episodes:
            for err in ep.context.errors:
                seen[err.fingerprint or err.message[:200]] = err
        errs = list(seen.values())
        return [e for e in errs if e.resolved], [e for e in errs if not e.resolved]

    def files(self, limit: int = 8) -> list[tuple[str, int]]:
        return Counter(f for ep in self.episodes for f in dict.fromkeys(ep.context.files_modified)).most_common(limit)

    def points(self) -> float:
        """Free signal: failures, errors, corrections and missed questions teach most; edits a little."""
        resolved, unresolved = self.errors()
        outcomes = self.outcomes()
        return (
            sum(outcomes[s] for s in FAILED)
            + len(resolved)
            + 0.5 * len(unresolved)
            + 1.5 * len(self.corrections)
            + len(self.missed_questions)
            + 0.5 * sum(1 for ep in self.episodes if ep.context.files_modified)
        )

    def score(self) -> float:
        return min(1.0, self.points() / SCORE_SCALE)

    def headline(self) -> str:
        outcomes = self.outcomes()
        parts = ", ".join(f"{n} {status}" for status, n in outcomes.most_common())
        return f"{self.project_name} on {self.day.isoformat()}: {len(self.episodes)} turns ({parts})"

    def markdown(self) -> str:
        resolved, unresolved = self.errors()
        sections: list[tuple[str, list[str]]] = [
            ("Turns", [f"[{ep.outcome.status}] {_first_lines(ep)}" for ep in self.episodes]),
            ("Errors resolved", [f"`{e.message[:160]}` → {(e.resolution or 'fixed')[:160]}" for e in resolved]),
            ("Errors left unresolved", [f"`{e.message[:200]}`" for e in unresolved]),
            ("Corrections from the user", [f"({cat}) {words[:240]}" for cat, words in self.corrections]),
            ("Questions that should have been asked first", [q[:240] for q in self.missed_questions]),
            ("Files most touched", [f"{path} ({n})" for path, n in self.files()]),
        ]
        out = [f"**{self.headline()}**"]
        for title, lines in sections:
            if lines:
                out += ["", f"### {title}", *(f"- {line}" for line in lines)]
        return "\n".join(out) + "\n"


def gather(mem: "Memory", days: Iterable[date], *, project_id: str | None = None) -> list[DayDigest]:
    """A digest per (project, day) among `days` that has live episodes, oldest day first."""
    wanted = set(days)
    if not wanted:
        return []
    sql = "SELECT rowid FROM episodes WHERE created_at >= ? AND created_at < ?"
    params: list[str] = [day_start_utc(min(wanted)), day_start_utc(max(wanted) + timedelta(days=1))]
    if project_id:
        sql += " AND project_id = ?"
        params.append(project_id)
    retired = retired_ids(mem.db)
    episodes = [
        ep
        for ep in mem.store.get_many_by_rowid(r[0] for r in mem.db.query(sql, params)).values()
        if ep.id not in retired and local_day(ep.created_at) in wanted
    ]
    groups: dict[tuple[str, date], list[Episode]] = {}
    for ep in sorted(episodes, key=lambda e: e.created_at):
        groups.setdefault((ep.project_id, local_day(ep.created_at)), []).append(ep)
    digests = [DayDigest(eps[0].project_id, eps[0].project_name, day, eps) for (_, day), eps in groups.items()]
    by_episode = {ep.id: d for d in digests for ep in d.episodes}
    ids = list(by_episode)
    for start in range(0, len(ids), 500):
        marks = ",".join("?" * len(ids[start : start + 500]))
        for eid, cat, words in mem.db.query(
            f"SELECT episode_id, category, correction FROM mistakes WHERE episode_id IN ({marks}) ORDER BY id",
            ids[start : start + 500],
        ):
            by_episode[eid].corrections.append((cat, words))
        for eid, question in mem.db.query(
            f"SELECT episode_id, question FROM should_have_asked WHERE episode_id IN ({marks}) ORDER BY id",
            ids[start : start + 500],
        ):
            by_episode[eid].missed_questions.append(question)
    return sorted(digests, key=lambda d: (d.day, d.project_name))
