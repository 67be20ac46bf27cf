"""A turn (or one work unit of it, see `units.py`) turned into an episode draft without an LLM: intent, task type,
domains, files, commands, errors, test runs before/after, an outcome with the evidence it rests on (`outcome.py`),
and an extractive summary. Everything is redacted before the episode leaves this module.

The summary is what the hooks inject, so it is written for a later prompt to match and for two or three to fit
the injection budget: the intent (a plan handed over to implement: its title), then the unit's conclusion (a
message that calls no tool, not an interim "Still compiling…" or "Want me to continue?", or the compaction
summary's "current work"; nothing rather than a remark that introduces a tool call), the commits it made and task
items it finished, the counts its last test run gave (the command alone says nothing), the error it ended on; no
markdown tables, code or escapes, paths relative to the repository, files left to the injected line (which lists
them once), under SUMMARY_CHARS.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from tempera.core.clipping import shorten
from tempera.core.models import Context, Episode, ErrorRecord, Intent, Outcome, Source, TestRun, VerificationState
from tempera.core.project import ProjectRef, in_project_terms, is_absolute, relative_to
from tempera.core.redact import redact
from tempera.transcripts import classify, signals
from tempera.transcripts.outcome import distinct_errors, judge_outcome, open_errors, reported_success
from tempera.transcripts.turns import AssistantMessage, Turn

INTENT_CHARS = 300
SUMMARY_INTENT_CHARS = 160
REPLY_CHARS = 320
SUMMARY_CHARS = 480
SUBSTANTIVE_CHARS = 60  # closing words shorter than this (after filler) are an interim remark
MAX_COMMANDS = 50
MAX_FILES = 100
FOLLOWUP = "\n\nThen: "  # raw_prompt: each later prompt folded into the turn follows this
PART_OF = "\n\nPart of the request: "  # raw_prompt: a work unit after the first ends with its turn's prompt
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"^\s*(?:#+|[-*>]|\d+[.)])\s*|\*\*|`{3}\w*")
_FILLER = re.compile(r"^(?:perfect|great|excellent|done|sure|okay|ok|alright|good)[!.]?$|^(?:now )?let me\b", re.I)
# What an agent says between tool calls or to hand the turn back, never what it did: left out of agentic work only
# (in a conversation without tools, "I'll ..." and "Would you like ..." are the content).
_INTERIM = re.compile(
    r"^(?:now,? |next,? |first,? |ok(?:ay)?,? )?(?:i'll|i will|let's|let us|let me|i need to|i'm going to|"
    r"i am going to)\b|^still\b|"
    r"^(?:want me to|would you like|shall i|should i|do you want|let me know|if you'd like)\b|"
    r"^(?:now,? )?i (?:now )?have (?:a |an |all |enough |the )?(?:\w+ ){0,3}"
    r"(?:understanding|picture|information|context|overview)\b|^(?:now,? )?i (?:now )?(?:understand|see)\b.{0,60}$|"
    r"^now i can (?:explain|give|answer|see)\b|"
    r"^now (?:add|update|run|fix|create|write|remove|check|implement|replace|move|edit|verify|build|test)\b",
    re.I,
)
# "Implement the following plan:\n\n# Plan: Foo\n\n## Context …": the request is the plan's title
_PLAN_TITLE = re.compile(
    r"^\s*implement the following plan:\s*\n\s*#+\s*(?:(?:implementation )?plan:\s*)?(?P<title>\S[^\n]*)", re.I
)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^\s*[-|: ]{3,}\s*$", re.M)
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)
_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\\[nrt]")
_INLINE = re.compile(r"\*\*|__|`")
# scratch space: Claude Code's own folder, macOS's and Linux's temporary folders, and Windows' (`relative_to` spells
# a Windows path with `/`)
OUTSIDE_NOISE = (
    "/.claude/",
    "/tmp/",
    "/private/tmp/",
    "/private/var/folders/",
    "/var/folders/",
    "/AppData/Local/Temp/",
)


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE.split(text or ""):
        s = _MARKUP.sub("", part).strip()
        if s and not s.startswith("```"):
            out.append(s)
    return out


def _fitting(parts: list[str], limit: int) -> list[str]:
    """The leading sentences that fit `limit` characters joined by spaces (at least the first)."""
    out: list[str] = []
    used = -1
    for s in parts:
        if out and used + 1 + len(s) > limit:
            break
        out.append(s)
        used += 1 + len(s)
    return out


def _take(parts: list[str], limit: int) -> str:
    """Whole sentences up to `limit` characters (at least the first, clipped)."""
    return shorten(" ".join(_fitting(parts, limit)), limit)


def request(prompt: str) -> str:
    """What the prompt asks for: the prompt, or for a plan handed over to implement, the plan's title."""
    m = _PLAN_TITLE.match(prompt)
    return m.group("title").strip() if m else prompt


