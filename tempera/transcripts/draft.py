"""A turn (or one work unit of it, see `units.py`) turned into an episode draft without an LLM: intent, task type,
domains, files, commands, errors, test runs before/after, an outcome with the evidence it rests on, and an
extractive summary. Everything is redacted before the episode leaves this module.

The summary is what the hooks inject, so it is written for a later prompt to match and for two or three to fit
the injection budget: the intent, then the unit's substantive closing words (not an interim "Still compiling…" or
"Want me to continue?": an earlier message that says what was done, or the compaction summary's "current work"),
the commits it made and task items it finished, how the tests ended; no markdown tables, code or escapes, paths
relative to the repository, files left to the injected line (which lists them once), under SUMMARY_CHARS.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from tempera.core.models import Context, Episode, ErrorRecord, Intent, Outcome, Source, TestRun, VerificationState
from tempera.core.project import ProjectRef, relative_to
from tempera.core.redact import redact
from tempera.transcripts import classify, signals
from tempera.transcripts.turns import Turn

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
    r"^(?:now |next,? )?(?:i'll|i will|let's|let us)\b|^still\b|"
    r"^(?:want me to|would you like|shall i|should i|do you want|let me know|if you'd like)\b",
    re.I,
)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$|^\s*[-|: ]{3,}\s*$", re.M)
_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)
_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\\[nrt]")
_INLINE = re.compile(r"\*\*|__|`")
_PIPE_TAIL = re.compile(r"\s*(?:\d?>&\d|\||;)\s*")  # `2>&1 | tail -15` says nothing about the tests
OUTSIDE_NOISE = ("/.claude/", "/tmp/", "/private/tmp/", "/private/var/folders/", "/var/folders/")
_PROBLEM = re.compile(
    r"\b(?:couldn't|could not|can't|cannot|unable to|wasn't able|was not able|failed to|still "
    r"fail\w*|still broken|doesn't work|does not work|not working|blocked by)\b",
    re.I,
)


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE.split(text or ""):
        s = _MARKUP.sub("", part).strip()
        if s and not s.startswith("```"):
            out.append(s)
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _take(parts: list[str], limit: int) -> str:
    """Whole sentences up to `limit` characters (at least the first, clipped)."""
    out = ""
    for s in parts:
        if out and len(out) + 1 + len(s) > limit:
            break
        out = f"{out} {s}".strip()
    return _clip(out, limit)


def intent_line(prompt: str) -> str:
    """The request in its own words: whole sentences from the start, up to INTENT_CHARS."""
    return _take(sentences(prompt) or [prompt], INTENT_CHARS)


def clean_prose(text: str, root: str | None = None) -> str:
    """An agent's message as plain sentences: no code blocks, markdown tables, escapes or inline markup, and the
    repository's root left out of paths."""
    text = _INLINE.sub("", _ESCAPES.sub(" ", _TABLE_ROW.sub("", _CODE_BLOCK.sub("", text or ""))))
    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    return text


def reply_text(final_text: str, root: str | None = None, *, agentic: bool = False) -> str:
    """The useful sentences of a message, up to REPLY_CHARS (interim remarks left out of agentic work)."""
    useful = [
        s
        for s in sentences(clean_prose(final_text, root))
        if not _FILLER.search(s) and not (agentic and _INTERIM.search(s))
    ]
    return _take(useful, REPLY_CHARS) if useful else ""


def closing_words(turn: Turn, root: str | None) -> str:
    """The unit's substantive last words: the "current work" of a compaction that closed it (the fullest account
    the transcript holds); else, in agentic work (tool calls), the latest message that says more than an interim
    remark, else the last words there are; in a plain conversation, the last reply."""
    if turn.unit is not None and turn.unit.compact_summary:
        return reply_text(redact(turn.unit.compact_summary), root, agentic=True)
    agentic = bool(turn.all_tool_calls)
    texts = [m.text for m in reversed(turn.messages) if m.text]
    for text in texts if agentic else texts[:1]:
        reply = reply_text(redact(text), root, agentic=agentic)
        if len(reply) >= SUBSTANTIVE_CHARS or not agentic:
            return reply
    return reply_text(redact(texts[0]), root) if texts else ""


def project_files(paths: list[str], root: str | None) -> list[str]:
    """Files as the repository knows them: relative to its root, each once; a plan or scratch file outside it
    (`~/.claude/plans/…`, `/tmp/…`) is not part of the work on the project."""
    out = []
    for path in paths:
        rel = relative_to(path, root)
        if rel.startswith("/") and any(part in rel for part in OUTSIDE_NOISE):
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


