"""How a work unit ended, judged from its final evidence without an LLM: its last test run, its last command's
result, its closing words ("All tests pass (1290/1290) and lint is clean"). An error on the way is not the end: a
failed call that a later successful run of the same program (for a shell command) or the same kind of call (an
edit after "String to replace not found"), a later passing test run or a later message reporting success came
after is resolved, and a subagent's errors are the main agent's to act on. Failure or partial only when the
final evidence says so.
"""

from __future__ import annotations

import re

from tempera.core.redact import redact
from tempera.transcripts import signals
from tempera.core.clipping import shorten
from tempera.transcripts.turns import ToolCall, Turn

SIBLING = "Sibling tool call errored"  # a call cancelled because a parallel one failed: not an error of its own
# The agent reporting that its own work or the checks did not succeed, not an explanation of the code's behaviour
# ("we can't detect a dismiss" and "the fallback still fails gracefully" describe the subject, "I couldn't
# reproduce it" and "the build is still failing" the outcome).
_PROBLEM = re.compile(
    r"\bi (?:still )?(?:couldn't|could not|can't|cannot|was unable to|am unable to|wasn't able to|was not able to|"
    r"failed to) (?!find|locate|see)|"
    r"\b(?:tests?|build|lint(?:ing)?|checks?|ci|e2e|typecheck|it) (?:is |are )?still (?:fail\w*|broken|not working)|"
    r"\b[1-9]\d* (?:\w+ )?(?:tests? )?(?:failed|failing)\b(?! tests?)|\bblocked (?:by|on)\b",
    re.I,
)
# The agent reporting that the checks pass: "All tests pass (1290/1290) and lint is clean", "Build succeeds".
_SUCCESS = re.compile(
    r"\ball (?:\d+ )?(?:tests?|checks?|specs?)(?: \w+)? (?:now )?pass(?:es|ed|ing)?\b|"
    r"\b(?:tests?|build|lint|linting|checks?|typecheck|compil\w+) (?:all |now )?(?:(?:is|are) )?"
    r"(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|successful|clean|green)\b|"
    r"\b(\d+)/\1 (?:tests? )?pass(?:es|ed|ing)?\b|(?<!/)\b\d+ (?:tests? )?passed\b|"
    r"\bno (?:lint |type |build )?errors\b|\bsuccessfully (?:updated|fixed|implemented|added|completed|resolved)\b",
    re.I,
)


def _prose(text: str) -> list[str]:
    """Sentences of a message without its code (code quotes errors; it does not report on the work)."""
    text = re.sub(r"```.*?(?:```|\Z)|`[^`\n]*`", " ", text or "", flags=re.S)
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def reported_problem(text: str) -> str | None:
    """The sentence in which the agent says its work or the checks did not succeed."""
    return next((s for s in _prose(text) if _PROBLEM.search(s)), None)


def reported_success(text: str) -> str | None:
    """The sentence in which the agent says the checks pass (None when it also reports a problem)."""
    if reported_problem(text):
        return None
    return next((s for s in _prose(text) if _SUCCESS.search(s)), None)


def said_after(turn: Turn) -> list[tuple[int, str]]:
    """The agent's words in the unit, each with how many of the main agent's tool calls it made before them."""
    ids = {c.id for c in turn.tool_calls}
    out: list[tuple[int, str]] = []
    made = 0
    for r in turn.records:
        if r.type != "assistant":
            continue
        for b in r.blocks:
            if b.kind == "text" and b.text.strip():
                out.append((made, b.text))
            elif b.kind == "tool_use" and b.tool_id in ids:
                made += 1
    return out


def distinct_errors(errors: list[signals.ErrorSeen]) -> list[signals.ErrorSeen]:
    """One entry per fingerprint, the last occurrence deciding whether it ended resolved."""
    last: dict[str, signals.ErrorSeen] = {}
    for err in errors:
        last.pop(err.fingerprint, None)
        last[err.fingerprint] = err
    return list(last.values())


