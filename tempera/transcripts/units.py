"""Work units: a long user turn cut where the work changes course, so that each stored episode is one piece of
work a later prompt can match ("work on issue X" followed by three hours of autonomous work is many pieces, not
one episode summarised by its last interim remark).

A unit ends, and the next begins, at:
- a compaction (boundary or summary record): its "current work" closes the unit, its "next step" opens the next;
- a task item started: TodoWrite's in-progress item changes, or TaskUpdate sets a task in_progress;
- a git commit that succeeded;
- a test run that passes after one in the same unit failed;
- a clear change of the files being edited: an edit in a directory the unit has not edited, after three edits in
  others.
A unit's intent says what its work was, never the agent's interim remark ("All tests pass. Let me run lint:"): the
task item it started or worked on (an item left in progress by an earlier turn counts only once a task tool runs
in this one), else the compaction summary's "current work" of the turn, else the turn's prompt.
Every rule looks only at what came before, so a unit's first record never moves when the transcript grows and the
capture cursor works unit by unit as it did turn by turn (a unit's first record stands for the turn's prompt).
Except at a compaction, a cut needs the unit so far to hold MIN_CALLS tool calls, so a short turn stays one
episode, and the two units to be told apart by what the transcript says of them (`_told_apart`: the intents known
at the cut, or the commits and task items the closing unit finished): else both would be stored as the turn's prompt
alone, twice, and the work goes on in one unit. A cut lands at the next assistant message that calls a tool: the
agent's closing words after a commit stay with the work they close. Task items and their subjects are followed
across the session's turns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from tempera.core.project import windows_shaped
from tempera.transcripts import signals
from tempera.transcripts.compaction import current_work, next_step
from tempera.transcripts.reader import Record
from tempera.transcripts.turns import ToolCall, Turn, UnitInfo, clean_text, derive, finish, owner, user_role

MIN_CALLS = 8  # tool calls a unit holds before anything but a compaction may close it
FILE_SHIFT_EDITS = 3  # edits a unit has made before a new directory counts as a change of subject
_TASK_ID = re.compile(r"Task #(\w+)")


@dataclass
class _Tasks:
    """Task items as the session goes: TodoWrite's list, and TaskCreate subjects by id (TaskUpdate names ids)."""

    current: str | None = None  # the item in progress (TodoWrite's, or the task TaskUpdate last started)
    touched: bool = False  # a task tool ran in the turn being cut: `current` is not left over from an earlier one
    todo_done: set[str] = field(default_factory=set)
    subjects: dict[str, str] = field(default_factory=dict)

    def state(self) -> dict[str, Any]:
        """What is followed across turns, as plain data (`touched` is reset at every turn)."""
        return {"current": self.current, "todo_done": sorted(self.todo_done), "subjects": dict(self.subjects)}

    @classmethod
    def restore(cls, state: dict[str, Any]) -> "_Tasks":
        return cls(state.get("current"), False, set(state.get("todo_done", ())), dict(state.get("subjects", {})))

    def started_and_done(self, call: ToolCall) -> tuple[str | None, list[str]]:
        """The item this call put in progress (if it changed) and the items it completed."""
        self.touched = self.touched or call.name in ("TodoWrite", "TaskCreate", "TaskUpdate")
        if call.name == "TodoWrite":
            todos = [t for t in call.input.get("todos") or [] if isinstance(t, dict)]
            current = next((str(t.get("content") or "") for t in todos if t.get("status") == "in_progress"), None)
            done = [str(t.get("content") or "") for t in todos if t.get("status") == "completed"]
            new_done = [d for d in done if d and d not in self.todo_done]
            self.todo_done.update(new_done)
            started = current if current and current != self.current else None
            self.current = current
            return started, new_done
        if call.name == "TaskCreate":
            task_id = _task_id(call)
            if task_id:
                self.subjects[task_id] = str(call.input.get("subject") or "")
        elif call.name == "TaskUpdate":
            subject = self.subjects.get(str(call.input.get("taskId") or ""), "")
            status = call.input.get("status")
            if subject and status == "in_progress":
                self.current = subject
                return subject, []
            if subject and status == "completed":
                self.current = None if self.current == subject else self.current
                return None, [subject]
        return None, []