def intent_line(prompt: str) -> str:
    """The request in its own words: whole sentences from the start, up to INTENT_CHARS."""
    asked = request(prompt)
    return _take(sentences(asked) or [asked], INTENT_CHARS)


def clean_prose(text: str, root: str | None = None) -> str:
    """An agent's message as plain sentences: no code blocks, markdown tables, escapes or inline markup, and the
    repository's root left out of paths."""
    text = _TABLE_ROW.sub("", _CODE_BLOCK.sub("", text or ""))
    if root:
        text = in_project_terms(text, root)
    return _INLINE.sub("", _ESCAPES.sub(" ", text))


def reply_text(final_text: str, root: str | None = None, *, agentic: bool = False) -> str:
    """The useful sentences of a message, up to REPLY_CHARS (interim remarks left out of agentic work), never
    ending on a sentence that introduces what follows ("For example:", "Changes made:"): what it introduced was
    removed (code, a table) or left out for the length."""
    useful = [
        s
        for s in sentences(clean_prose(final_text, root))
        if not _FILLER.search(s) and not (agentic and _INTERIM.search(s))
    ]
    kept = _fitting(useful, REPLY_CHARS)
    while kept and kept[-1].endswith(":"):
        kept.pop()
    return shorten(" ".join(kept), REPLY_CHARS)


def conclusion(turn: Turn, root: str | None) -> tuple[str, str]:
    """The message that concludes the unit (redacted) and the words to quote from it: the "current work" of a
    compaction that closed it (the fullest account the transcript holds); else the latest message that says more
    than an interim remark, else the last such one with any words left: in a plain conversation among all its
    messages (the last reply, unless a reply folded in, "Thanks!", got only "Happy to help."); in agentic work (tool
    calls) among those that call no tool, else the success reported on the way, looked for first since the reply
    the unit's work went on after (`Turn.closing_messages`), then in the whole unit. A message whose text introduces
    tool calls ("Now I have all the information needed.", "Now add X after Y:") concludes nothing: a unit without a
    closing message or a reported success has no conclusion ("", "")."""
    if turn.unit is not None and turn.unit.compact_summary:
        text = redact(turn.unit.compact_summary)
        return text, reply_text(text, root, agentic=True)
    if not turn.all_tool_calls:
        found = _closing_words(turn.messages, root, agentic=False)
        if found[1]:
            return found
        text = redact(turn.final_text)
        return text, reply_text(text, root)
    closing = turn.closing_messages
    for messages in [closing] if closing is turn.messages else [closing, turn.messages]:
        found = _closing_words(messages, root, agentic=True)
        found = found if found[1] else _success_said(messages, root)
        if found[1]:
            return found
    return "", ""


def _closing_words(messages: list[AssistantMessage], root: str | None, *, agentic: bool) -> tuple[str, str]:
    """The latest of `messages` (in agentic work, of those that call no tool) that says more than an interim remark,
    else the last with any words left, as (the message, its words); ("", "") for none."""
    found = ("", "")
    for message in reversed(messages):
        if not message.text or (agentic and message.calls_tools):
            continue
        text = redact(message.text)
        words = reply_text(text, root, agentic=agentic)
        if len(words) >= SUBSTANTIVE_CHARS:
            return text, words
        found = found if found[1] or not words else (text, words)
    return found


def _success_said(messages: list[AssistantMessage], root: str | None) -> tuple[str, str]:
    """No closing message: the latest report that the checks pass ("All 478 API tests pass."), said on the way to
    the next tool call, as (its message, that sentence)."""
    for message in reversed(messages):
        text = redact(message.text)
        said = reported_success(text)
        if said:
            return text, reply_text(said, root)
    return "", ""


def project_files(paths: list[str], root: str | None) -> list[str]:
    """Files as the repository knows them: relative to its root, each once; a plan or scratch file outside it
    (`~/.claude/plans/…`, `/tmp/…`) is not part of the work on the project."""
    out = []
    for path in paths:
        rel = relative_to(path, root)
        if is_absolute(rel) and any(part in rel for part in OUTSIDE_NOISE):
            continue
        out.append(rel)
    return list(dict.fromkeys(out))


def split_tests(turn: Turn) -> tuple[list[signals.TestRunSeen], list[signals.TestRunSeen]]:
    """Runs before the first edit, and runs after the last edit (all runs when nothing was edited)."""
    edits = [
        i
        for i, c in enumerate(turn.tool_calls)
        if c.name in signals.MODIFY_TOOLS and not c.is_error and c.result is not None
    ]
    if not edits:
        return [], list(turn.test_runs)
    return ([r for r in turn.test_runs if r.position < edits[0]], [r for r in turn.test_runs if r.position > edits[-1]])


