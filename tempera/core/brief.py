"""The brief: one answer joining every self-improvement signal for the files the agent is about to touch.

It holds the pending ask-backs, the matching reasoning template, the top correction categories for these files
(matched by their full path relative to the project root), should-have-asked triggers and a calibration warning.
With `cross_project`, transferable rows of other projects join in, tagged with their project; project-scoped rows
never cross. The text form is plain statements of fact (never instructions), each with a stable key so a hook can
leave out what it already injected in the session.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from tempera.core.clipping import shorten
from tempera.core.config import SelfImproveConfig
from tempera.core.db import Database
from tempera.core.directives import reads_as_order, shown_lines
from tempera.core.selfimprove import calibration
from tempera.core.selfimprove.anchors import anchor_files, files_named_in, languages_of
from tempera.core.selfimprove.askbacks import AskBack, ask_backs, consume
from tempera.core.selfimprove.asks import ASKS
from tempera.core.selfimprove.logs import LogEntry, LogKind, entries_for
from tempera.core.selfimprove.mistakes import MISTAKES
from tempera.core.selfimprove.templates import Template, get_template

if TYPE_CHECKING:
    from tempera.core.memory import Memory

__all__ = [
    "Brief",
    "Statement",
    "build_brief",
    "files_named_in",
    "known_files",
    "prompt_brief",
    "session_brief",
    "session_start",
]


@dataclass(frozen=True)
class Statement:
    key: str  # stable across calls: what a hook records to avoid repeating itself within a session
    text: str


@dataclass
class CategoryCount:
    category: str
    count: int
    project: str | None  # None: this project; else the foreign project it comes from
    latest: str  # the words of the newest correction that reads as no order (the brief quotes no orders)
    files: list[str]
    sessions: int = 1
    last_seen: str = ""  # the date of the newest correction (its session's, for an imported one)
    said_on: str = ""  # the date of `latest`


@dataclass
class AskLine:
    trigger: str  # '' when the words read as an order, as `answer`
    question: str
    answer: str
    count: int
    project: str | None
    sessions: int = 1
    last_seen: str = ""


@dataclass
class Brief:
    project_id: str
    project: str
    files: list[str]
    task_type: str | None = None
    domain: str | None = None
    cross_project: bool = False
    ask_backs: list[AskBack] = field(default_factory=list)
    template: Template | None = None
    categories: list[CategoryCount] = field(default_factory=list)
    asks: list[AskLine] = field(default_factory=list)
    calibration: calibration.Bucket | None = None

    @property
    def empty(self) -> bool:
        return not (self.ask_backs or self.template or self.categories or self.asks or self.calibration)

    def statements(self) -> list[Statement]:
        """Most important first: pending questions, template, corrections, asks, calibration."""
        out = [Statement(f"askback:{a.id}", a.statement()) for a in self.ask_backs]
        if self.template:
            t = self.template
            tag = f" [from {t.project}]" if t.project_id != self.project_id else ""
            steps = " ".join(f"{n}. {s}" for n, s in enumerate(t.steps, 1))
            out.append(
                Statement(
                    f"template:{t.project_id}:{t.task_type}:{t.domain}",
                    f"Reasoning template{tag} for {t.task_type}/{t.domain or 'any domain'}: "
                    f"{len(t.evidence)} verified successes had these steps in common ({t.title}): "
                    f"{steps}",
                )
            )
        for c in self.categories:
            tag = f"[from {c.project}] " if c.project else ""
            more = f" and {len(c.files) - 3} more" if len(c.files) > 3 else ""
            where = f" on {', '.join(c.files[:3])}{more}" if c.files else ""
            when = f" on {c.said_on}" if c.said_on != c.last_seen else ""
            out.append(
                Statement(
                    f"category:{c.project or self.project_id}:{c.category}:{','.join(c.files[:3])}",
                    f"{tag}Correction category {c.category} ({c.count}x, {c.sessions} sessions, last {c.last_seen})"
                    f'{where}; the user said{when}: "{c.latest}"',
                )
            )
        for a in self.asks:
            tag = f"[from {a.project}] " if a.project else ""
            trigger = f'; the request was "{a.trigger}"' if a.trigger else ""
            answer = f'; the user then said: "{a.answer}"' if a.answer else ""
            out.append(
                Statement(
                    f"ask:{a.project or self.project_id}:{a.question.lower()}",
                    f'{tag}Question that should have been asked first: "{a.question}" ({a.count}x, {a.sessions} '
                    f"sessions, last {a.last_seen}){trigger}{answer}",
                )
            )
        if self.calibration:
            out.append(
                Statement(
                    f"calibration:{self.calibration.project_id}:{self.calibration.task_type}",
                    f"Calibration: {self.calibration.statement()}",
                )
            )
        return out

    def select(self, budget_chars: int = 2000, *, exclude: Collection[str] = ()) -> list[Statement]:
        """The statements that fit the budget as `- text` lines, most important first, leaving out `exclude`d keys
        (what a hook already injected this session); a first line longer than the budget is clipped."""
        chosen: list[Statement] = []
        used = 0
        for s in self.statements():
            if s.key in exclude:
                continue
            cost = len(s.text) + 3  # "- " and the newline
            if used + cost > budget_chars:
                room = budget_chars - used - 3
                if not chosen and room > 40:
                    chosen.append(Statement(s.key, s.text[: room - 1] + "…"))
                break
            chosen.append(s)
            used += cost
        return chosen

    def render(self, budget_chars: int = 2000, *, exclude: Collection[str] = ()) -> str:
        """`select` as text, each statement as memory may show it (`directives.shown_lines`); '' when there is
        nothing (new) to say."""
        return "\n".join(shown_lines(s.text for s in self.select(budget_chars, exclude=exclude)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "project_id": self.project_id,
            "project": self.project,
            "files": self.files,
            "task_type": self.task_type,
            "domain": self.domain,
            "cross_project": self.cross_project,
            "ask_backs": [a.as_dict() for a in self.ask_backs],
            "template": self.template.as_dict() if self.template else None,
            "correction_categories": [vars(c) for c in self.categories],
            "should_have_asked": [vars(a) for a in self.asks],
            "calibration_warning": self.calibration.as_dict() if self.calibration else None,
            "statements": [vars(s) for s in self.statements()],
        }


def _quoted(text: str, n: int) -> str:
    """Stored words as the brief may quote them: clipped, and '' when they read as an order to an agent."""
    return "" if reads_as_order(text) else shorten(text, n)


class _Evidence:
    """Which groups of rows a brief shows: recent and repeated, at least `brief_min_rows` rows from
    `brief_min_sessions` sessions within `brief_window_days` up to the latest session of the rows' project (its
    newest episode, else its newest row), not up to now, so an import of old sessions counts as live capture did."""

    def __init__(self, db: Database, cfg: SelfImproveConfig) -> None:
        self.db, self.cfg = db, cfg
        self._latest: dict[str, datetime] = {}

    def _since(self, entry: LogEntry) -> datetime:
        if entry.project_id not in self._latest:
            row = self.db.one("SELECT MAX(created_at) FROM episodes WHERE project_id = ?", (entry.project_id,))
            latest = max(_when(row[0] if row and row[0] else entry.created_at), _when(entry.created_at))
            self._latest[entry.project_id] = latest
        return self._latest[entry.project_id] - timedelta(days=self.cfg.brief_window_days)

    def recent(self, entries: list[LogEntry]) -> list[LogEntry] | None:
        """The recent rows of one group (newest first), or None when they are too few or from too few sessions."""
        kept = [e for e in entries if _when(e.created_at) >= self._since(e)]
        enough = len(kept) >= self.cfg.brief_min_rows and _sessions(kept) >= self.cfg.brief_min_sessions
        return kept if enough else None


def _when(stamp: str) -> datetime:
    at = datetime.fromisoformat(stamp)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _sessions(entries: list[LogEntry]) -> int:
    return len({e.session_id or e.episode_id or str(e.id) for e in entries})


def _categories(rows: list[LogEntry], limit: int, evidence: _Evidence) -> list[CategoryCount]:
    groups: dict[tuple[str | None, str], list[LogEntry]] = {}
    for r in rows:  # newest first
        groups.setdefault((r.project_name if r.foreign else None, r.values["category"]), []).append(r)
    counted = []
    for (project, category), found in groups.items():
        entries = evidence.recent(found)
        if entries is None:
            continue
        quotable = next((e for e in entries if _quoted(e.values["correction"], 120)), None)
        if quotable is None:  # only a count and a category name: nothing the next agent could act on
            continue
        files = list(dict.fromkeys(f for e in entries for f in e.files))
        counted.append(
            CategoryCount(
                category,
                len(entries),
                project,
                _quoted(quotable.values["correction"], 120),
                files,
                _sessions(entries),
                entries[0].created_at[:10],
                quotable.created_at[:10],
            )
        )
    own = sorted((c for c in counted if c.project is None), key=lambda c: -c.count)[:limit]
    foreign = sorted((c for c in counted if c.project is not None), key=lambda c: -c.count)[:limit]
    return own + foreign


def _asks(rows: list[LogEntry], limit: int, evidence: _Evidence) -> list[AskLine]:
    groups: dict[tuple[str | None, str], list[LogEntry]] = {}
    for r in rows:
        groups.setdefault((r.project_name if r.foreign else None, r.values["question"].lower()), []).append(r)
    lines = []
    for (project, _), found in groups.items():
        e = evidence.recent(found)
        if e is not None:
            first = e[0].values
            lines.append(
                AskLine(
                    _quoted(first["trigger"], 120),
                    first["question"][:240],
                    _quoted(first["answer"], 120),
                    len(e),
                    project,
                    _sessions(e),
                    e[0].created_at[:10],
                )
            )
    return sorted(lines, key=lambda a: (a.project is not None, -a.count))[:limit]


def _project(db: Database, project_id: str) -> tuple[str, str | None]:
    row = db.one("SELECT name, path FROM projects WHERE id = ?", (project_id,))
    return (row[0], row[1]) if row else (project_id, None)


def _anchored(mem: "Memory", brief: Brief) -> Brief:
    """Fill the file-anchored sections: correction categories and should-have-asked triggers. Foreign rows match
    by the same relative path, the language of the files or the brief's domain."""
    cfg = mem.config.selfimprove
    scopes = [f"language:{lang}" for lang in languages_of(brief.files)]
    scopes += [f"domain:{brief.domain.lower()}"] if brief.domain else []

    def rows(kind: LogKind) -> list[LogEntry]:
        return entries_for(
            mem.db, kind, brief.project_id, brief.files, cross_project=brief.cross_project, scopes=scopes
        )

    evidence = _Evidence(mem.db, cfg)
    brief.categories = _categories(rows(MISTAKES), cfg.brief_top_categories, evidence)
    brief.asks = _asks(rows(ASKS), cfg.brief_max_asks, evidence)
    return brief