def _kind(call: ToolCall) -> str:
    """What a later call must be to show that a failed one was got past: the same program for a shell command
    (`cd app && FOO=1 bun test | tail` runs bun: a later `docker ps` does not resolve a failed `psql`), any edit
    for an edit ("String to replace not found", then the edit made), else the same tool."""
    command = signals.shell_command(call)
    if command is not None:
        parts = [p.strip() for p in re.split(r"&&|\|\||;", command) if p.strip() and not p.strip().startswith("cd ")]
        words = [w for w in (parts[0] if parts else command).split("|")[0].split() if "=" not in w]
        return "shell:" + (words[0].rsplit("/", 1)[-1] if words else "")
    return "edit" if call.name in signals.MODIFY_TOOLS else call.name


def open_errors(turn: Turn) -> list[signals.ErrorSeen]:
    """The main agent's errors that nothing later in the unit resolved (distinct, in order)."""
    calls = turn.tool_calls
    ids = {c.id for c in calls}
    # a passing test run's call, or the calls made before a message reporting success: an error at a call before
    # either is got past (each message read once, not once per error)
    good = [r.position for r in turn.test_runs if r.passed]
    good += [made for made, text in said_after(turn) if reported_success(redact(text))]

    def later_success(err: signals.ErrorSeen) -> bool:
        kind = _kind(calls[err.position])
        for call in calls[err.position + 1 :]:
            if call.result is not None and not call.is_error and not call.rejected and _kind(call) == kind:
                return True
        return any(p > err.position for p in good)

    return [
        e
        for e in distinct_errors(turn.errors)
        if e.call_id in ids and not e.resolved and not e.message.startswith(SIBLING) and not later_success(e)
    ]


def judge_outcome(
    turn: Turn, after: list[signals.TestRunSeen], closing: str, unresolved: list[signals.ErrorSeen]
) -> tuple[str, list[str]]:
    """success / partial / failure / unknown, and the observations that decided it. `after` are the test runs
    after the last edit; `closing` is the unit's concluding message (redacted); `unresolved` its `open_errors`."""
    if not turn.has_agent_work:
        return "unknown", ["no agent response in this turn"] + (["interrupted by the user"] if turn.interrupted else [])
    evidence: list[str] = []
    problem = reported_problem(closing)
    success = reported_success(closing)
    if turn.interrupted:
        evidence.append("interrupted by the user")
    if turn.rejections:
        evidence.append(f"user rejected {len(turn.rejections)} tool call(s)")
    if problem:
        evidence.append(f"agent reported a problem: {shorten(problem, 160)}")
    if unresolved:
        evidence.append(f"{len(unresolved)} unresolved error(s): {shorten(unresolved[-1].message, 120)}")
    if after:
        last = after[-1]
        state = "passed" if last.passed else "failing"
        evidence.insert(
            0,
            f"tests {state} at the end: `{shorten(redact(last.command), 80)}`"
            + (f" ({last.summary})" if last.summary else ""),
        )
        if not last.passed:
            return "failure", evidence
        return ("partial" if turn.interrupted else "success"), evidence
    if success:
        evidence.insert(0, f"agent reported success: {shorten(success, 160)}")
        return ("partial" if turn.interrupted else "success"), evidence
    if turn.interrupted or problem or unresolved:
        return "partial", evidence
    if turn.rejections and not turn.files_modified:
        return "unknown", evidence  # the user refused what the agent proposed: neither done nor failed
    if turn.files_modified:
        return "success", [f"modified {len(turn.files_modified)} file(s) with no unresolved error"]
    commit = signals.commit_hash(turn.all_tool_calls)
    if commit:
        return "success", [f"made commit {commit} with no unresolved error"]
    if closing:
        return "success", ["answered without errors"]
    return "unknown", ["no final answer"]