def summarize(
    turn: Turn, prompt: str, reply: str, after: list[signals.TestRunSeen], unresolved: list[signals.ErrorSeen]
) -> str:
    """Extractive: the intent, the agent's closing words, commits and items done, the counts the last test run
    gave, the error the unit ended on (the last of `unresolved`, its `open_errors`)."""
    asked = request(prompt)
    parts = [_take(sentences(clean_prose(asked)) or [asked], SUMMARY_INTENT_CHARS) or "(empty prompt)"]
    if reply:
        parts.append(reply)
    unit = turn.unit
    if unit is not None and unit.commits:
        parts.append(f"Committed: {'; '.join(shorten(c, 100) for c in unit.commits[-2:])}.")
    if unit is not None and unit.done:
        parts.append(f"Done: {'; '.join(shorten(d, 80) for d in unit.done[-3:])}.")
    counts = signals.test_counts(after[-1].summary) if after else ""
    if counts:  # the command alone says nothing the outcome does not
        parts.append(f"Tests {'passed' if after[-1].passed else 'failed'}: {counts}.")
    if unresolved:
        parts.append(f"Unresolved: {shorten(unresolved[-1].message, 120)}")
    return shorten("\n".join(parts), SUMMARY_CHARS)


def _test_run(run: signals.TestRunSeen) -> TestRun:
    return TestRun(command=shorten(redact(run.command), 500), passed=run.passed, summary=run.summary)


def asked_prompt(raw_prompt: str) -> str:
    """The prompt the turn began with, as the prompt hook retrieved with it (redacted): a stored raw_prompt less
    the later prompts and the work unit's request that `draft_episode` appends, which the hook never saw with it."""
    return raw_prompt.split(FOLLOWUP, 1)[0].split(PART_OF, 1)[0]


def draft_episode(
    turn: Turn, project: ProjectRef, *, transcript_path: Path, session_id: str | None, root: str | None = None
) -> Episode:
    """The episode for one turn or work unit, redacted. Texts are redacted before they are cut into sentences or
    clipped (a cut secret no longer matches its pattern); the finished episode is redacted again as a safety net.
    Paths inside the repository are stored relative to `root` (the session's checkout, default the project's)."""
    root = root or project.path
    prompt, final_text = redact(turn.prompt), redact(turn.final_text)
    modified = project_files([redact(f) for f in turn.files_modified], root)[:MAX_FILES]
    read = project_files([redact(f) for f in turn.files_read], root)[:MAX_FILES]
    before, after = split_tests(turn)
    closing, words = conclusion(turn, root)
    unresolved = open_errors(turn)
    status, evidence = judge_outcome(turn, after, closing, unresolved)
    raw_prompt = prompt + "".join(f"{FOLLOWUP}{redact(f)}" for f in turn.followups)
    if turn.unit is not None and turn.unit.position > 0:
        raw_prompt += f"{PART_OF}{shorten(redact(turn.unit.turn_prompt), INTENT_CHARS)}"
    started = turn.started_at or datetime.now(timezone.utc)
    episode = Episode(
        created_at=started,
        updated_at=turn.ended_at or started,
        project_id=project.id,
        project_name=project.name,
        project_path=project.path,
        session_id=session_id,
        summary=summarize(turn, prompt, words, after, unresolved),
        intent=Intent(
            raw_prompt=raw_prompt,
            extracted=intent_line(prompt),
            task_type=classify.task_type(prompt, modified, bool(final_text)),
            domains=classify.domains(prompt, modified + read, turn.commands),
        ),
        context=Context(
            files_read=read,
            files_modified=modified,
            symbols_modified=signals.symbols_modified(turn.all_tool_calls, MAX_FILES),
            tools=list(dict.fromkeys(c.name for c in turn.all_tool_calls)),
            commands=[shorten(redact(c), 500) for c in turn.commands[:MAX_COMMANDS]],
            errors=[
                ErrorRecord(message=e.message, fingerprint=e.fingerprint, resolved=e.resolved, resolution=e.resolution)
                for e in distinct_errors(turn.errors)
            ],
        ),
        outcome=Outcome(
            status=status,
            tests_before=[_test_run(r) for r in before],
            tests_after=[_test_run(r) for r in after],
            commit=signals.commit_hash(turn.all_tool_calls),
            verification=(
                VerificationState.TESTS_PASS
                if after and after[-1].passed and status == "success"
                else VerificationState.UNTESTED
            ),
            evidence=evidence,
        ),
        source=Source(transcript_path=str(transcript_path), record_uuids=turn.record_uuids, origin="transcript"),
    )
    return episode.redacted()