def _task_id(call: ToolCall) -> str | None:
    out = call.output if isinstance(call.output, dict) else {}
    task = out.get("task") if isinstance(out.get("task"), dict) else {}
    if task.get("id") is not None:
        return str(task["id"])
    m = _TASK_ID.search(call.result or "")
    return m.group(1) if m else None


@dataclass
class _Cut:
    at: int  # index into the turn's records where the unit starts
    reason: str
    intent: str = ""
    first_item: str = ""  # the first task item started in the unit
    carried: str = ""  # the item in progress where the unit starts, else the turn's compaction's current work
    done: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    compact_summary: str = ""


@dataclass
class _Unit:
    """What the walk knows about the unit it is in."""

    calls: int = 0
    edits: int = 0
    dirs: set[str] = field(default_factory=set)
    failing: bool = False


def _tool_message_starts(records: list[Record]) -> set[int]:
    """Indexes of the first record of each assistant message that calls a tool (a message spans records)."""
    first: dict[str, int] = {}
    calls: set[str] = set()
    for i, r in enumerate(records):
        if r.type != "assistant":
            continue
        key = r.message_key
        first.setdefault(key, i)
        if r.tool_uses:
            calls.add(key)
    return {i for key, i in first.items() if key in calls}


def _edit_dir(call: ToolCall | None) -> str | None:
    """The folder an edit call writes in (None for any other call)."""
    path = signals.file_path(call) if call is not None and call.name in signals.MODIFY_TOOLS else None
    return str((PureWindowsPath if windows_shaped(path) else PurePosixPath)(path).parent) if path else None


def _is_compaction(r: Record) -> bool:
    if r.type == "system":
        return r.subtype == "compact_boundary"
    return r.type == "user" and user_role(r) == "compact_summary"


def _cuts(turn: Turn, tasks: _Tasks) -> list[_Cut]:
    """Where the turn's units start (the first at its prompt), walking its records once."""
    records = turn.records
    starts = _tool_message_starts(records)
    calls = {c.id: c for c in turn.tool_calls}
    cuts = [_Cut(0, "prompt", turn.prompt)]
    unit = _Unit()
    pending: _Cut | None = None
    work = ""  # "current work" of the turn's latest compaction
    for i, r in enumerate(records):
        if i in starts and i > 0:
            opening = pending if pending is not None else _Cut(i, "files") if _files_shift(r, unit, calls) else None
            if opening is not None:
                opening.at, opening.carried = i, (tasks.current if tasks.touched else None) or work
                if _told_apart(cuts[-1], opening, turn.prompt, len(cuts) == 1):
                    cuts.append(opening)
                    unit = _Unit()
                else:
                    unit.failing = False  # the red-green cycle is over: only a new failure may close the unit
                pending = None
        if r.type == "assistant":
            for block in r.tool_uses:
                unit.calls += 1
                folder = _edit_dir(calls.get(block.tool_id or ""))
                if folder is not None:
                    unit.edits += 1
                    unit.dirs.add(folder)
        elif _is_compaction(r) and (unit.calls or pending is not None):
            text = clean_text(r.text) if r.type == "user" else ""
            if text:
                cuts[-1].compact_summary = work = current_work(text)
            pending = _Cut(0, "compaction", next_step(text) if text else (pending.intent if pending else ""))
        for block in r.tool_results if r.type == "user" else []:
            call = calls.get(block.tool_id or "")
            if call is not None:
                pending = _after_call(call, tasks, unit, cuts[-1], pending)
    return cuts


def _intent(cut: _Cut, prompt: str, first: bool) -> str:
    """What the unit starting at `cut` set out to do (see the module's docstring); the turn's first unit, its prompt."""
    return prompt if first else (cut.intent or cut.first_item or cut.carried or prompt)


def _told_apart(closing: _Cut, opening: _Cut, prompt: str, first: bool) -> bool:
    """Whether the unit `opening` starts can be told from the one it closes (`first`: the turn's first) by what the
    transcript says of them: its intent as known now, else the commits and items the closing unit finished. A
    compaction always closes a unit. Else the two would be one request's episodes the agent cannot tell apart (the
    prompt for both, one with a file): the work goes on in the closing unit. Decided from records before the cut
    alone, so a unit's first record never moves when the transcript grows."""
    if opening.reason == "compaction" or closing.commits or closing.done:
        return True
    return _intent(closing, prompt, first) != _intent(opening, prompt, False)