def build_brief(
    mem: "Memory",
    project_id: str,
    files: list[str],
    task_type: str | None = None,
    domain: str | None = None,
    cross_project: bool = False,
) -> Brief:
    """The brief for these files (absolute or root-relative) in this project; consumes nothing (the pending
    ask-backs stay pending: only SessionStart / `tempera lessons session-start` take them)."""
    name, root = _project(mem.db, project_id)
    brief = _anchored(mem, Brief(project_id, name, anchor_files(files, root), task_type, domain, cross_project))
    brief.ask_backs = ask_backs(mem.db, project_id=project_id, pending_only=True, limit=3)
    if task_type:
        brief.template = get_template(mem.db, project_id, task_type, domain, cross_project=cross_project)
    brief.calibration = calibration.warning(mem.db, mem.config.selfimprove, project_id, task_type)
    return brief


def session_brief(mem: "Memory", project_id: str) -> Brief:
    """The project-level brief for SessionStart: pending ask-backs, the project's top correction categories and
    should-have-asked triggers over all its files, and the worst calibration warning."""
    return build_brief(mem, project_id, [])


def session_start(mem: "Memory", project_id: str, *, by: str) -> Brief:
    """What SessionStart shows: the project's pending ask-backs, consumed now (`by`: the session that saw them;
    each is shown once), in the project-level brief."""
    taken = consume(mem.db, project_id, by=by)
    brief = session_brief(mem, project_id)
    brief.ask_backs = taken
    return brief


