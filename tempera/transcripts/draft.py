"""A turn turned into an episode draft without an LLM: intent, task type, domains, files, commands, errors,
test runs before/after, an outcome with the evidence it rests on, and an extractive summary. Everything is
redacted before the episode leaves this module."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from tempera.core.models import (Context, Episode, ErrorRecord, Intent, Outcome, Source, TestRun,
                                 VerificationState)
from tempera.core.project import ProjectRef
from tempera.core.redact import redact, redact_data
from tempera.transcripts import classify, signals
from tempera.transcripts.turns import Turn

INTENT_CHARS = 300
REPLY_CHARS = 600
MAX_COMMANDS = 50
MAX_FILES = 100
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP = re.compile(r"^\s*(?:#+|[-*>]|\d+[.)])\s*|\*\*|`{3}\w*")
_FILLER = re.compile(r"^(?:perfect|great|excellent|done|sure|okay|ok|alright|good)[!.]?$|^(?:now )?let me\b", re.I)
_PROBLEM = re.compile(r"\b(?:couldn't|could not|can't|cannot|unable to|wasn't able|was not able|failed to|still "
                      r"fail\w*|still broken|doesn't work|does not work|not working|blocked by)\b", re.I)


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


def reply_text(final_text: str) -> str:
    useful = [s for s in sentences(final_text) if not _FILLER.search(s)]
    return _take(useful, REPLY_CHARS)


def _relative(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def split_tests(turn: Turn) -> tuple[list[signals.TestRunSeen], list[signals.TestRunSeen]]:
    """Runs before the first edit, and runs after the last edit (all runs when nothing was edited)."""
    edits = [i for i, c in enumerate(turn.tool_calls) if c.name in signals.MODIFY_TOOLS and not c.is_error
             and c.result is not None]
    if not edits:
        return [], list(turn.test_runs)
    return ([r for r in turn.test_runs if r.position < edits[0]],
            [r for r in turn.test_runs if r.position > edits[-1]])


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
        evidence.insert(0, f"tests {state} at the end: `{_clip(redact(last.command), 80)}`"
                           + (f" ({last.summary})" if last.summary else ""))
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


def summarize(turn: Turn, prompt: str, final_text: str, files_modified: list[str],
              after: list[signals.TestRunSeen]) -> str:
    """Extractive: the request, the agent's closing words, what changed, how the tests ended."""
    parts = [intent_line(prompt) or "(empty prompt)"]
    reply = reply_text(final_text)
    if reply:
        parts.append(reply)
    if files_modified:
        more = f" and {len(files_modified) - 5} more" if len(files_modified) > 5 else ""
        parts.append(f"Changed {', '.join(files_modified[:5])}{more}.")
    if after:
        parts.append(f"Tests {'passed' if after[-1].passed else 'failed'}: `{_clip(redact(after[-1].command), 80)}`.")
    unresolved = [e for e in distinct_errors(turn.errors) if not e.resolved]
    if unresolved:
        parts.append(f"Unresolved: {_clip(unresolved[-1].message, 160)}")
    return "\n".join(parts)


def distinct_errors(errors: list[signals.ErrorSeen]) -> list[signals.ErrorSeen]:
    """One entry per fingerprint, the last occurrence deciding whether it ended resolved."""
    last: dict[str, signals.ErrorSeen] = {}
    for err in errors:
        last.pop(err.fingerprint, None)
        last[err.fingerprint] = err
    return list(last.values())


def _test_run(run: signals.TestRunSeen) -> TestRun:
    return TestRun(command=_clip(redact(run.command), 500), passed=run.passed, summary=run.summary)


def draft_episode(turn: Turn, project: ProjectRef, *, transcript_path: Path, session_id: str | None) -> Episode:
    """The episode for one turn, redacted. Texts are redacted before they are cut into sentences or clipped (a
    cut secret no longer matches its pattern); the finished episode is redacted again as a safety net. Paths
    inside the project are stored relative to its root."""
    root = project.path
    prompt, final_text = redact(turn.prompt), redact(turn.final_text)
    modified = [_relative(redact(f), root) for f in turn.files_modified][:MAX_FILES]
    read = [_relative(redact(f), root) for f in turn.files_read][:MAX_FILES]
    before, after = split_tests(turn)
    status, evidence = judge_outcome(turn, after, final_text)
    raw_prompt = prompt + "".join(f"\n\nThen: {redact(f)}" for f in turn.followups)
    started = turn.started_at or datetime.now(timezone.utc)
    episode = Episode(
        created_at=started, updated_at=turn.ended_at or started,
        project_id=project.id, project_name=project.name, project_path=project.path, session_id=session_id,
        summary=summarize(turn, prompt, final_text, modified, after),
        intent=Intent(raw_prompt=raw_prompt, extracted=intent_line(prompt),
                      task_type=classify.task_type(prompt, modified, bool(final_text)),
                      domains=classify.domains(prompt, modified + read, turn.commands)),
        context=Context(files_read=read, files_modified=modified,
                        tools=list(dict.fromkeys(c.name for c in turn.all_tool_calls)),
                        commands=[_clip(redact(c), 500) for c in turn.commands[:MAX_COMMANDS]],
                        errors=[ErrorRecord(message=e.message, fingerprint=e.fingerprint, resolved=e.resolved,
                                            resolution=e.resolution) for e in distinct_errors(turn.errors)]),
        outcome=Outcome(status=status, tests_before=[_test_run(r) for r in before],
                        tests_after=[_test_run(r) for r in after], commit=signals.commit_hash(turn.all_tool_calls),
                        verification=(VerificationState.TESTS_PASS if after and after[-1].passed and status == "success"
                                      else VerificationState.UNTESTED),
                        evidence=evidence),
        source=Source(transcript_path=str(transcript_path), record_uuids=turn.record_uuids, origin="transcript"),
    )
    return redact_episode(episode)


# Fields we generate ourselves (ids, timestamps, fingerprints, record uuids): never user text.
OWN_FIELDS = frozenset({"id", "created_at", "updated_at", "project_id", "session_id", "record_uuids", "fingerprint",
                        "last_useful_at", "utility", "verification", "status", "task_type", "origin"})


def redact_episode(episode: Episode) -> Episode:
    """The same episode with every text field redacted."""
    return Episode.model_validate(redact_data(episode.model_dump(mode="json"), skip=OWN_FIELDS))