def _files_shift(record: Record, unit: _Unit, calls: dict[str, ToolCall]) -> bool:
    if unit.calls < MIN_CALLS or unit.edits < FILE_SHIFT_EDITS:
        return False
    folders = [f for f in (_edit_dir(calls.get(b.tool_id or "")) for b in record.tool_uses) if f is not None]
    return bool(folders) and not unit.dirs.intersection(folders)


def _after_call(call: ToolCall, tasks: _Tasks, unit: _Unit, current: _Cut, pending: _Cut | None) -> _Cut | None:
    """What one finished call says: an item started or done, a commit, tests back to green."""
    started, done = tasks.started_and_done(call)
    current.done.extend(done)
    current.first_item = current.first_item or started or ""
    ready = unit.calls >= MIN_CALLS
    if started and ready:
        if pending is None:
            return _Cut(0, "task", started)
        if not pending.intent:
            pending.reason, pending.intent = "task", started
    commit = signals.commit_made(call)
    if commit is not None:
        current.commits.append(commit[1] or commit[0])
        if ready and pending is None:
            return _Cut(0, "commit")
    passed = signals.test_passed(call)
    if passed is False:
        unit.failing = True
    elif passed and unit.failing and ready and pending is None:
        return _Cut(0, "tests")
    return pending


def _unit_turn(turn: Turn, records: list[Record], position: int, until_line: int | None) -> Turn:
    """One unit as a Turn of its own; `until_line` is where the next unit starts (None for the last)."""
    first, last = records[0], until_line is None
    followups = [
        (t, n)
        for t, n in zip(turn.followups, turn.followup_lines)
        if (position == 0 or n >= first.line) and (last or n < until_line)
    ]
    unit = Turn(
        index=turn.index,
        kind=turn.kind if position == 0 else "unit",
        prompt=turn.prompt,
        prompt_uuid=first.uuid if position else turn.prompt_uuid,
        prompt_line=first.line if position else turn.prompt_line,
        session_id=turn.session_id,
        cwd=first.cwd or turn.cwd,
        started_at=first.timestamp or turn.started_at,
        command=turn.command if position == 0 else None,
        records=records,
        followups=[t for t, _ in followups],
        followup_lines=[n for _, n in followups],
        interrupted=turn.interrupted and last,
        compacted=any(_is_compaction(r) for r in records),
    )
    finish(unit)
    return unit


def split_turn(turn: Turn, tasks: _Tasks | None = None) -> list[Turn]:
    """The turn's work units; a turn with no cut is returned as its one unit."""
    tasks = tasks if tasks is not None else _Tasks()
    tasks.touched = False
    cuts = _cuts(turn, tasks)
    if len(cuts) == 1:
        c = cuts[0]
        turn.unit = UnitInfo(0, "prompt", turn.prompt, turn.prompt, c.done, c.commits, c.compact_summary)
        return [turn]
    bounds = [c.at for c in cuts] + [len(turn.records)]
    units = [
        _unit_turn(turn, turn.records[a:b], n, turn.records[b].line if b < len(turn.records) else None)
        for n, (a, b) in enumerate(zip(bounds, bounds[1:]))
    ]
    for run in turn.subagents:
        found = owner(run, units)
        (found or units[-1]).subagents.append(run)
    for n, (unit, cut) in enumerate(zip(units, cuts)):
        intent = _intent(cut, turn.prompt, n == 0)
        unit.prompt = intent
        unit.unit = UnitInfo(n, cut.reason, intent, turn.prompt, cut.done, cut.commits, cut.compact_summary)
        derive(unit)
    return units


def work_units(turns: list[Turn], tasks_before: dict[str, Any] | None = None) -> list[Turn]:
    """Every turn's work units, in order, with task items followed across turns (from `tasks_before`, what
    `Turn.tasks_before` of the first turn held when the turns are read from the middle of a session)."""
    tasks = _Tasks.restore(tasks_before or {})
    units = []
    for turn in turns:
        turn.tasks_before = tasks.state()
        units += split_turn(turn, tasks)
    return units