def judge_outcome(turn: Turn, after: list[signals.TestRunSeen], final_text: str) -> tuple[str, list[str]]:
    """success / partial / failure / unknown, and the observations that decided it (`final_text` redacted)."""
    if not turn.has_agent_work:
        return "unknown", ["no agent response in this turn"] + (["interrupted by the user"] if turn.interrupted else [])
    evidence: list[str] = []
    unresolved = [e for e in distinct_errors(turn.errors) if not e.resolved]
    problem = next((s for s in sentences(final_text) if _PROBLEM.search(s)), None)
    if turn.interrupted:
        evidence.append("interrupted by the user")
    if turn.rejections:
        evidence.append(f"user rejected {len(turn.rejections)} tool call(s)")
    if problem:
        evidence.append(f"agent reported a problem: {_clip(problem, 160)}")
    if unresolved:
        evidence.append(f"{len(unresolved)} unresolved error(s): {_clip(unresolved[-1].message, 120)}")
    if after:
        last = after[-1]
        state = "passed" if last.passed else "failing"
        evidence.insert(
            0,
            f"tests {state} at the end: `{_clip(redact(last.command), 80)}`"
            + (f" ({last.summary})" if last.summary else ""),
        )
        if not last.passed:
            return "failure", evidence
        return ("partial" if turn.interrupted else "success"), evidence
    if turn.rejections and not turn.files_modified:
        return "failure", evidence
    if turn.interrupted or problem or unresolved:
        return "partial", evidence
    if turn.files_modified:
        return "success", [f"modified {len(turn.files_modified)} file(s) with no unresolved error"]
    if final_text:
        return "success", ["answered without errors"]
    return "unknown", ["no final answer"]


def summarize(turn: Turn, prompt: str, reply: str, after: list[signals.TestRunSeen]) -> str:
    """Extractive: the intent, the agent's closing words, commits and items done, how the tests ended."""
    parts = [_take(sentences(clean_prose(prompt)) or [prompt], SUMMARY_INTENT_CHARS) or "(empty prompt)"]
    if reply:
        parts.append(reply)
    unit = turn.unit
    if unit is not None and unit.commits:
        parts.append(f"Committed: {'; '.join(_clip(c, 100) for c in unit.commits[-2:])}.")
    if unit is not None and unit.done:
        parts.append(f"Done: {'; '.join(_clip(d, 80) for d in unit.done[-3:])}.")
    if after:
        command = _PIPE_TAIL.split(redact(after[-1].command), 1)[0]
        parts.append(f"Tests {'passed' if after[-1].passed else 'failed'}: {_clip(command, 60)}.")
    unresolved = [e for e in distinct_errors(turn.errors) if not e.resolved]
    if unresolved:
        parts.append(f"Unresolved: {_clip(unresolved[-1].message, 120)}")
    return _clip("\n".join(parts), SUMMARY_CHARS)


def distinct_errors(errors: list[signals.ErrorSeen]) -> list[signals.ErrorSeen]:
    """One entry per fingerprint, the last occurrence deciding whether it ended resolved."""
    last: dict[str, signals.ErrorSeen] = {}
    for err in errors:
        last.pop(err.fingerprint, None)
        last[err.fingerprint] = err
    return list(last.values())


def _test_run(run: signals.TestRunSeen) -> TestRun:
    return TestRun(command=_clip(redact(run.command), 500), passed=run.passed, summary=run.summary)


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
    status, evidence = judge_outcome(turn, after, final_text)
    raw_prompt = prompt + "".join(f"{FOLLOWUP}{redact(f)}" for f in turn.followups)
    if turn.unit is not None and turn.unit.position > 0:
        raw_prompt += f"{PART_OF}{_clip(redact(turn.unit.turn_prompt), INTENT_CHARS)}"
    started = turn.started_at or datetime.now(timezone.utc)
    episode = Episode(
        created_at=started,
        updated_at=turn.ended_at or started,
        project_id=project.id,
        project_name=project.name,
        project_path=project.path,
        session_id=session_id,
        summary=summarize(turn, prompt, closing_words(turn, root), after),
        intent=Intent(
            raw_prompt=raw_prompt,
            extracted=intent_line(prompt),
            task_type=classify.task_type(prompt, modified, bool(final_text)),
            domains=classify.domains(prompt, modified + read, turn.commands),
        ),
        context=Context(
            files_read=read,
            files_modified=modified,
            tools=list(dict.fromkeys(c.name for c in turn.all_tool_calls)),
            commands=[_clip(redact(c), 500) for c in turn.commands[:MAX_COMMANDS]],
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