def hook_session_start(mem: "Memory", project_id: str, *, by: str) -> Brief:
    """What the SessionStart hook shows before any task is known: the pending ask-backs, consumed now, and nothing
    of the project-level brief. A correction category or a calibration figure bears on a task only when its prompt
    names their files or kind of work, which `prompt_brief` checks at each prompt; shown to every session start
    they were noise (evals/injection_quality.py: read against the 22 later sessions that followed, 0 of 110 useful,
    8 marginal). `session_start` (the CLI and MCP tool, where the whole brief is asked for) keeps them."""
    name, _ = _project(mem.db, project_id)
    return Brief(project_id, name, [], ask_backs=consume(mem.db, project_id, by=by))


def known_files(db: Database, project_id: str) -> list[str]:
    """Every file the project's corrections and should-have-asked rows are anchored to."""
    return [
        r[0]
        for r in db.query(
            "SELECT DISTINCT f.path FROM selfimprove_files f "
            "LEFT JOIN mistakes m ON f.kind = 'mistake' AND m.id = f.row_id "
            "LEFT JOIN should_have_asked a ON f.kind = 'ask' AND a.id = f.row_id "
            "WHERE COALESCE(m.project_id, a.project_id) = ?",
            (project_id,),
        )
    ]


def prompt_brief(mem: "Memory", project_id: str, prompt: str, project_root: str | None) -> Brief | None:
    """For UserPromptSubmit: the file-specific part of the brief (corrections, asks) for the files the prompt
    names; None when it names none or they have nothing logged."""
    files = files_named_in(prompt, project_root, known_files(mem.db, project_id))
    if not files:
        return None
    name, _ = _project(mem.db, project_id)
    brief = _anchored(mem, Brief(project_id, name, files))
    return None if brief.empty else brief
